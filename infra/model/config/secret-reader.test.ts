// The secret config keys through parseFleetConfig: missing, of the wrong shape, stored in plain text,
// placeholders, registry and etcd snapshot credentials (secret-reader.ts).
import { inspect } from "node:util";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import {
  alphaToken,
  baseline,
  betaToken,
  expectRejected,
  messageAt,
  pathsOf,
  problemsOf,
  s3Keys,
  toInput,
  withSecrets,
  type BadInput,
  type RawFleet,
} from "../../../tests/support/fleet-config-fixtures";
import { hcloudTokenProblem, objectStorageKeyProblem, pemCertificateProblem } from "./secret-reader";
import { configKeys } from "./stack-config";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { type HetznerManagement } from "../management/validate-management";

/** Tenant tokens and the management token: missing, malformed, for no tenant, stored in plain text. */
const badInputs: BadInput[] = [
  ["missing tenant token", (r) => delete r.tenantHcloudTokens.beta, "tenantHcloudTokens.beta", "every tenant needs the token of its own Hetzner project"],
  ["token for a tenant that does not exist", (r) => (r.tenantHcloudTokens.alpah = alphaToken), "tenantHcloudTokens.alpah", 'did you mean "alpha"'],
  ["malformed tenant token", (r) => (r.tenantHcloudTokens.alpha = "abc"), "tenantHcloudTokens.alpha", "expected 64 letters and digits"],
  ["tenant tokens stored in plain text", (r) => r.plainKeys.push("capi-fleet:tenantHcloudTokens"), "tenantHcloudTokens", "pulumi config set --secret"],
  ["management token stored in plain text", (r) => r.plainKeys.push("hcloud:token"), "hcloud:token", "stored in plain text"],
];

describe("parseFleetConfig", () => {
  it.each(badInputs)("rejects %s", (_description, mutate, path, allowed) => {
    expectRejected(mutate, path, allowed);
  });

  it("accepts committed placeholders in previews and refuses them for pulumi up", () => {
    const raw = baseline();
    raw.hcloudToken = "placeholder".padEnd(64, "0");
    expect(parseFleetConfig(toInput(raw, true)).placeholderSecrets).toEqual(["hcloud:token"]);
    const { problems } = problemsOf(toInput(raw, false));
    expect(problems).toEqual([expect.objectContaining({ path: "hcloud:token", message: expect.stringContaining("placeholder") })]);
  });

  it("keeps secrets out of JSON and string renderings of the config", () => {
    const config = parseFleetConfig(toInput(baseline()));
    const rendered = JSON.stringify(config) + String(config.tenants[0]!.hcloudToken) + inspect(config, { depth: 10 });
    expect(rendered).not.toContain(alphaToken);
    expect(rendered).toContain("[secret]");
  });
});

describe("parseFleetConfig: errors name the key path, the value and what is allowed", () => {
  it("names how to set an empty required secret instead of calling it malformed", () => {
    const raw = baseline();
    raw.hcloudToken = "";
    expect(messageAt(toInput(raw), "hcloud:token")).toContain(`--secret ${configKeys.hcloudToken} `);
  });

  it("refuses tenant tokens that are not a mapping, and an empty token", () => {
    const raw = baseline();
    raw.tenantHcloudTokens = [alphaToken, betaToken] as never;
    expect(pathsOf(toInput(raw))).toEqual(["tenantHcloudTokens", "tenantHcloudTokens.alpha", "tenantHcloudTokens.beta"]);
    const empty = baseline();
    empty.tenantHcloudTokens.alpha = "";
    expect(pathsOf(toInput(empty))).toEqual(["tenantHcloudTokens.alpha"]);
    // Empty is unset, not malformed: the message says how to set it.
    expect(messageAt(toInput(empty), "tenantHcloudTokens.alpha")).toContain("--secret --path 'tenantHcloudTokens.alpha'");
  });

  it("says there are no tenants when a token names one in a fleet without tenants", () => {
    const raw = baseline();
    raw.tenants = [];
    raw.tenantHcloudTokens = { alpha: alphaToken };
    const message = messageAt(toInput(raw), "tenantHcloudTokens.alpha");
    expect(message).toContain("(none)");
    expect(message).not.toContain("did you mean");
  });

  it("recognises placeholders in any case and gives the --path form of the command for a nested secret", () => {
    const raw = baseline();
    raw.tenantHcloudTokens.alpha = "PlaceHolder".padEnd(64, "0");
    expect(parseFleetConfig(toInput(raw, true)).placeholderSecrets).toEqual(["tenantHcloudTokens.alpha"]);
    expect(messageAt(toInput(raw, false), "tenantHcloudTokens.alpha")).toContain("--path 'tenantHcloudTokens.alpha'");
    const top = baseline();
    top.hcloudToken = "placeholder".padEnd(64, "0");
    expect(messageAt(toInput(top, false), "hcloud:token")).not.toContain("--path");
  });

  it.each([
    ["objectStorageKeyProblem", objectStorageKeyProblem, 16, 128, "!"],
    ["hcloudTokenProblem", hcloudTokenProblem, 64, 64, "A"],
  ] as const)("%s accepts exactly the lengths it names", (_name, check, min, max, char) => {
    expect(check(char.repeat(min))).toBeUndefined();
    expect(check(char.repeat(max))).toBeUndefined();
    expect(check(char.repeat(min - 1))).toContain(`got ${min - 1} characters`);
    expect(check(char.repeat(max + 1))).toContain(`got ${max + 1} characters`);
  });

  it("refuses Object Storage keys with spaces or outside printable ASCII", () => {
    expect(objectStorageKeyProblem(`${"a".repeat(10)} ${"a".repeat(10)}`)).toBeDefined();
    expect(objectStorageKeyProblem(`${"a".repeat(20)}\u00e9`)).toBeDefined();
    expect(objectStorageKeyProblem("~".repeat(20))).toBeUndefined();
  });

  it("reads the etcd snapshot credentials when backups are on, and checks them", () => {
    const raw = baseline();
    raw.management.backups = { bucket: "fleet-etcd" };
    const config = parseFleetConfig(withSecrets(raw, { "capi-fleet:etcdS3Credentials": JSON.stringify(s3Keys) }));
    const management = config.management as HetznerManagement;
    expect(management.etcdS3Credentials?.accessKey.reveal()).toBe(s3Keys.accessKey);
    expect(management.etcdS3Credentials?.secretKey.reveal()).toBe(s3Keys.secretKey);

    const problemsWith = (credentials: unknown) => pathsOf(withSecrets(raw, { "capi-fleet:etcdS3Credentials": JSON.stringify(credentials) }));
    expect(problemsWith({ accessKey: s3Keys.accessKey })).toEqual(["etcdS3Credentials.secretKey"]);
    expect(problemsWith({ ...s3Keys, secretKey: "" })).toEqual(["etcdS3Credentials.secretKey"]);
    // Empty is unset, not malformed: the message says how to set it.
    const empty = withSecrets(raw, { "capi-fleet:etcdS3Credentials": JSON.stringify({ ...s3Keys, secretKey: "" }) });
    expect(messageAt(empty, "etcdS3Credentials.secretKey")).toContain("--secret --path 'etcdS3Credentials.secretKey'");
    expect(problemsWith({ ...s3Keys, accessKey: "short" })).toEqual(["etcdS3Credentials.accessKey"]);
    expect(problemsWith(["a", "b"])).toEqual(["etcdS3Credentials", "etcdS3Credentials.accessKey", "etcdS3Credentials.secretKey"]);
    expect(pathsOf(toInput(raw))).toEqual(["etcdS3Credentials.accessKey", "etcdS3Credentials.secretKey"]);
    const misspelt = withSecrets(raw, { "capi-fleet:etcdS3Credentials": JSON.stringify({ ...s3Keys, secretKy: "x" }) });
    expect(pathsOf(misspelt)).toEqual(["etcdS3Credentials.secretKy"]);
    expect(messageAt(misspelt, "etcdS3Credentials.secretKy")).toContain('"secretKey"');
  });
});

describe("parseFleetConfig: registry credentials", () => {
  const pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2==\n-----END CERTIFICATE-----";
  const credentialsKey = "capi-fleet:tenantRegistryCredentials";
  /** alpha pulls from one registry with the credentials "harbor". */
  function withRegistry(): RawFleet {
    const raw = baseline();
    raw.tenants[0]!.imageRegistries = [{ url: "https://harbor.example.com", credentials: "harbor" }];
    return raw;
  }
  const input = (raw: RawFleet, credentials: unknown) => withSecrets(raw, { [credentialsKey]: JSON.stringify(credentials) });

  it("reads username, password and the optional CA as secrets of the tenant", () => {
    const harbor = { username: "robot", password: "secret-password" };
    const withCa = parseFleetConfig(input(withRegistry(), { alpha: { harbor: { ...harbor, caCrt: pem } } }));
    const read = withCa.tenants[0]!.registryCredentials.get("harbor")!;
    expect([read.username.reveal(), read.password.reveal(), read.caCrt?.reveal()]).toEqual([harbor.username, harbor.password, pem]);
    const withoutCa = parseFleetConfig(input(withRegistry(), { alpha: { harbor } }));
    expect(Object.keys(withoutCa.tenants[0]!.registryCredentials.get("harbor")!).sort()).toEqual(["password", "username"]);
    expect(withoutCa.tenants[1]!.registryCredentials.size).toBe(0);
  });

  it("refuses credentials that are not mappings, at the level that is not", () => {
    expect(pathsOf(input(withRegistry(), ["robot"]))).toEqual(["tenantRegistryCredentials", "tenantRegistryCredentials.alpha.harbor"]);
    expect(pathsOf(input(withRegistry(), { alpha: "robot" }))).toEqual(["tenantRegistryCredentials.alpha", "tenantRegistryCredentials.alpha.harbor"]);
  });

  it("names the credentials a tenant uses when others are given, and says when it uses none", () => {
    const harbor = { username: "robot", password: "secret-password" };
    const extra = input(withRegistry(), { alpha: { harbor, quay: harbor }, beta: { quay: harbor } });
    expect(pathsOf(extra)).toEqual(["tenantRegistryCredentials.alpha.quay", "tenantRegistryCredentials.beta.quay"]);
    expect(messageAt(extra, "tenantRegistryCredentials.alpha.quay")).toContain("harbor");
    expect(messageAt(extra, "tenantRegistryCredentials.beta.quay")).not.toContain("(used:");
    // A tenant that uses none gets the same message, less the list.
    expect(messageAt(extra, "tenantRegistryCredentials.beta.quay")).toBe(
      messageAt(extra, "tenantRegistryCredentials.alpha.quay").replace(" (used: harbor)", "").replaceAll("alpha", "beta"),
    );
  });

  it("says there are no tenants, and suggests nothing far from a tenant name", () => {
    const none = baseline();
    none.tenants = [];
    none.tenantHcloudTokens = {};
    expect(messageAt(input(none, { alpha: {} }), "tenantRegistryCredentials.alpha")).toContain("(none)");
    const far = messageAt(input(baseline(), { zzzzzzzz: {} }), "tenantRegistryCredentials.zzzzzzzz");
    expect(far).toContain("alpha, beta");
    expect(far).not.toContain("did you mean");
  });

  it("lists the allowed credentials fields for an unknown one without a close match", () => {
    const found = input(withRegistry(), { alpha: { harbor: { username: "robot", password: "secret-password", zzzzzzzz: "x" } } });
    expect(pathsOf(found)).toEqual(["tenantRegistryCredentials.alpha.harbor.zzzzzzzz"]);
    expect(messageAt(found, "tenantRegistryCredentials.alpha.harbor.zzzzzzzz")).not.toContain("did you mean");
  });

  it("checks the CA as a PEM certificate, surrounding whitespace allowed", () => {
    expect(pemCertificateProblem(`\n${pem}\n\n`)).toBeUndefined();
    for (const text of [pem.replace("-----END CERTIFICATE-----", ""), pem.replace("BEGIN", "BEGIN X"), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----", `x${pem}`]) {
      expect(pemCertificateProblem(text), text).toBeDefined();
    }
  });
});

describe("parseFleetConfig: secrets of the wrong shape or stored in plain text", () => {
  it("reports a secret stored in plain text even when the schema already refuses the config", () => {
    const raw = baseline();
    raw.management.location = "fsn2";
    raw.plainKeys.push("hcloud:token");
    const { problems } = problemsOf(toInput(raw));
    expect(problems.map((problem) => problem.path)).toEqual(expect.arrayContaining(["management.location", "hcloud:token"]));
    expect(messageAt(toInput(raw), "hcloud:token")).toContain(`--secret ${configKeys.hcloudToken} `);
  });

  it.each([
    ["null", null],
    ["a string", "abc"],
    ["a number", 7],
  ])("refuses tenant tokens given as %s, naming the expected mapping", (_kind, value) => {
    const raw = baseline();
    raw.tenantHcloudTokens = value as never;
    const input = toInput(raw);
    expect(pathsOf(input)).toEqual(["tenantHcloudTokens", "tenantHcloudTokens.alpha", "tenantHcloudTokens.beta"]);
    expect(messageAt(input, "tenantHcloudTokens")).toMatch(/mapping of tenant name to token/);
  });

  it("reports only the missing tenants' tokens when the mapping is not set at all", () => {
    const raw = baseline();
    raw.tenantHcloudTokens = undefined as never;
    expect(pathsOf(toInput(raw))).toEqual(["tenantHcloudTokens.alpha", "tenantHcloudTokens.beta"]);
  });

  it.each([
    ["null", null],
    ["a string", "AAAAAAAAAAAAAAAAAAAA"],
  ])("refuses etcd snapshot credentials given as %s, naming both fields", (_kind, value) => {
    const raw = baseline();
    raw.management.backups = { bucket: "fleet-etcd" };
    const input = withSecrets(raw, { "capi-fleet:etcdS3Credentials": JSON.stringify(value) });
    expect(pathsOf(input)).toEqual(["etcdS3Credentials", "etcdS3Credentials.accessKey", "etcdS3Credentials.secretKey"]);
    const message = messageAt(input, "etcdS3Credentials");
    for (const field of ["accessKey", "secretKey"]) expect(message).toContain(field);
  });

  it.each([
    ["null", null],
    ["a list", ["robot"]],
  ])("refuses registry credentials given as %s at either level, naming the expected shape", (_kind, value) => {
    const raw = baseline();
    raw.tenants[0]!.imageRegistries = [{ url: "https://harbor.example.com", credentials: "harbor" }];
    const credentialsKey = "capi-fleet:tenantRegistryCredentials";
    const top = withSecrets(raw, { [credentialsKey]: JSON.stringify(value) });
    expect(pathsOf(top)).toEqual(["tenantRegistryCredentials", "tenantRegistryCredentials.alpha.harbor"]);
    const perTenant = withSecrets(raw, { [credentialsKey]: JSON.stringify({ alpha: value }) });
    expect(pathsOf(perTenant)).toEqual(["tenantRegistryCredentials.alpha", "tenantRegistryCredentials.alpha.harbor"]);
    for (const message of [messageAt(top, "tenantRegistryCredentials"), messageAt(perTenant, "tenantRegistryCredentials.alpha")]) {
      for (const field of ["username", "password", "caCrt"]) expect(message).toContain(field);
    }
  });

  it.each([
    ["an empty username", { username: "", password: "secret-password" }],
    ["no username", { password: "secret-password" }],
  ])("refuses registry credentials with %s", (_kind, harbor) => {
    const raw = baseline();
    raw.tenants[0]!.imageRegistries = [{ url: "https://harbor.example.com", credentials: "harbor" }];
    const input = withSecrets(raw, { "capi-fleet:tenantRegistryCredentials": JSON.stringify({ alpha: { harbor } }) });
    expect(pathsOf(input)).toEqual(["tenantRegistryCredentials.alpha.harbor.username"]);
  });

  it("accepts a real multi-line PEM certificate as a registry CA, and refuses text after its END line", async () => {
    const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: "01",
      name: "CN=registry CA",
      notBefore: new Date(),
      notAfter: new Date(Date.now() + 86_400_000),
      keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    });
    const pem = certificate.toString("pem");
    expect(pem.trim().split("\n").length).toBeGreaterThan(3);
    expect(pemCertificateProblem(pem)).toBeUndefined();
    // Saved on Windows: Go's PEM decoder, which containerd and the kubelet read it with, takes CRLF lines
    // (go1.26: src/encoding/pem/pem.go, getLine).
    expect(pemCertificateProblem(pem.replaceAll("\n", "\r\n"))).toBeUndefined();
    for (const text of [`${pem}\nnot a certificate`, `${pem.trim()} trailing`, pem.trim().slice(0, -1)]) {
      expect(pemCertificateProblem(text), text).toBeDefined();
    }
  });
});
