import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { fakeHcloudToken, readStackConfig } from "../../tests/stack-files";
import { catalog } from "./catalog";
import { FleetConfigError, parseFleetConfig, type StackConfigInput } from "./validate-fleet-config";

/** A valid fleet in the shape of a stack file; each case mutates one thing. */
interface RawFleet {
  management: Record<string, unknown>;
  tenants: Record<string, unknown>[];
  gitops?: Record<string, unknown>;
  tenantHcloudTokens: Record<string, unknown>;
  hcloudToken?: string;
  managementKubeconfig?: string;
  extraKeys: Record<string, string>;
  plainKeys: string[];
}

const alphaToken = fakeHcloudToken("alpha");
const betaToken = fakeHcloudToken("beta");
const managementToken = fakeHcloudToken("management");
const sshPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvPumWclk91ATYkXgfL5uBdvqjGrjAatvRuTP4arftF test";
const kubeconfig = [
  "apiVersion: v1",
  "clusters: [{name: c, cluster: {server: 'https://10.1.2.3:6443', certificate-authority-data: c2VjcmV0}}]",
  "users: [{name: u, user: {token: super-secret-bearer}}]",
  "contexts: [{name: ctx, context: {cluster: c, user: u}}]",
  "current-context: ctx",
].join("\n");

function tenant(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    kubernetesVersion: "v1.34.6",
    regions: ["fsn1"],
    controlPlane: { replicas: 3, machineType: "cx33" },
    workers: [{ name: "md-0", replicas: 2, machineType: "cx23", failureDomain: "fsn1" }],
    ...overrides,
  };
}

function baseline(): RawFleet {
  return {
    management: {
      mode: "hetzner",
      location: "fsn1",
      serverType: "cx33",
      servers: 3,
      adminCidrs: ["203.0.113.0/24"],
      sshPublicKey,
    },
    tenants: [tenant("alpha"), tenant("beta")],
    tenantHcloudTokens: { alpha: alphaToken, beta: betaToken },
    hcloudToken: managementToken,
    extraKeys: {},
    plainKeys: [],
  };
}

function toInput(raw: RawFleet, allowPlaceholderSecrets = true): StackConfigInput {
  const values: Record<string, string> = {
    "capi-fleet:management": JSON.stringify(raw.management),
    "capi-fleet:tenants": JSON.stringify(raw.tenants),
    "capi-fleet:tenantHcloudTokens": JSON.stringify(raw.tenantHcloudTokens),
    ...raw.extraKeys,
  };
  if (raw.gitops) values["capi-fleet:gitops"] = JSON.stringify(raw.gitops);
  if (raw.hcloudToken !== undefined) values["hcloud:token"] = raw.hcloudToken;
  if (raw.managementKubeconfig !== undefined) values["capi-fleet:managementKubeconfig"] = raw.managementKubeconfig;
  const secretKeys = new Set(
    ["hcloud:token", "capi-fleet:tenantHcloudTokens", "capi-fleet:managementKubeconfig"].filter((key) => !raw.plainKeys.includes(key)),
  );
  return { stack: "test", values, secretKeys, allowPlaceholderSecrets };
}

function problemsOf(input: StackConfigInput) {
  try {
    parseFleetConfig(input);
  } catch (error) {
    if (error instanceof FleetConfigError) return { error, problems: error.problems };
    throw error;
  }
  return { error: undefined, problems: [] };
}

const existingMode = (raw: RawFleet) => {
  raw.management = { mode: "existing", kubernetesVersion: "v1.34.6" };
  delete raw.hcloudToken;
  raw.managementKubeconfig = kubeconfig;
};

/** [description, mutation, expected key path, fragment of the message naming what is allowed]. */
const badInputs: [string, (raw: RawFleet) => void, string, string][] = [
  ["typo in a top-level key", (r) => (r.extraKeys["capi-fleet:tenant"] = "[]"), "tenant", 'did you mean "tenants"'],
  ["typo in a management key", (r) => (r.management.serverTyp = "cx33"), "management.serverTyp", 'did you mean "serverType"'],
  ["typo in a tenant key", (r) => (r.tenants[0]!.kubernetesVerison = "v1.34.6"), "tenants[0].kubernetesVerison", 'did you mean "kubernetesVersion"'],
  ["typo in controlPlane", (r) => ((r.tenants[0]!.controlPlane as Record<string, unknown>).replica = 3), "tenants[0].controlPlane.replica", "allowed keys: replicas, machineType"],
  ["typo in a worker pool", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.failureDomian = "fsn1"), "tenants[0].workers[0].failureDomian", 'did you mean "failureDomain"'],
  ["unknown management mode", (r) => (r.management.mode = "hetzer"), "management.mode", "allowed: hetzner, existing"],
  ["management config missing", (r) => (r.management = undefined as never), "management", "is required"],
  ["unknown location", (r) => (r.management.location = "fsn2"), "management.location", "allowed: fsn1, nbg1, hel1, ash, hil, sin"],
  ["two management servers (even etcd)", (r) => (r.management.servers = 2), "management.servers", "allowed: 1 or 3"],
  ["four management servers (even etcd)", (r) => (r.management.servers = 4), "management.servers", "odd member count"],
  ["k3s minor outside the platform's management range", (r) => (r.management.k3sVersion = "v1.33.4+k3s1"), "management.k3sVersion", "allowed minors: 1.34–1.35"],
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
  ["tenant name not DNS-1123", (r) => (r.tenants[0]!.name = "Team_A"), "tenants[0].name", "lower-case letters, digits and '-'"],
  ["duplicate tenant names", (r) => (r.tenants[1]!.name = "alpha"), "tenants[1].name", "already used by tenants[0]"],
  ["two tenants in one namespace", (r) => { r.tenants[0]!.namespace = "shared"; r.tenants[1]!.namespace = "shared"; }, "tenants[1].namespace", "each tenant needs its own namespace"],
  ["tenant namespace not DNS-1123", (r) => (r.tenants[0]!.namespace = "Team.A"), "tenants[0].namespace", "not a DNS-1123 label"],
  ["Kubernetes minor too old", (r) => (r.tenants[0]!.kubernetesVersion = "v1.31.2"), "tenants[0].kubernetesVersion", "allowed: v1.33.10, v1.34.6, v1.35.3"],
  ["Kubernetes minor too new", (r) => (r.tenants[0]!.kubernetesVersion = "v1.36.0"), "tenants[0].kubernetesVersion", "not in the ClusterClass kubernetesVersions"],
  ["Kubernetes patch not in the class", (r) => (r.tenants[0]!.kubernetesVersion = "v1.34.3"), "tenants[0].kubernetesVersion", "allowed: v1.33.10"],
  ["Kubernetes version without v", (r) => (r.tenants[0]!.kubernetesVersion = "1.34.6"), "tenants[0].kubernetesVersion", `of the form ${catalog.tenantKubernetesVersions[0]}`],
  ["two control-plane replicas (even etcd)", (r) => ((r.tenants[0]!.controlPlane as Record<string, unknown>).replicas = 2), "tenants[0].controlPlane.replicas", "allowed: 1, 3 or 5"],
  ["four control-plane replicas (even etcd)", (r) => ((r.tenants[0]!.controlPlane as Record<string, unknown>).replicas = 4), "tenants[0].controlPlane.replicas", "odd member count"],
  ["no worker pools", (r) => (r.tenants[0]!.workers = []), "tenants[0].workers", "at least one worker pool"],
  ["negative worker replicas", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.replicas = -1), "tenants[0].workers[0].replicas", "must be 0 or more"],
  ["fractional worker replicas", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.replicas = 1.5), "tenants[0].workers[0].replicas", "expected int"],
  ["duplicate pool names", (r) => (r.tenants[0]!.workers = [tenant("x").workers as never, tenant("x").workers as never].flat()), "tenants[0].workers[1].name", "pool names must be unique"],
  ["failure domain outside the regions", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.failureDomain = "hel1"), "tenants[0].workers[0].failureDomain", "allowed: fsn1"],
  ["regions in two network zones", (r) => (r.tenants[0]!.regions = ["fsn1", "ash"]), "tenants[0].regions[1]", "a tenant's private network spans one zone"],
  ["worker pool too big for its placement group", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; pool.placementGroup = true; pool.replicas = 10; }, "tenants[0].workers[0].replicas", "allowed: at most 9"],
  ["replicas and autoscaling on one pool", (r) => ((r.tenants[0]!.workers as Record<string, unknown>[])[0]!.autoscaling = { minSize: 1, maxSize: 3 }), "tenants[0].workers[0].replicas", "allowed: either replicas or autoscaling, so remove replicas"],
  ["neither replicas nor autoscaling", (r) => delete (r.tenants[0]!.workers as Record<string, unknown>[])[0]!.replicas, "tenants[0].workers[0].replicas", "is missing; allowed: replicas (0 to 100), or autoscaling: { minSize, maxSize } instead"],
  ["autoscaling minSize above maxSize", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: 4, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "4 is above maxSize 3; allowed: 0 to 3"],
  ["autoscaling from zero on an Arm server type", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.machineType = "cax21"; pool.autoscaling = { minSize: 0, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "0 on the Arm server type \"cax21\": the autoscaler models a node of an empty pool as amd64"],
  ["negative autoscaling minSize", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: -1, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "must be 0 or more; allowed: 0 to 100"],
  ["typo in autoscaling", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: 1, maxsize: 3 }; }, "tenants[0].workers[0].autoscaling.maxsize", "allowed keys: minSize, maxSize"],
  ["autoscaled pool too big for its placement group", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.placementGroup = true; pool.autoscaling = { minSize: 1, maxSize: 10 }; }, "tenants[0].workers[0].autoscaling.maxSize", "10 as maxSize does not fit a placement group"],
  ["pods range with fewer /24s than an autoscaled pool's maxSize needs", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: 1, maxSize: 10 }; r.tenants[0]!.network = { podsCidr: "192.168.0.0/21" }; }, "tenants[0].network.podsCidr", "holds 8 node pod ranges of /24, but the tenant can have 15 servers at once"],
  ["unknown NFD strategy", (r) => (r.tenants[0]!.nfd = { strategy: "Helm" }), "tenants[0].nfd.strategy", "allowed: HelmAddon, ClusterResourceSet"],
  ["nodes subnet outside the nodes range", (r) => (r.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: "10.11.0.0/24" }), "tenants[0].network.nodesSubnetCidr", "is not inside tenants[0].network.nodesCidr 10.10.0.0/16"],
  ["tenant apps without gitops", (r) => (r.tenants[0]!.apps = { path: "./tenants/alpha" }), "tenants[0].apps", "needs the top-level gitops setting"],
  ["tenant apps path outside the repository", (r) => { r.gitops = { url: "https://git.example.com/fleet.git" }; r.tenants[0]!.apps = { path: "../elsewhere" }; }, "tenants[0].apps.path", "not a path inside the repository"],
  ["unknown volume reclaim policy", (r) => (r.tenants[0]!.storage = { reclaimPolicy: "Recycle" }), "tenants[0].storage.reclaimPolicy", "allowed: Delete, Retain"],
  ["unknown tenant API load-balancer type", (r) => (r.tenants[0]!.apiLoadBalancerType = "lb12"), "tenants[0].apiLoadBalancerType", "allowed: lb11, lb21, lb31"],
  ["empty SSH key name", (r) => (r.tenants[0]!.sshKeyName = ""), "tenants[0].sshKeyName", "the name of an SSH key in the tenant's Hetzner project"],
  ["pods overlap services in one tenant", (r) => (r.tenants[0]!.network = { podsCidr: "10.96.0.0/16", servicesCidr: "10.96.0.0/12" }), "tenants[0].network.servicesCidr", "overlaps tenants[0].network.podsCidr"],
  ["services range larger than kubeadm's /12", (r) => (r.tenants[0]!.network = { servicesCidr: "10.128.0.0/11" }), "tenants[0].network.servicesCidr", "allowed: /12 or smaller"],
  ["services range below kubeadm's ten addresses", (r) => (r.tenants[0]!.network = { servicesCidr: "10.128.0.0/29" }), "tenants[0].network.servicesCidr", "allowed: /28 or larger"],
  ["pods range smaller than one node's /24", (r) => (r.tenants[0]!.network = { podsCidr: "192.168.0.0/25" }), "tenants[0].network.podsCidr", "allowed: /24 or larger"],
  ["pods range with fewer /24s than servers", (r) => (r.tenants[0]!.network = { podsCidr: "192.168.0.0/23" }), "tenants[0].network.podsCidr", "holds 2 node pod ranges of /24, but the tenant can have 7 servers at once"],
  ["nodes subnet too small for the servers", (r) => (r.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: "10.10.0.0/29" }), "tenants[0].network.nodesSubnetCidr", "has 5 usable addresses, but the tenant needs 8"],
  ["default nodes subnet of a tiny nodes range", (r) => (r.tenants[0]!.network = { nodesCidr: "10.10.0.0/29" }), "tenants[0].network.nodesCidr", "allowed: /28 or larger"],
  ["tenant named after the CAPH namespace", (r) => (r.tenants[0]!.name = "caph-system"), "tenants[0].name", "namespace of the Cluster API InfrastructureProvider"],
  ["tenant namespace kube-system", (r) => (r.tenants[0]!.namespace = "kube-system"), "tenants[0].namespace", "namespace of Kubernetes"],
  ["tenant namespace flux-system", (r) => (r.tenants[0]!.namespace = "flux-system"), "tenants[0].namespace", "namespace of Flux"],
  ["tenant namespace of the ClusterClass", (r) => (r.tenants[1]!.namespace = "capi-fleet-system"), "tenants[1].namespace", "the fleet's ClusterClass"],
  ["admin CIDR 0.0.0.0/0", (r) => (r.management.adminCidrs = ["0.0.0.0/0"]), "management.adminCidrs", "set management.allowAdminFromAnywhere: true"],
  ["admin CIDR ::/0", (r) => (r.management.adminCidrs = ["203.0.113.0/24", "::/0"]), "management.adminCidrs", "to every IPv6 address"],
  ["admin CIDRs whose union is all of IPv4", (r) => (r.management.adminCidrs = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2"]), "management.adminCidrs", "to every IPv4 address"],
  ["a Hetzner location CAPH does not accept", (r) => (r.tenants[0]!.regions = ["fsn1", "fal1"]), "tenants[0].regions[1]", "allowed: fsn1, nbg1, hel1, ash, hil, sin"],
  ["tenants in one routing domain overlap", (r) => { r.tenants[0]!.network = { routingDomain: "core" }; r.tenants[1]!.network = { routingDomain: "core", nodesCidr: "10.1.0.0/16" }; }, "tenants[1].network.podsCidr", 'in routing domain "core"'],
  ["public tenant node network", (r) => (r.tenants[0]!.network = { nodesCidr: "100.64.0.0/16" }), "tenants[0].network.nodesCidr", "allowed: inside 10.0.0.0/8"],
  ["Calico requested", (r) => (r.tenants[0]!.cni = { provider: "calico" }), "tenants[0].cni.provider", "allowed: cilium"],
  ["unknown CNI strategy", (r) => (r.tenants[0]!.cni = { provider: "cilium", strategy: "Helm" }), "tenants[0].cni.strategy", "allowed: HelmAddon, ClusterResourceSet"],
  ["LB GC flag as a string", (r) => (r.tenants[0]!.loadBalancerGarbageCollection = "no"), "tenants[0].loadBalancerGarbageCollection", "expected boolean"],
  ["readiness wait as a string", (r) => (r.tenants[1]!.waitForReady = "no"), "tenants[1].waitForReady", "expected boolean"],
  ["readiness wait misspelt", (r) => (r.tenants[0]!.waitForReadiness = false), "tenants[0].waitForReadiness", 'did you mean "waitForReady"'],
  ["LB GC opt-out as an annotation", (r) => (r.tenants[0]!.annotations = { "caren.nutanix.com/loadbalancer-gc": "false" }), 'tenants[0].annotations["caren.nutanix.com/loadbalancer-gc"]', "set loadBalancerGarbageCollection"],
  ["annotation key with a space", (r) => (r.tenants[0]!.annotations = { "upgrade concurrency": "2" }), 'tenants[0].annotations["upgrade concurrency"]', "allowed: [prefix/]name"],
  ["annotation value not a string", (r) => (r.tenants[0]!.annotations = { "topology.cluster.x-k8s.io/upgrade-concurrency": 2 }), 'tenants[0].annotations["topology.cluster.x-k8s.io/upgrade-concurrency"]', "expected string"],
  ["tenants is not a list", (r) => (r.tenants = "alpha" as never), "tenants", "expected array"],
  ["missing tenant token", (r) => delete r.tenantHcloudTokens.beta, "tenantHcloudTokens.beta", "every tenant needs the token of its own Hetzner project"],
  ["token for a tenant that does not exist", (r) => (r.tenantHcloudTokens.alpah = alphaToken), "tenantHcloudTokens.alpah", 'did you mean "alpha"'],
  ["malformed tenant token", (r) => (r.tenantHcloudTokens.alpha = "abc"), "tenantHcloudTokens.alpha", "expected 64 letters and digits"],
  ["tenant tokens stored in plain text", (r) => r.plainKeys.push("capi-fleet:tenantHcloudTokens"), "tenantHcloudTokens", "pulumi config set --secret"],
  ["management token missing", (r) => delete r.hcloudToken, "hcloud:token", "is required"],
  ["management token stored in plain text", (r) => r.plainKeys.push("hcloud:token"), "hcloud:token", "stored in plain text"],
  ["kubeconfig given in hetzner mode", (r) => (r.managementKubeconfig = kubeconfig), "managementKubeconfig", "only used with management.mode: existing"],
  ["existing mode without kubeconfig", (r) => { existingMode(r); delete r.managementKubeconfig; }, "managementKubeconfig", "is required"],
  ["existing mode with a kubeconfig path", (r) => { existingMode(r); r.managementKubeconfig = "~/.kube/config"; }, "managementKubeconfig", "give the file contents, not its path"],
  ["existing cluster too old for CAPI", (r) => { existingMode(r); r.management.kubernetesVersion = "v1.30.0"; }, "management.kubernetesVersion", "allowed minors: 1.34–1.36"],
  ["existing mode with an exec-plugin kubeconfig and tenants", (r) => { existingMode(r); r.managementKubeconfig = kubeconfig.replace("{token: super-secret-bearer}", "{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}"); }, "managementKubeconfig", "tenants need client-certificate-data and client-key-data, or a token"],
  ["hcloud token left over in existing mode", (r) => { existingMode(r); r.hcloudToken = managementToken; }, "hcloud:token", "only used with management.mode: hetzner"],
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

  it("lets tenants outside a shared routing domain reuse the same ranges", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { routingDomain: "a" };
    raw.tenants[1]!.network = { routingDomain: "b" };
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it("lets tenant ranges reuse the management network: no route joins them (each tenant has its own Hetzner project)", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { nodesCidr: "10.0.0.0/16", podsCidr: "10.64.0.0/16" };
    raw.tenants[1]!.network = { nodesCidr: "172.16.0.0/16", servicesCidr: "10.0.0.0/12" };
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it("accepts admin access from anywhere only with the explicit opt-in", () => {
    const raw = baseline();
    raw.management.adminCidrs = ["0.0.0.0/0", "::/0"];
    raw.management.allowAdminFromAnywhere = true;
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it("accepts ranges at kubeadm's limits: services /12 and /28, pods with one /24 per server", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { servicesCidr: "10.128.0.0/12", podsCidr: "192.168.0.0/21" };
    raw.tenants[1]!.network = { servicesCidr: "10.128.0.0/28", nodesCidr: "10.0.0.0/16", nodesSubnetCidr: "10.0.0.0/28" };
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it("warns, without refusing, about server types and images this release does not know", () => {
    const raw = baseline();
    raw.management.serverType = "cx99";
    raw.tenants[0]!.image = "my-snapshot";
    ((raw.tenants[1]!.workers as Record<string, unknown>[])[0]!).machineType = "cax99";
    const config = parseFleetConfig(toInput(raw));
    expect(config.warnings.map((warning) => warning.path)).toEqual(["management.serverType", "tenants[0].image", "tenants[1].workers[0].machineType"]);
    expect(config.warnings[0]!.message).toContain("hcloud server-type list");
    expect(parseFleetConfig(toInput(baseline())).warnings).toEqual([]);
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

  it(`has at least 30 distinct bad-input cases (has ${badInputs.length})`, () => {
    expect(new Set(badInputs.map(([description]) => description)).size).toBe(badInputs.length);
    expect(badInputs.length).toBeGreaterThanOrEqual(30);
  });

  it.each(badInputs)("rejects %s", (_description, mutate, path, allowed) => {
    const raw = baseline();
    mutate(raw);
    const { error, problems } = problemsOf(toInput(raw));
    expect(error, "expected a FleetConfigError").toBeDefined();
    const atPath = problems.filter((candidate) => candidate.path === path);
    expect(atPath, `no problem at ${path}; got ${JSON.stringify(problems)}`).not.toHaveLength(0);
    expect(atPath.map((problem) => problem.message).join("\n")).toContain(allowed);
    expect(error!.message).toContain(`  - ${path}: `);
    for (const secret of [alphaToken, betaToken, managementToken, "super-secret-bearer"]) {
      expect(error!.message).not.toContain(secret);
    }
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

  it("accepts committed placeholders in previews and refuses them for pulumi up", () => {
    const raw = baseline();
    raw.hcloudToken = "placeholder".padEnd(64, "0");
    expect(parseFleetConfig(toInput(raw, true)).placeholderSecrets).toEqual(["hcloud:token"]);
    const { problems } = problemsOf(toInput(raw, false));
    expect(problems).toEqual([expect.objectContaining({ path: "hcloud:token", message: expect.stringContaining("placeholder") })]);
  });

  it.each(["dev", "prod"])("accepts the committed %s stack", (stack) => {
    const { values, secretKeys } = readStackConfig(stack);
    const config = parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: false });
    expect(config.tenants.length).toBeGreaterThan(0);
    // No warnings: prod's autoscaled pool gets its autoscaler on the management cluster (components/cluster-autoscaler).
    expect(config.warnings).toEqual([]);
  });

  it("accepts an x86 pool that autoscales from zero (CAPH publishes the server type's capacity)", () => {
    const raw = baseline();
    const pool = (raw.tenants[0]!.workers as Record<string, unknown>[])[0]!;
    delete pool.replicas;
    pool.autoscaling = { minSize: 0, maxSize: 3 };
    expect(String(pool.machineType)).not.toMatch(/^cax/);
    const config = parseFleetConfig(toInput(raw));
    expect(config.tenants[0]!.workers[0]!.autoscaling).toEqual({ minSize: 0, maxSize: 3 });
    expect(config.warnings).toEqual([]);
  });

  it("keeps secrets out of JSON and string renderings of the config", () => {
    const config = parseFleetConfig(toInput(baseline()));
    const rendered = JSON.stringify(config) + String(config.tenants[0]!.hcloudToken) + inspect(config, { depth: 10 });
    expect(rendered).not.toContain(alphaToken);
    expect(rendered).toContain("[secret]");
  });
});
