// The entry itself: unknown keys and their suggestions, the error's format and the wording of schema
// issues, formatPath, the committed stacks. Each concern's rules are tested beside its code:
// config/secret-reader.test.ts, config/hcloud-names.test.ts, management/validate-management.test.ts,
// tenant/validate-tenants.test.ts (all through parseFleetConfig, from the builders in fleet-config-fixtures.ts).
import { describe, expect, it } from "vitest";
import { readStackConfig } from "../../../tests/support/stack-files";
import { catalog } from "../versions/catalog";
import { fleetConfigSchema, k3sClusterNetworks } from "../config/fleet-config";
import {
  alphaToken,
  baseline,
  expectRejected,
  messageAt,
  objectStorage,
  pool0,
  problemsOf,
  s3Keys,
  toInput,
  withoutObjectStorage,
  withSecrets,
  type BadInput,
  type RawFleet,
} from "../../../tests/support/fleet-config-fixtures";
import { configKeys, FleetConfigError, projectName, type StackConfigInput } from "../config/stack-config";
import { formatPath, parseFleetConfig } from "./validate-fleet-config";

/** Unknown keys (with the close name suggested) and the gitops settings, which only the schema checks. */
const badInputs: BadInput[] = [
  ["typo in a top-level key", (r) => (r.extraKeys["capi-fleet:tenant"] = "[]"), "tenant", 'did you mean "tenants"'],
  ["typo in a management key", (r) => (r.management.serverTyp = "cx33"), "management.serverTyp", 'did you mean "serverType"'],
  ["typo in a tenant key", (r) => (r.tenants[0]!.kubernetesVerison = "v1.34.6"), "tenants[0].kubernetesVerison", 'did you mean "kubernetesVersion"'],
  ["typo in controlPlane", (r) => ((r.tenants[0]!.controlPlane as Record<string, unknown>).replica = 3), "tenants[0].controlPlane.replica", "allowed keys: replicas, machineType"],
  ["typo in a worker pool", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.failureDomian = "fsn1"), "tenants[0].workers[0].failureDomian", 'did you mean "failureDomain"'],
  ["typo in autoscaling", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: 1, maxsize: 3 }; }, "tenants[0].workers[0].autoscaling.maxsize", "allowed keys: provider, minSize, maxSize"],
  ["readiness wait misspelt", (r) => (r.tenants[0]!.waitForReadiness = false), "tenants[0].waitForReadiness", 'did you mean "waitForReady"'],
  ["scp-style Git URL", (r) => (r.gitops = { url: "git@github.com:org/fleet.git" }), "gitops.url", "use ssh://git@github.com/org/fleet.git"],
  ["plain-HTTP Git URL", (r) => (r.gitops = { url: "http://git.example.com/fleet.git" }), "gitops.url", "allowed: https://… or ssh://…"],
  ["GitOps path escaping the repo", (r) => (r.gitops = { url: "https://git.example.com/fleet.git", paths: { tenants: "../other" } }), "gitops.paths.tenants", "a relative path"],
];

describe("parseFleetConfig", () => {
  it("accepts the baseline and fills in defaults", () => {
    const config = parseFleetConfig(toInput(baseline()));
    expect(config.management).toMatchObject({
      mode: "hetzner",
      k3sVersion: catalog.k3s.version,
      image: catalog.managementImage,
      deletionProtection: true,
      apiLoadBalancerType: "lb11",
      network: { cidr: "10.0.0.0/16", subnetCidr: "10.0.1.0/24" },
    });
    expect(config.tenants[0]).toMatchObject({
      namespace: "alpha",
      loadBalancerGarbageCollection: true,
      waitForReady: true,
      cni: { provider: "cilium", strategy: "HelmAddon", kubeProxyReplacement: false },
      network: { podsCidr: "192.168.0.0/16", servicesCidr: "10.128.0.0/12" },
    });
    expect(config.tenants[0]!.hcloudToken.reveal()).toBe(alphaToken);
  });

  it.each(badInputs)("rejects %s", (_description, mutate, path, allowed) => {
    expectRejected(mutate, path, allowed);
  });

  it("reports every problem at once", () => {
    const raw = baseline();
    raw.management.location = "fsn2";
    raw.tenants[0]!.kubernetesVersion = "v1.20.0";
    raw.tenants[1]!.name = "Beta";
    const { problems } = problemsOf(toInput(raw));
    expect(problems.map((problem) => problem.path)).toEqual(
      expect.arrayContaining(["management.location", "tenants[0].kubernetesVersion", "tenants[1].name"]),
    );
  });

  it.each(["dev", "prod"])("accepts the committed %s stack", (stack) => {
    const { values, secretKeys } = readStackConfig(stack);
    const config = parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: false });
    expect(config.tenants.length).toBeGreaterThan(0);
    // No warnings: prod's autoscaled pool gets its autoscaler on the management cluster (components/cluster-autoscaler).
    expect(config.warnings).toEqual([]);
  });
});

describe("parseFleetConfig: errors name the key path, the value and what is allowed", () => {
  it("counts the problems in the error and names the class", () => {
    const one = baseline();
    one.management.location = "fsn2";
    const single = problemsOf(toInput(one));
    expect(single.problems).toHaveLength(1);
    expect(single.error!.message).toMatch(/, 1 problem:\n/);
    const two = baseline();
    two.management.location = "fsn2";
    two.tenants[0]!.name = "Alpha";
    const double = problemsOf(toInput(two));
    expect(double.error!.message).toMatch(new RegExp(`, ${double.problems.length} problems:\n`));
    expect(double.problems.length).toBeGreaterThan(1);
    // One line naming the stack file, one per problem, one saying how to fix it.
    const lines = double.error!.message.split("\n");
    expect(lines).toHaveLength(double.problems.length + 2);
    expect(lines[0]).toContain("stacks/Pulumi.test.yaml");
    expect(lines.at(-1)).toContain("pulumi config set");
    expect(double.error!.name).toBe(FleetConfigError.name);
    expect(double.error!.stackName).toBe("test");
  });

  it("names the allowed top-level keys for an unknown one, and ignores other namespaces' keys", () => {
    const allowedKeys = Object.values(configKeys)
      .filter((key) => key.startsWith(`${projectName}:`))
      .map((key) => key.slice(projectName.length + 1));
    const raw = baseline();
    raw.extraKeys["capi-fleet:zzzzzzzzzzzz"] = "1";
    raw.extraKeys["aws:region"] = "eu-central-1";
    raw.extraKeys["hcloud:endpoint"] = "https://api.hetzner.cloud/v1";
    const { problems } = problemsOf(toInput(raw));
    expect(problems.map((problem) => problem.path)).toEqual(["zzzzzzzzzzzz"]);
    expect(problems[0]!.message).toContain(allowedKeys.join(", "));
    // Nothing is close enough to suggest.
    expect(problems[0]!.message).not.toContain("did you mean");
  });

  it("lists a strict object's allowed keys, from the schema, for an unknown key with no close match", () => {
    const raw = baseline();
    raw.gitops = { url: "https://git.example.com/fleet.git", zzzzzzzz: 1 };
    const message = messageAt(toInput(raw), "gitops.zzzzzzzz");
    const gitopsShape = (fleetConfigSchema.shape.gitops.unwrap() as unknown as { shape: object }).shape;
    expect(message).toContain(Object.keys(gitopsShape).join(", "));
    expect(message).not.toContain("did you mean");
  });

  it("treats a value that is not JSON as the raw string the user wrote", () => {
    const raw = baseline();
    const input = toInput(raw);
    const { problems } = problemsOf({ ...input, values: { ...input.values, "capi-fleet:management": "hetzner" } });
    expect(problems).toEqual([{ path: "management", message: expect.stringContaining('"hetzner"') }]);
  });

  it("echoes a scalar that is too small or too big, and the too-small mapping of a list without echoing it", () => {
    const raw = baseline();
    pool0(raw).replicas = 101;
    raw.tenants[1]!.sshKeyName = "";
    raw.management.adminCidrs = [];
    raw.gitops = { url: "https://git.example.com/fleet.git", branch: "a b" };
    const input = toInput(raw);
    expect(messageAt(input, "tenants[0].workers[0].replicas")).toMatch(/^101 /);
    expect(messageAt(input, "tenants[1].sshKeyName")).toMatch(/^"" /);
    expect(messageAt(input, "gitops.branch")).toMatch(/^"a b" /);
    expect(messageAt(input, "management.adminCidrs")).not.toContain("[]");
  });

  it("marks a missing required value as required, and a wrong type with the value given", () => {
    const raw = baseline();
    delete raw.tenants[0]!.regions;
    raw.tenants[1]!.regions = "fsn1";
    const input = toInput(raw);
    expect(messageAt(input, "tenants[0].regions")).toMatch(/^is required/);
    expect(messageAt(input, "tenants[1].regions")).toContain('"fsn1"');
  });
});

describe("formatPath", () => {
  it("writes paths as pulumi config set --path takes them", () => {
    expect(formatPath(["tenants", 0, "annotations", "example.com/key"])).toBe('tenants[0].annotations["example.com/key"]');
    expect(formatPath(["management", "network", "cidr"])).toBe("management.network.cidr");
    expect(formatPath(["a-b", "_c", "$d"])).toBe("a-b._c.$d");
    expect(formatPath(["0x", "x y"])).toBe('["0x"]["x y"]');
  });
});

describe("parseFleetConfig: unknown names get a suggestion when one is close, and the allowed list always", () => {
  const withBackups = (credentials: unknown) => {
    const raw = baseline();
    raw.management.backups = { bucket: "fleet-etcd" };
    return withSecrets(raw, { [configKeys.etcdS3Credentials]: JSON.stringify(credentials) });
  };
  const withRegistryCredentials = (credentials: unknown) => {
    const raw = baseline();
    raw.tenants[0]!.imageRegistries = [{ url: "https://harbor.example.com", credentials: "harbor" }];
    return withSecrets(raw, { [configKeys.tenantRegistryCredentials]: JSON.stringify(credentials) });
  };
  const harbor = { username: "robot", password: "secret-password" };
  const registryFields = ["username", "password", "caCrt"];
  const bareKeys = Object.values(configKeys)
    .filter((key) => key.startsWith(`${projectName}:`))
    .map((key) => key.slice(projectName.length + 1));

  /** [where, input with the unknown name, its problem path, a close name, what it suggests, the list's label, the allowed names]. */
  const cases: [string, (name: string) => StackConfigInput, (name: string) => string, string, string, string, readonly string[]][] = [
    ["a top-level config key", (name) => { const raw = baseline(); raw.extraKeys[`${projectName}:${name}`] = "1"; return toInput(raw); }, (name) => name, "tenant", "tenants", "allowed keys", bareKeys],
    ["an etcd snapshot credentials field", (name) => withBackups({ ...s3Keys, [name]: "x" }), (name) => `etcdS3Credentials.${name}`, "secretKy", "secretKey", "allowed keys", ["accessKey", "secretKey"]],
    ["a tenant token", (name) => { const raw = baseline(); raw.tenantHcloudTokens[name] = alphaToken; return toInput(raw); }, (name) => `tenantHcloudTokens.${name}`, "alpah", "alpha", "tenants", ["alpha", "beta"]],
    ["a tenant of the registry credentials", (name) => withRegistryCredentials({ alpha: { harbor }, [name]: {} }), (name) => `tenantRegistryCredentials.${name}`, "alpah", "alpha", "tenants", ["alpha", "beta"]],
    ["a registry credentials field", (name) => withRegistryCredentials({ alpha: { harbor: { ...harbor, [name]: "x" } } }), (name) => `tenantRegistryCredentials.alpha.harbor.${name}`, "usernme", "username", "allowed keys", registryFields],
  ];

  it.each(cases)("%s", (_where, inputWith, pathOf, close, suggestion, label, allowed) => {
    const far = "zzzzzzzz";
    const closeMessage = messageAt(inputWith(close), pathOf(close));
    const farMessage = messageAt(inputWith(far), pathOf(far));
    expect(closeMessage).toContain(`did you mean "${suggestion}"`);
    // Without a close name the message is the same, less the suggestion.
    expect(farMessage).toBe(closeMessage.replace(`; did you mean "${suggestion}"?`, "").replaceAll(`"${close}"`, `"${far}"`));
    const listed = new RegExp(`${label}: ([^;]+)$`).exec(farMessage)?.[1];
    expect(listed?.split(", ")).toEqual(allowed);
  });
});

describe("parseFleetConfig: messages list the allowed values one by one", () => {
  /** [what, mutation, path, the list in the message, its separator, the allowed values]. */
  const cases: [string, (raw: RawFleet) => void, string, RegExp, string, readonly string[]][] = [
    ["failure domain outside two regions", (r) => { r.tenants[0]!.regions = ["fsn1", "nbg1"]; pool0(r).failureDomain = "hel1"; }, "tenants[0].workers[0].failureDomain", /allowed: (.+)$/, ", ", ["fsn1", "nbg1"]],
    ["backups without an Object Storage location", (r) => { r.management.location = withoutObjectStorage; r.management.backups = { bucket: "fleet-etcd" }; }, "management.backups.location", /allowed: (.+)$/, ", ", objectStorage],
    ["management network over a k3s range", (r) => (r.management.network = { cidr: "10.40.0.0/13", subnetCidr: "10.40.1.0/24" }), "management.network.cidr", /outside (.+)$/, " and ", Object.values(k3sClusterNetworks)],
    ["admin access from every address of both families", (r) => (r.management.adminCidrs = ["0.0.0.0/0", "::/0"]), "management.adminCidrs", /to every (.+) address;/, " and ", ["IPv4", "IPv6"]],
    ["registry credentials a tenant does not use", (r) => { r.tenants[0]!.imageRegistries = [{ url: "https://a.example.com", credentials: "a" }, { url: "https://b.example.com", credentials: "b" }]; }, "tenantRegistryCredentials.alpha.c", /\(used: (.+)\)$/, ", ", ["a", "b"]],
  ];

  it.each(cases)("%s", (_what, mutate, path, list, separator, allowed) => {
    const raw = baseline();
    mutate(raw);
    const harbor = { username: "robot", password: "secret-password" };
    const input = withSecrets(raw, {
      [configKeys.etcdS3Credentials]: JSON.stringify(s3Keys),
      [configKeys.tenantRegistryCredentials]: JSON.stringify({ alpha: { a: harbor, b: harbor, c: harbor } }),
    });
    const message = messageAt(input, path);
    expect(list.exec(message)?.[1]?.split(separator), message).toEqual(allowed);
  });
});
