import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import { describeConstraints, intersectRanges, managementKubernetesConstraints } from "../versions/compatibility";
import { cronDescriptors } from "./cron";
import { allowedKeysFromMessage, fleetConfigSchema, overlappingRange, sshKeyTypes, sshPublicKeyProblem } from "./fleet-config";
import { describeRange } from "../versions/kubernetes-version";
import { formatPath } from "../stack/validate-fleet-config";
import { hetznerLocations } from "../facts/hetzner";

// The field-level checks of the stack config schema, on the schema itself: each case changes one
// field of a valid fleet and expects a problem at that field's key path (or none). The allowed
// values come from their sources (the catalog, the schema, the upstream rule cited).

type Fleet = { management: Record<string, unknown>; tenants: Record<string, unknown>[]; gitops?: Record<string, unknown>; mirrors?: Record<string, unknown> };

function validFleet(): Fleet {
  return {
    management: { mode: "hetzner", location: "fsn1", serverType: "cx33", servers: 3, adminCidrs: ["203.0.113.0/24"], sshPublicKey: sshKey("ed25519") },
    tenants: [
      {
        name: "alpha",
        kubernetesVersion: catalog.tenantKubernetesVersions[0],
        regions: ["fsn1"],
        controlPlane: { replicas: 3, machineType: "cx33" },
        workers: [{ name: "md-0", replicas: 2, machineType: "cx23", failureDomain: "fsn1" }],
      },
    ],
  };
}

/** Problems by key path after `change`; [] when the schema accepts the fleet. */
interface Parts {
  fleet: Fleet;
  management: Record<string, unknown>;
  tenant: Record<string, unknown>;
  pool: Record<string, unknown>;
}

function problems(change: (parts: Parts) => void): Map<string, string> {
  const fleet = validFleet();
  const tenant = fleet.tenants[0]!;
  change({ fleet, management: fleet.management, tenant, pool: (tenant.workers as Record<string, unknown>[])[0]! });
  const parsed = fleetConfigSchema.safeParse(fleet, { reportInput: true });
  const found = new Map<string, string>();
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    const path = formatPath(issue.code === "unrecognized_keys" ? [...issue.path, ...issue.keys] : issue.path);
    // A record key's own issues (annotation keys) are nested in an invalid_key issue.
    const messages = issue.code === "invalid_key" ? issue.issues.map((inner) => inner.message) : [issue.message];
    found.set(path, [found.get(path), ...messages].filter(Boolean).join("\n"));
  }
  return found;
}

const pathsOf = (change: Parameters<typeof problems>[0]) => [...problems(change).keys()];

/** The OpenSSH wire encoding of a length-prefixed string (RFC 4251 section 5). */
function sshString(bytes: Buffer | string): Buffer {
  const body = Buffer.from(bytes);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** An `mpint` (RFC 4251 section 5): big-endian, with a leading zero when the top bit is set. */
function sshMpint(bytes: Buffer): Buffer {
  return sshString((bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/**
 * A fresh public key in the OpenSSH format `<type> <base64 blob> <comment>`: ssh-ed25519 (RFC 8709
 * section 4), ecdsa-sha2-nistp* (RFC 5656 section 3.1), ssh-rsa (RFC 4253 section 6.6).
 */
function sshKey(kind: "ed25519" | "p256" | "p384" | "p521" | "rsa"): string {
  const b64 = (text: string) => Buffer.from(text, "base64url");
  let type: string;
  let blob: Buffer;
  if (kind === "ed25519") {
    const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
    type = "ssh-ed25519";
    blob = Buffer.concat([sshString(type), sshString(b64(jwk.x!))]);
  } else if (kind === "rsa") {
    const jwk = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
    type = "ssh-rsa";
    blob = Buffer.concat([sshString(type), sshMpint(b64(jwk.e!)), sshMpint(b64(jwk.n!))]);
  } else {
    const curve = `nist${kind}`;
    const jwk = generateKeyPairSync("ec", { namedCurve: { p256: "P-256", p384: "P-384", p521: "P-521" }[kind] }).publicKey.export({ format: "jwk" });
    type = `ecdsa-sha2-${curve}`;
    blob = Buffer.concat([sshString(type), sshString(curve), sshString(Buffer.concat([Buffer.from([4]), b64(jwk.x!), b64(jwk.y!)]))]);
  }
  return `${type} ${blob.toString("base64")} someone@example`;
}

describe("sshPublicKeyProblem", () => {
  const kinds = ["ed25519", "p256", "p384", "p521", "rsa"] as const;

  it.each(kinds)("accepts an OpenSSH %s public key, also with surrounding whitespace and without comment", (kind) => {
    const key = sshKey(kind);
    expect(sshPublicKeyProblem(key)).toBeUndefined();
    expect(sshPublicKeyProblem(`  ${key.split(" ").slice(0, 2).join("\t")}\n`)).toBeUndefined();
    // openssh-portable V_9_9_P1: sshkey.c, sshkey_read skips any run of spaces and tabs between the fields.
    expect(sshPublicKeyProblem(key.split(" ").join(" \t "))).toBeUndefined();
  });

  it("refuses a body that encodes another key type than its label, naming the label", () => {
    const [, rsaBody] = sshKey("rsa").split(" ");
    expect(sshPublicKeyProblem(`ssh-ed25519 ${rsaBody}`)).toContain("ssh-ed25519");
    const [, p256Body] = sshKey("p256").split(" ");
    expect(sshPublicKeyProblem(`ecdsa-sha2-nistp384 ${p256Body}`)).toContain("ecdsa-sha2-nistp384");
  });

  it("refuses bodies too short to hold a type, without throwing", () => {
    for (const body of ["", "AA==", "AAA=", "AAAA", "AAAAAA=="]) {
      expect(() => sshPublicKeyProblem(`ssh-ed25519 ${body}`)).not.toThrow();
      expect(sshPublicKeyProblem(`ssh-ed25519 ${body}`)).toBeDefined();
    }
  });

  it("refuses a body whose declared type length runs past the label", () => {
    // Declares 12 bytes of type where "ssh-ed25519" has 11: the type read is "ssh-ed25519" plus one more byte.
    const body = Buffer.concat([sshString("ssh-ed25519x"), sshString(Buffer.alloc(32, 1))]).toString("base64");
    expect(sshPublicKeyProblem(`ssh-ed25519 ${body}`)).toBeDefined();
  });

  it("refuses a key type outside the allowed ones, listing each of them", () => {
    const [, body] = sshKey("ed25519").split(" ");
    expect(sshPublicKeyProblem(`ssh-dss ${body}`)).toContain(sshKeyTypes.join(", "));
  });

  it("recognises a pasted private key, even with a valid public key line around it", () => {
    const problem = sshPublicKeyProblem(`${sshKey("ed25519")}\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----`);
    expect(problem).toContain("private key");
  });

  it("puts the problem at the key path of every place that takes a key, without echoing the key", () => {
    const bad = "ssh-ed25519 AAAA";
    const found = problems(({ management, tenant }) => {
      management.sshPublicKey = bad;
      tenant.users = [{ name: "ops", sshAuthorizedKeys: [sshKey("ed25519"), bad] }];
    });
    expect([...found.keys()]).toEqual(["management.sshPublicKey", "tenants[0].users[0].sshAuthorizedKeys[1]"]);
  });
});

describe("fleetConfigSchema field checks", () => {
  it("accepts the valid fleet", () => {
    expect(pathsOf(() => {})).toEqual([]);
  });

  it("lists a strict object's own keys for an unknown key", () => {
    const found = problems(({ fleet }) => ((fleet as unknown as Record<string, unknown>).gitop = {}));
    expect(allowedKeysFromMessage(found.get("gitop")!)).toEqual(Object.keys(fleetConfigSchema.shape));
    expect(allowedKeysFromMessage("is not a mapping")).toBeUndefined();
  });

  it("names the mode and the supported modes for a management mapping without a known mode", () => {
    const found = problems(({ management }) => delete management.mode);
    expect([...found.keys()]).toEqual(["management.mode"]);
    expect(found.get("management.mode")).toMatch(/hetzner.*existing/);
  });

  it("takes DNS-1123 labels of 1 to 63 characters (RFC 1123), the pool name being one", () => {
    expect(pathsOf(({ pool }) => (pool.name = "a"))).toEqual([]);
    expect(pathsOf(({ pool }) => (pool.name = "a".repeat(63)))).toEqual([]);
    expect(pathsOf(({ pool }) => (pool.name = "a".repeat(64)))).toEqual(["tenants[0].workers[0].name"]);
    for (const name of ["-a", "a-", "A", "a.b", ""]) expect(pathsOf(({ pool }) => (pool.name = name))).toEqual(["tenants[0].workers[0].name"]);
    expect(problems(({ pool }) => (pool.name = "a".repeat(64))).get("tenants[0].workers[0].name")).toContain("63");
  });

  it("takes registry credentials names up to their own shorter limit", () => {
    const registry = (credentials: string) => ({ url: "https://registry.example.com", credentials });
    expect(pathsOf(({ tenant }) => (tenant.imageRegistries = [registry("a".repeat(40))]))).toEqual([]);
    const found = problems(({ tenant }) => (tenant.imageRegistries = [registry("a".repeat(41))]));
    expect([...found.keys()]).toEqual(["tenants[0].imageRegistries[0].credentials"]);
    expect(found.get("tenants[0].imageRegistries[0].credentials")).toContain("at most 40");
  });

  it("takes hcloud server type names: a family, then two or three digits", () => {
    for (const type of ["cx23", "cpx31", "cax21", "ccx13", "ccx233"]) expect(pathsOf(({ management }) => (management.serverType = type))).toEqual([]);
    for (const type of ["cx2", "cx1234", "xcx23", "cx23a", "CX23"]) expect(pathsOf(({ management }) => (management.serverType = type))).toEqual(["management.serverType"]);
  });

  it("takes only IPv4 ranges for the private networks, and IPv6 for admin access", () => {
    const found = problems(({ management }) => (management.network = { cidr: "fd00::/48", subnetCidr: "10.0.1.0/24" }));
    expect([...found.keys()]).toEqual(["management.network.cidr"]);
    expect(found.get("management.network.cidr")).toContain("IPv4");
    expect(pathsOf(({ management }) => (management.adminCidrs = ["2001:db8::/32"]))).toEqual([]);
  });

  it("names every Hetzner location of the catalog for an unknown one", () => {
    const found = problems(({ tenant }) => (tenant.regions = ["fsn9"]));
    for (const location of hetznerLocations) expect(found.get("tenants[0].regions[0]")).toContain(location);
  });

  // k8s.io/apimachinery@v0.35.4: pkg/util/validation/validation.go, IsQualifiedName: an optional
  // DNS-1123 subdomain prefix of at most 253 characters and "/", then a name of at most 63
  // alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
  it.each([
    ["example.com/key", true],
    ["key", true],
    ["a", true],
    ["a.b/key", true],
    ["A_b.c-9", true],
    ["x".repeat(63), true],
    [`${"a".repeat(253)}/k`, true],
    ["x".repeat(64), false],
    [`${"a".repeat(254)}/k`, false],
    ["-a", false],
    ["a-", false],
    ["Example.com/key", false],
    ["/key", false],
    ["example.com/", false],
    ["a/b/c", false],
    ["exa_mple.com/key", false],
  ])("annotation key %s is a qualified name: %s", (key, valid) => {
    const found = problems(({ tenant }) => (tenant.annotations = { [key]: "v" }));
    expect(found.size === 0).toBe(valid);
  });

  it("points a misused annotation at the field to set, under the annotation's key path", () => {
    const found = problems(({ tenant }) => (tenant.annotations = { "caren.nutanix.com/loadbalancer-gc": "false" }));
    expect(found.get('tenants[0].annotations["caren.nutanix.com/loadbalancer-gc"]')).toContain("loadBalancerGarbageCollection");
  });

  it("turns an scp-style Git address into the ssh:// URL Flux takes, with or without a user", () => {
    const url = (value: string) => problems(({ fleet }) => (fleet.gitops = { url: value })).get("gitops.url");
    expect(url("github.com:org/fleet.git")).toContain("ssh://github.com/org/fleet.git");
    expect(url("git@github.com:org/fleet.git")).toContain("ssh://git@github.com/org/fleet.git");
    // Not a one-line address: no rewrite that would drop what follows the line break.
    expect(url("git@github.com:org/fleet.git\nmain")).not.toContain("ssh://git@");
  });

  it("takes https:// and ssh:// Git URLs with a host, nothing else", () => {
    for (const value of ["https://github.com/org/fleet", "ssh://git@github.com/org/fleet.git", "ssh://git@example.com:2222/fleet.git"]) {
      expect(gitopsPaths({ url: value })).toEqual([]);
    }
    for (const value of ["ftp://example.com/fleet", "file:///srv/fleet.git", "ssh:///fleet.git", "https://", "fleet"]) {
      expect(gitopsPaths({ url: value })).toEqual(["gitops.url"]);
    }
  });

  it("takes relative paths inside the repository", () => {
    for (const path of ["./clusters/prod", "clusters", "./a..b/c"]) expect(gitopsPaths({ url: "https://g.example/f", paths: { tenants: path } })).toEqual([]);
    for (const path of ["/etc", "a/../../b", "..", ""]) expect(gitopsPaths({ url: "https://g.example/f", paths: { tenants: path } })).toEqual(["gitops.paths.tenants"]);
  });

  it("takes bucket names of 3 to 63 lower-case letters, digits and '-' (S3's rule without dots)", () => {
    const bucket = (name: string) => pathsOf(({ management }) => (management.backups = { bucket: name }));
    for (const name of ["abc", "a".repeat(63), "etcd-1"]) expect(bucket(name)).toEqual([]);
    for (const name of ["ab", "a".repeat(64), "my.bucket", "-abc", "abc-", "Abc"]) expect(bucket(name)).toEqual(["management.backups.bucket"]);
    // S3's bucket naming rules: 3 to 63 characters; the message names the value and both bounds.
    const message = problems(({ management }) => (management.backups = { bucket: "ab" })).get("management.backups.bucket")!;
    expect(message).toContain('"ab"');
    expect(message).toMatch(/\b3\b.*\b63\b/);
  });

  it("takes snapshot folders of one or more characters, starting and ending with a letter or digit", () => {
    const folder = (name: string) => pathsOf(({ management }) => (management.backups = { bucket: "etcd", folder: name }));
    for (const name of ["a", "7", "fleet/prod", "capi-fleet-prod", "v1.2_b"]) expect(folder(name)).toEqual([]);
    for (const name of ["/a", "a/", "", "-a", "a.", "a b"]) expect(folder(name)).toEqual(["management.backups.folder"]);
  });

  it("names the catalog's Object Storage locations for a backup location without it", () => {
    const storage: readonly string[] = catalog.hcloud.objectStorageLocations;
    const elsewhere = hetznerLocations.find((location) => !storage.includes(location))!;
    const found = problems(({ management }) => (management.backups = { bucket: "etcd", location: elsewhere }));
    expect([...found.keys()]).toEqual(["management.backups.location"]);
    expect(found.get("management.backups.location")).toContain(storage.join(", "));
    expect(pathsOf(({ management }) => (management.backups = { bucket: "etcd", location: storage.at(-1) }))).toEqual([]);
  });

  it("checks the snapshot schedule as cron, at its key path", () => {
    const schedule = (value: string) => pathsOf(({ management }) => (management.backups = { bucket: "etcd", schedule: value }));
    expect(schedule(cronDescriptors[0])).toEqual([]);
    expect(schedule("0 */6 * * *")).toEqual([]);
    expect(schedule("every six hours")).toEqual(["management.backups.schedule"]);
  });

  it("keeps 1 to 1000 snapshots, whole numbers only", () => {
    const retention = (value: unknown) => problems(({ management }) => (management.backups = { bucket: "etcd", retention: value }));
    expect(retention(1).size + retention(1000).size).toBe(0);
    for (const value of [0, 1001, 2.5, "28"]) {
      const found = retention(value);
      expect([...found.keys()]).toEqual(["management.backups.retention"]);
      expect(found.get("management.backups.retention")).toContain("1 to 1000");
    }
  });

  it.each(["hetzner", "existing"] as const)("takes the %s management cluster's minors at both ends of the platform's range, and names the range", (mode) => {
    const range = intersectRanges(managementKubernetesConstraints(mode))!;
    const [major, minMinor] = range.min.split(".").map(Number) as [number, number];
    const maxMinor = Number(range.max.split(".")[1]);
    const field = mode === "hetzner" ? "k3sVersion" : "kubernetesVersion";
    const version = (minor: number) => (mode === "hetzner" ? `v${major}.${minor}.1+k3s1` : `v${major}.${minor}.1`);
    const at = (minor: number) =>
      problems(({ fleet }) => (fleet.management = mode === "hetzner" ? { ...fleet.management, k3sVersion: version(minor) } : { mode, kubernetesVersion: version(minor) }));
    expect(at(minMinor).size + at(maxMinor).size).toBe(0);
    for (const minor of [minMinor - 1, maxMinor + 1]) {
      const found = at(minor);
      expect([...found.keys()]).toEqual([`management.${field}`]);
      expect(found.get(`management.${field}`)).toContain(describeRange(range));
      expect(found.get(`management.${field}`)).toContain(`${JSON.stringify(version(minor))} is outside`);
      expect(found.get(`management.${field}`)).toContain(describeConstraints(managementKubernetesConstraints(mode)));
    }
  });

  it("builds the management range from overlapping constraints only: disjoint ones are a catalog mistake", () => {
    const constraint = (component: string, min: string, max: string) => ({ component, range: { min, max } });
    expect(overlappingRange([constraint("a", "1.31", "1.35"), constraint("b", "1.33", "1.36")])).toEqual({ min: "1.33", max: "1.35" });
    const disjoint = [constraint("a", "1.31", "1.32"), constraint("b", "1.33", "1.36")];
    expect(() => overlappingRange(disjoint)).toThrow(describeConstraints(disjoint));
  });

  it("names the allowed server counts and init servers", () => {
    expect(problems(({ management }) => (management.servers = 2)).get("management.servers")).toMatch(/\b1 or 3\b/);
    for (const value of [0, 4, 1.5]) {
      const found = problems(({ management }) => (management.initServer = value));
      expect([...found.keys()]).toEqual(["management.initServer"]);
      expect(found.get("management.initServer")).toContain("1, 2 or 3");
    }
  });

  // nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: api/v1alpha1/clusterconfig_types.go, NTP servers.
  it("takes NTP servers as IP addresses or lower-case host names of at most 253 characters", () => {
    const ntp = (server: string) => pathsOf(({ tenant }) => (tenant.ntp = { servers: [server] }));
    for (const server of ["192.0.2.1", "2001:db8::1", "0.de.pool.ntp.org", "time.example.com.", "a.b.c", "a".repeat(253)]) expect(ntp(server)).toEqual([]);
    for (const server of ["Time.example.com", "a".repeat(254), "-a.example", "a b"]) expect(ntp(server)).toEqual(["tenants[0].ntp.servers[0]"]);
  });

  it("takes http:// and https:// URLs with a host, up to 2048 characters, for registries and proxies", () => {
    const registry = (url: string) => pathsOf(({ tenant }) => (tenant.imageRegistries = [{ url }]));
    const long = (length: number) => `https://registry.example.com/${"a".repeat(length - "https://registry.example.com/".length)}`;
    for (const url of ["https://registry.example.com", "http://10.0.0.1:5000", long(2048)]) expect(registry(url)).toEqual([]);
    for (const url of [long(2049), "oci://registry.example.com", "https:/registry.example.com", "https:/registry.example.com/https://x", "registry.example.com", "http://"]) {
      expect(registry(url)).toEqual(["tenants[0].imageRegistries[0].url"]);
    }
    expect(pathsOf(({ tenant }) => (tenant.proxy = { https: "socks5://p:1080" }))).toEqual(["tenants[0].proxy.https"]);
  });

  it("takes a chart mirror as an http(s):// Helm repository or an oci:// registry path, without a trailing '/'", () => {
    const charts = (value: string) => problems(({ fleet }) => (fleet.mirrors = { charts: value }));
    for (const value of ["https://charts.example.com", "http://127.0.0.1:8080/charts", "oci://registry.example.com/charts", "oci://registry.example.com:5000/mirror/helm"]) {
      expect([...charts(value).keys()], value).toEqual([]);
    }
    for (const value of ["https://charts.example.com/", "oci://registry.example.com/Charts", "oci://", "ftp://charts.example.com", "charts.example.com", "https://charts.example.com/?x=1"]) {
      expect([...charts(value).keys()], value).toEqual(["mirrors.charts"]);
    }
    expect(charts("charts.example.com").get("mirrors.charts")).toContain("allowed: an https:// (or http://) Helm repository or an oci:// registry path");
  });

  it("takes management.certManager install or existing in existing mode, defaulting to install, and refuses it in hetzner mode", () => {
    const existing = (certManager?: unknown) => ({ mode: "existing", kubernetesVersion: catalog.tenantKubernetesVersions[1], ...(certManager === undefined ? {} : { certManager }) });
    const parsedMode = (certManager?: unknown) => {
      const parsed = fleetConfigSchema.safeParse({ ...validFleet(), management: existing(certManager) });
      return parsed.success ? (parsed.data.management as { certManager?: string }).certManager : undefined;
    };
    expect(parsedMode()).toBe("install");
    expect(parsedMode("existing")).toBe("existing");
    const found = problems(({ fleet }) => (fleet.management = existing("skip")));
    expect([...found.keys()]).toEqual(["management.certManager"]);
    expect(found.get("management.certManager")).toBe('"skip" is not allowed; allowed: install, existing');
    expect(pathsOf(({ management }) => (management.certManager = "existing"))).toEqual(["management.certManager"]);
  });

  it("takes a providers mirror as an OCI repository, http:// in front only for a plain-HTTP registry", () => {
    const providers = (value: string) => problems(({ fleet }) => (fleet.mirrors = { providers: value }));
    for (const value of ["registry.example.com/capi-providers", "http://127.0.0.1:5000/mirror", "registry.example.com:5443/a/b"]) expect([...providers(value).keys()], value).toEqual([]);
    for (const value of ["registry.example.com/http://capi", "https://registry.example.com/capi", "registry.example.com/capi:v1"]) expect([...providers(value).keys()], value).toEqual(["mirrors.providers"]);
    expect(providers("registry.example.com/Capi").get("mirrors.providers")).toBe(
      '"registry.example.com/Capi" is not an OCI repository; allowed: registry[:port]/path such as registry.example.com/capi-providers, without a tag, or with http:// in front for a plain-HTTP registry',
    );
  });

  it("refuses an unknown kind of mirror, naming the kinds there are", () => {
    const found = problems(({ fleet }) => (fleet.mirrors = { binaries: "registry.example.com" }));
    expect([...found.keys()]).toEqual(["mirrors.binaries"]);
    expect(allowedKeysFromMessage(found.get("mirrors.binaries")!)).toEqual(["charts", "providers", "images"]);
  });

  it("refuses an images mirror the container runtime would read as a docker.io path, naming the path and what is allowed", () => {
    const found = problems(({ fleet }) => (fleet.mirrors = { images: "mirror/platform" }));
    expect([...found.keys()]).toEqual(["mirrors.images"]);
    expect(found.get("mirrors.images")).toContain("whose registry has a '.' or a port, or is localhost");
  });

  it("takes login names of up to 32 characters as useradd does, never root", () => {
    const user = (name: string) => pathsOf(({ tenant }) => (tenant.users = [{ name, sshAuthorizedKeys: [sshKey("ed25519")] }]));
    for (const name of ["ops", "_svc", "a".repeat(32), "a-b_1"]) expect(user(name)).toEqual([]);
    for (const name of ["root", "a".repeat(33), "Ops", "1ops", "-ops"]) expect(user(name)).toEqual(["tenants[0].users[0].name"]);
  });
});

function gitopsPaths(gitops: Record<string, unknown>): string[] {
  return pathsOf(({ fleet }) => (fleet.gitops = gitops));
}
