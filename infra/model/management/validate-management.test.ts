// The management settings through parseFleetConfig: admin ranges, network, init server, backups,
// and the secrets each mode needs or refuses (validate-management.ts).
import { describe, expect, it } from "vitest";
import { k3sClusterNetworks } from "../config/fleet-config";
import {
  baseline,
  existingMode,
  expectRejected,
  kubeconfig,
  managementToken,
  messageAt,
  objectStorage,
  pathsOf,
  s3Keys,
  toInput,
  withoutObjectStorage,
  withSecrets,
  type BadInput,
} from "../../../tests/support/fleet-config-fixtures";
import { configKeys } from "../config/stack-config";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { catalog } from "../versions/catalog";

/** The management settings, its cross-field rules and the secrets each mode needs or refuses. */
const badInputs: BadInput[] = [
  ["unknown management mode", (r) => (r.management.mode = "hetzer"), "management.mode", "allowed: hetzner, existing"],
  ["management config missing", (r) => (r.management = undefined as never), "management", "is required"],
  ["unknown location", (r) => (r.management.location = "fsn2"), "management.location", "allowed: fsn1, nbg1, hel1, ash, hil, sin"],
  ["two management servers (even etcd)", (r) => (r.management.servers = 2), "management.servers", "allowed: 1 or 3"],
  ["four management servers (even etcd)", (r) => (r.management.servers = 4), "management.servers", "odd member count"],
  ["k3s minor outside the platform's management range", (r) => (r.management.k3sVersion = "v1.33.4+k3s1"), "management.k3sVersion", "allowed minors: 1.34–1.36"],
  ["k3s version without the k3s suffix", (r) => (r.management.k3sVersion = "v1.34.6"), "management.k3sVersion", `of the form ${catalog.k3s.version}`],
  ["unknown server type", (r) => (r.management.serverType = "large"), "management.serverType", "cx*, cpx*, cax* or ccx*"],
  ["unknown load-balancer type", (r) => (r.management.apiLoadBalancerType = "lb99"), "management.apiLoadBalancerType", "allowed: lb11, lb21, lb31"],
  ["no admin CIDR", (r) => (r.management.adminCidrs = []), "management.adminCidrs", "at least one CIDR"],
  ["admin CIDR with host bits", (r) => (r.management.adminCidrs = ["10.1.2.3/8"]), "management.adminCidrs[0]", "did you mean 10.0.0.0/8"],
  ["admin CIDR that is a word", (r) => (r.management.adminCidrs = ["office"]), "management.adminCidrs[0]", "use the form 10.0.0.0/16"],
  ["private SSH key pasted", (r) => (r.management.sshPublicKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----"), "management.sshPublicKey", "give the public key"],
  ["truncated SSH key", (r) => (r.management.sshPublicKey = "ssh-ed25519 AAAAC3Nza"), "management.sshPublicKey", "truncated"],
  ["public management network", (r) => (r.management.network = { cidr: "8.8.0.0/16", subnetCidr: "8.8.1.0/24" }), "management.network.cidr", "allowed: inside 10.0.0.0/8"],
  ["subnet outside the management network", (r) => (r.management.network = { cidr: "10.0.0.0/16", subnetCidr: "10.9.1.0/24" }), "management.network.subnetCidr", "not inside management.network.cidr 10.0.0.0/16"],
  ["subnet too small", (r) => (r.management.network = { cidr: "10.0.0.0/16", subnetCidr: "10.0.1.0/29" }), "management.network.subnetCidr", "allowed: /28 or larger"],
  ["management network overlaps the k3s pod network", (r) => (r.management.network = { cidr: "10.40.0.0/13", subnetCidr: "10.40.1.0/24" }), "management.network.cidr", "overlaps the k3s pods network 10.42.0.0/16"],
  ["admin CIDR 0.0.0.0/0", (r) => (r.management.adminCidrs = ["0.0.0.0/0"]), "management.adminCidrs", "set management.allowAdminFromAnywhere: true"],
  ["admin CIDR ::/0", (r) => (r.management.adminCidrs = ["203.0.113.0/24", "::/0"]), "management.adminCidrs", "to every IPv6 address"],
  ["admin CIDRs whose union is all of IPv4", (r) => (r.management.adminCidrs = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2"]), "management.adminCidrs", "to every IPv4 address"],
  ["management token missing", (r) => delete r.hcloudToken, "hcloud:token", "is required"],
  ["kubeconfig given in hetzner mode", (r) => (r.managementKubeconfig = kubeconfig), "managementKubeconfig", "only used with management.mode: existing"],
  ["existing mode without kubeconfig", (r) => { existingMode(r); delete r.managementKubeconfig; }, "managementKubeconfig", "is required"],
  ["existing mode with a kubeconfig path", (r) => { existingMode(r); r.managementKubeconfig = "~/.kube/config"; }, "managementKubeconfig", "give the file contents, not its path"],
  ["existing cluster too old for CAPI", (r) => { existingMode(r); r.management.kubernetesVersion = "v1.30.0"; }, "management.kubernetesVersion", "allowed minors: 1.34–1.36"],
  ["existing mode with an exec-plugin kubeconfig and tenants", (r) => { existingMode(r); r.managementKubeconfig = kubeconfig.replace("{token: super-secret-bearer}", "{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}"); }, "managementKubeconfig", "tenants need client-certificate-data and client-key-data, or a token"],
  ["hcloud token left over in existing mode", (r) => { existingMode(r); r.hcloudToken = managementToken; }, "hcloud:token", "only used with management.mode: hetzner"],
];

describe("parseFleetConfig", () => {
  it("accepts admin access from anywhere only with the explicit opt-in", () => {
    const raw = baseline();
    raw.management.adminCidrs = ["0.0.0.0/0", "::/0"];
    raw.management.allowAdminFromAnywhere = true;
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it("accepts existing mode with a kubeconfig and reads its server", () => {
    const raw = baseline();
    existingMode(raw);
    const config = parseFleetConfig(toInput(raw));
    expect(config.management).toMatchObject({ mode: "existing", apiServerUrl: "https://10.1.2.3:6443" });
  });

  it("accepts an exec-plugin kubeconfig in existing mode when there are no tenants (only the Kubernetes provider uses it)", () => {
    const raw = baseline();
    existingMode(raw);
    raw.tenants = [];
    raw.tenantHcloudTokens = {};
    raw.managementKubeconfig = kubeconfig.replace("{token: super-secret-bearer}", "{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}");
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it.each(badInputs)("rejects %s", (_description, mutate, path, allowed) => {
    expectRejected(mutate, path, allowed);
  });
});

describe("parseFleetConfig: errors name the key path, the value and what is allowed", () => {
  it("refuses etcd snapshot credentials that nothing uses", () => {
    const hetzner = baseline();
    const credentials = { "capi-fleet:etcdS3Credentials": JSON.stringify(s3Keys) };
    expect(pathsOf(withSecrets(hetzner, credentials))).toEqual(["etcdS3Credentials"]);
    const existing = baseline();
    existingMode(existing);
    expect(pathsOf(withSecrets(existing, credentials))).toEqual(["etcdS3Credentials"]);
  });

  it("needs a backup location when the management location has no Object Storage, from the catalog", () => {
    const raw = baseline();
    raw.management.location = withoutObjectStorage;
    raw.tenants = [];
    raw.tenantHcloudTokens = {};
    raw.management.backups = { bucket: "fleet-etcd" };
    const credentials = { "capi-fleet:etcdS3Credentials": JSON.stringify(s3Keys) };
    const message = messageAt(withSecrets(raw, credentials), "management.backups.location");
    for (const location of objectStorage) expect(message).toContain(location);
    raw.management.backups = { bucket: "fleet-etcd", location: objectStorage[0] };
    expect(pathsOf(withSecrets(raw, credentials))).toEqual([]);
    const inside = baseline();
    inside.management.location = objectStorage[0];
    inside.management.backups = { bucket: "fleet-etcd" };
    expect(pathsOf(withSecrets(inside, credentials))).toEqual([]);
  });

  it("allows the init server up to the number of servers", () => {
    const raw = baseline();
    raw.management.initServer = 3;
    expect(pathsOf(toInput(raw))).toEqual([]);
    raw.management.servers = 1;
    raw.management.initServer = 2;
    const input = toInput(raw);
    expect(pathsOf(input)).toEqual(["management.initServer"]);
    expect(messageAt(input, "management.initServer")).toContain("allowed: 1 to 1");
  });

  it("refuses a management network over the k3s service network, and accepts a /28 subnet", () => {
    const raw = baseline();
    raw.management.network = { cidr: "10.43.0.0/16", subnetCidr: "10.43.1.0/24" };
    expect(messageAt(toInput(raw), "management.network.cidr")).toContain(k3sClusterNetworks.services);
    raw.management.network = { cidr: "10.0.0.0/16", subnetCidr: "10.0.1.0/28" };
    expect(pathsOf(toInput(raw))).toEqual([]);
  });
});

describe("parseFleetConfig: messages name the value and the key to change", () => {
  it("names the key that would use left-over etcd snapshot credentials", () => {
    const credentials = { [configKeys.etcdS3Credentials]: JSON.stringify(s3Keys) };
    expect(messageAt(withSecrets(baseline(), credentials), "etcdS3Credentials")).toContain("management.backups");
    const existing = baseline();
    existingMode(existing);
    const message = messageAt(withSecrets(existing, credentials), "etcdS3Credentials");
    for (const key of ["management.mode", "management.backups"]) expect(message).toContain(key);
  });

  it("says what a tenant-serving kubeconfig uses instead of inline credentials", () => {
    const raw = baseline();
    existingMode(raw);
    raw.managementKubeconfig = kubeconfig.replace("{token: super-secret-bearer}", "{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}");
    expect(messageAt(toInput(raw), "managementKubeconfig")).toContain("exec plugin");
  });
});
