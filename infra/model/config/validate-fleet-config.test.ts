import { inspect } from "node:util";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import { fakeHcloudToken, readStackConfig } from "../../../tests/stack-files";
import { catalog } from "../versions/catalog";
import { fleetConfigSchema, k3sClusterNetworks, placementGroupServerLimit } from "./fleet-config";
import {
  configKeys,
  FleetConfigError,
  formatPath,
  hcloudTokenProblem,
  objectStorageKeyProblem,
  parseFleetConfig,
  pemCertificateProblem,
  projectName,
  type HetznerManagement,
  type StackConfigInput,
} from "./validate-fleet-config";

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
  ["unknown CAREN preflight check", (r) => (r.tenants[0]!.carenPreflight = { skip: ["Registry", "Registries"] }), "tenants[0].carenPreflight.skip[1]", "is not a preflight check CAREN runs for this fleet; allowed: GenericConfiguration, Registry"],
  ["CAREN preflight: skip all", (r) => (r.tenants[0]!.carenPreflight = { skip: ["all"] }), "tenants[0].carenPreflight.skip[0]", "allowed: GenericConfiguration, Registry"],
  ["CAREN preflight skip naming nothing", (r) => (r.tenants[0]!.carenPreflight = { skip: [] }), "tenants[0].carenPreflight.skip", "names no check"],
  ["CAREN preflight skip as an annotation", (r) => (r.tenants[0]!.annotations = { "preflight.cluster.caren.nutanix.com/skip": "Registry" }), 'tenants[0].annotations["preflight.cluster.caren.nutanix.com/skip"]', "set carenPreflight.skip"],
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
  ["ClusterResourceSet replacing kube-proxy", (r) => (r.tenants[0]!.cni = { provider: "cilium", strategy: "ClusterResourceSet", kubeProxyReplacement: true }), "tenants[0].cni.strategy", "allowed: strategy HelmAddon"],
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

/** The baseline as the runtime hands it over, with `extra` secret keys (stored with --secret) added. */
function withSecrets(raw: RawFleet, extra: Record<string, string>, allowPlaceholderSecrets = true): StackConfigInput {
  const input = toInput(raw, allowPlaceholderSecrets);
  return { ...input, values: { ...input.values, ...extra }, secretKeys: new Set([...input.secretKeys, ...Object.keys(extra)]) };
}

const pathsOf = (input: StackConfigInput) => problemsOf(input).problems.map((problem) => problem.path);
const messageAt = (input: StackConfigInput, path: string) =>
  problemsOf(input).problems.filter((problem) => problem.path === path).map((problem) => problem.message).join("\n");
const pool0 = (raw: RawFleet, tenantIndex = 0) => (raw.tenants[tenantIndex]!.workers as Record<string, unknown>[])[0]!;
/** An Object Storage key of Hetzner's length (20 and 40 characters). */
const s3Keys = { accessKey: "A".repeat(20), secretKey: "s".repeat(40) };
const objectStorage: readonly string[] = catalog.hcloud.objectStorageLocations;
const withoutObjectStorage = Object.keys(catalog.hcloud.networkZoneOfLocation).find((location) => !objectStorage.includes(location))!;

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

  it("reports a region listed twice at the second one", () => {
    const raw = baseline();
    raw.tenants[0]!.regions = ["fsn1", "nbg1", "fsn1"];
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].regions[2]"]);
  });

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

  it("fits a placement group pool of one less than Hetzner's limit", () => {
    const raw = baseline();
    Object.assign(pool0(raw), { placementGroup: true, replicas: placementGroupServerLimit - 1 });
    expect(pathsOf(toInput(raw))).toEqual([]);
  });

  it("accepts the pods range the message suggests, and refuses one bit less", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { podsCidr: "192.168.0.0/23" };
    const suggested = Number(/allowed: \/(\d+) or larger/.exec(messageAt(toInput(raw), "tenants[0].network.podsCidr"))![1]);
    raw.tenants[0]!.network = { podsCidr: `192.168.0.0/${suggested}` };
    expect(pathsOf(toInput(raw))).toEqual([]);
    raw.tenants[0]!.network = { podsCidr: `192.168.0.0/${suggested + 1}` };
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].network.podsCidr"]);
  });

  it("accepts the nodes subnet the message suggests, and refuses one bit less", () => {
    // 3 control-plane servers and 8 workers, each with a rollout surge, and the load balancer: 14
    // addresses, one more than a /28's 13 usable ones.
    const raw = baseline();
    pool0(raw).replicas = 8;
    raw.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: "10.10.0.0/30" };
    const suggested = Number(/allowed: \/(\d+) or larger/.exec(messageAt(toInput(raw), "tenants[0].network.nodesSubnetCidr"))![1]);
    raw.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: `10.10.0.0/${suggested}` };
    expect(pathsOf(toInput(raw))).toEqual([]);
    raw.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: `10.10.0.0/${suggested + 1}` };
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].network.nodesSubnetCidr"]);
  });

  it("counts a rollout surge only for pools with servers", () => {
    // One control-plane server and its surge, an empty pool: two servers, two /24s in a /23.
    const raw = baseline();
    (raw.tenants[0]!.controlPlane as Record<string, unknown>).replicas = 1;
    pool0(raw).replicas = 0;
    raw.tenants[0]!.network = { podsCidr: "192.168.0.0/23" };
    expect(pathsOf(toInput(raw))).toEqual([]);
    pool0(raw).replicas = 1;
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].network.podsCidr"]);
  });

  it("fills a nodes subnet exactly: usable addresses (size minus 3) equal to servers plus the load balancer", () => {
    // /29: 8 - 3 = 5 usable; 1 control plane + surge, 1 worker + surge, and the load balancer.
    const raw = baseline();
    (raw.tenants[0]!.controlPlane as Record<string, unknown>).replicas = 1;
    pool0(raw).replicas = 1;
    raw.tenants[0]!.network = { nodesCidr: "10.10.0.0/16", nodesSubnetCidr: "10.10.0.0/29" };
    expect(pathsOf(toInput(raw))).toEqual([]);
    pool0(raw).replicas = 2;
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].network.nodesSubnetCidr"]);
  });

  it("takes pods ranges up to 16 bits larger than the node mask (kubeadm's limit)", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { nodesCidr: "192.168.0.0/16", servicesCidr: "172.16.0.0/16", podsCidr: "10.0.0.0/8" };
    expect(pathsOf(toInput(raw))).toEqual([]);
    raw.tenants[0]!.network = { nodesCidr: "192.168.0.0/16", servicesCidr: "172.16.0.0/16", podsCidr: "10.0.0.0/7" };
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].network.podsCidr"]);
  });

  it("warns about a pool's own image and the management image, and never about existing mode's absent servers", () => {
    const raw = baseline();
    raw.management.image = "my-management-snapshot";
    pool0(raw, 1).image = "my-pool-snapshot";
    const warnings = parseFleetConfig(toInput(raw)).warnings;
    expect(warnings.map((warning) => warning.path)).toEqual(["management.image", "tenants[1].workers[0].image"]);
    for (const warning of warnings) expect(warning.message).toContain(catalog.hcloud.systemImages.join(", "));
    pool0(raw, 1).image = catalog.hcloud.systemImages[0];
    raw.management.image = catalog.hcloud.systemImages[0];
    expect(parseFleetConfig(toInput(raw)).warnings).toEqual([]);
    const existing = baseline();
    existingMode(existing);
    expect(parseFleetConfig(toInput(existing)).warnings).toEqual([]);
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

describe("formatPath", () => {
  it("writes paths as pulumi config set --path takes them", () => {
    expect(formatPath(["tenants", 0, "annotations", "example.com/key"])).toBe('tenants[0].annotations["example.com/key"]');
    expect(formatPath(["management", "network", "cidr"])).toBe("management.network.cidr");
    expect(formatPath(["a-b", "_c", "$d"])).toBe("a-b._c.$d");
    expect(formatPath(["0x", "x y"])).toBe('["0x"]["x y"]');
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

describe("parseFleetConfig: kube-proxy and CNI strategy", () => {
  it.each([
    ["kubeProxyReplacement with kube-proxy mode disabled (they agree)", { cni: { provider: "cilium", kubeProxyReplacement: true }, kubeProxy: { mode: "disabled" } }],
    ["the ClusterResourceSet strategy while kube-proxy stays", { cni: { provider: "cilium", strategy: "ClusterResourceSet" }, kubeProxy: { mode: "nftables" } }],
    ["Cilium values without kubeProxyReplacement while kube-proxy stays", { cni: { provider: "cilium", values: { hubble: { enabled: true } } } }],
  ])("accepts %s", (_description, overrides) => {
    const raw = baseline();
    Object.assign(raw.tenants[0]!, overrides);
    expect(pathsOf(toInput(raw))).toEqual([]);
  });
});

describe("parseFleetConfig: sizes at the upstream limits", () => {
  it("accepts an autoscaled pool with minSize equal to maxSize", () => {
    // CAPI accepts it: its MachineDeployment webhook only picks replicas between the two annotations
    // (sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/machinedeployment.go, calculateMachineDeploymentReplicas).
    const raw = baseline();
    const pool = pool0(raw);
    delete pool.replicas;
    pool.autoscaling = { minSize: 2, maxSize: 2 };
    expect(pathsOf(toInput(raw))).toEqual([]);
  });

  it("takes a pods range of exactly the node mask as a valid size, and suggests one that holds every server", () => {
    // kubeadm refuses a pod subnet only when its mask is larger than the node mask (k8s.io/kubernetes@v1.35.4:
    // cmd/kubeadm/app/apis/kubeadm/validation/validation.go, ValidatePodSubnetNodeMask: maskSize > nodeMask);
    // a /24 is one node's range, too few for the tenant's servers, so the suggestion must be larger.
    const raw = baseline();
    raw.tenants[0]!.network = { podsCidr: "192.168.0.0/24" };
    const suggested = Number(/allowed: \/(\d+) or larger/.exec(messageAt(toInput(raw), "tenants[0].network.podsCidr"))![1]);
    raw.tenants[0]!.network = { podsCidr: `192.168.0.0/${suggested}` };
    expect(pathsOf(toInput(raw))).toEqual([]);
  });

  it("suggests the largest pods range kubeadm takes, 16 bits above the node mask", () => {
    // ValidatePodSubnetNodeMask: (nodeMask - maskSize) > PodSubnetNodeMaskMaxDiff (16, cmd/kubeadm/app/constants/constants.go).
    const raw = baseline();
    const network = { nodesCidr: "192.168.0.0/16", servicesCidr: "172.16.0.0/16" };
    raw.tenants[0]!.network = { ...network, podsCidr: "10.0.0.0/7" };
    const suggested = Number(/allowed: \/(\d+) or smaller/.exec(messageAt(toInput(raw), "tenants[0].network.podsCidr"))![1]);
    expect(suggested).toBe(24 - 16);
    raw.tenants[0]!.network = { ...network, podsCidr: `10.0.0.0/${suggested}` };
    expect(pathsOf(toInput(raw))).toEqual([]);
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

  it("points a tenant named after a platform namespace to the namespace key, and only then", () => {
    const byName = baseline();
    byName.tenants[0]!.name = "kube-system";
    byName.tenantHcloudTokens = { "kube-system": alphaToken, beta: betaToken };
    const named = messageAt(toInput(byName), "tenants[0].name");
    const byNamespace = baseline();
    byNamespace.tenants[0]!.namespace = "kube-system";
    const set = messageAt(toInput(byNamespace), "tenants[0].namespace");
    expect(named).toContain("tenants[0].namespace");
    expect(named).not.toBe(set);
    expect(set).toBe(named.replace(/ \(set [^)]*\)$/, ""));
  });

  it("names the scope of an overlap, the value listed twice and the replicas that do not fit", () => {
    const overlap = baseline();
    overlap.tenants[0]!.network = { podsCidr: "10.96.0.0/16", servicesCidr: "10.96.0.0/12" };
    expect(messageAt(toInput(overlap), "tenants[0].network.servicesCidr")).toMatch(/same tenant/);
    const twice = baseline();
    twice.tenants[0]!.regions = ["fsn1", "fsn1"];
    expect(messageAt(toInput(twice), "tenants[0].regions[1]")).toMatch(/^"fsn1" /);
    const crowded = baseline();
    Object.assign(pool0(crowded), { placementGroup: true, replicas: placementGroupServerLimit });
    expect(messageAt(toInput(crowded), "tenants[0].workers[0].replicas")).toMatch(new RegExp(`^${placementGroupServerLimit} replicas `));
  });

  it("warns about an unknown control-plane server type at its key", () => {
    const raw = baseline();
    (raw.tenants[1]!.controlPlane as Record<string, unknown>).machineType = "cx99";
    expect(parseFleetConfig(toInput(raw)).warnings.map((warning) => warning.path)).toEqual(["tenants[1].controlPlane.machineType"]);
  });
});
