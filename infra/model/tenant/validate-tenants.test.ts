// The tenants' settings through parseFleetConfig: names, namespaces, ranges and routing domains,
// regions, pools, sizes at the upstream limits, kube-proxy and CNI, CAREN settings (validate-tenants.ts).
import { describe, expect, it } from "vitest";
import { alphaToken, baseline, betaToken, expectRejected, messageAt, pathsOf, pool0, tenant, toInput, type BadInput, type RawFleet } from "../../../tests/support/fleet-config-fixtures";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { catalog } from "../versions/catalog";
import { placementGroupServerLimit } from "../facts/hetzner";

const karpenterImage = "registry.example.com/karpenter-clusterapi-controller:v0.2.0";
/** Tenant 0's first pool sized by Karpenter (experimental), with the image it needs. */
function withKarpenter(raw: RawFleet): void {
  const pool = pool0(raw);
  delete pool.replicas;
  pool.autoscaling = { provider: "karpenter", cpuLimit: 16 };
  raw.tenants[0]!.karpenter = { image: karpenterImage };
}

/** The tenants' settings and their cross-field rules. */
const badInputs: BadInput[] = [
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
  ["neither replicas nor autoscaling", (r) => delete (r.tenants[0]!.workers as Record<string, unknown>[])[0]!.replicas, "tenants[0].workers[0].replicas", "is missing; allowed: replicas (0 to 100), or autoscaling: { minSize, maxSize } or autoscaling: { provider: karpenter, cpuLimit } instead"],
  ["Karpenter next to replicas", (r) => { withKarpenter(r); pool0(r).replicas = 2; }, "tenants[0].workers[0].replicas", "every scale Karpenter makes (CAPI's topology controller owns replicas when set); allowed: either replicas or autoscaling"],
  ["both autoscalers on one pool", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).maxSize = 3; }, "tenants[0].workers[0].autoscaling.maxSize", "allowed keys: provider, cpuLimit, expireAfter, consolidation"],
  ["an autoscaler nobody runs", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).provider = "keda"; }, "tenants[0].workers[0].autoscaling.provider", '"keda" is not an autoscaler the fleet runs; allowed: cluster-autoscaler, karpenter'],
  ["Karpenter without a CPU limit", (r) => { withKarpenter(r); delete (pool0(r).autoscaling as Record<string, unknown>).cpuLimit; }, "tenants[0].workers[0].autoscaling.cpuLimit", "is required (number)"],
  ["Karpenter's CPU limit of 0", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).cpuLimit = 0; }, "tenants[0].workers[0].autoscaling.cpuLimit", "must be 1 or more; allowed: 1 to 1000"],
  ["Karpenter's CPU limit above 1000", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).cpuLimit = 1001; }, "tenants[0].workers[0].autoscaling.cpuLimit", "must be at most 1000; allowed: 1 to 1000"],
  ["Karpenter's CPU limit below one server", (r) => { withKarpenter(r); pool0(r).machineType = "cx33"; (pool0(r).autoscaling as Record<string, unknown>).cpuLimit = 3; }, "tenants[0].workers[0].autoscaling.cpuLimit", "3 is below one cx33 server (4 vCPUs), so Karpenter could never create one; allowed: 4 to 1000"],
  ["Karpenter on a server type of unknown size", (r) => { withKarpenter(r); pool0(r).machineType = "cpx42"; }, "tenants[0].workers[0].machineType", '"cpx42" has no known size, and Karpenter must know a server\'s CPU and memory before it exists (catalog.ts hcloud.serverTypeCapacity); allowed with Karpenter: cx23, cx33'],
  ["Karpenter's expireAfter in days", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).expireAfter = "30d"; }, "tenants[0].workers[0].autoscaling.expireAfter", '"30d" is not a Karpenter duration; allowed: hours, minutes and seconds such as 720h, 30m, 1h30m or 0s, or Never'],
  ["Karpenter's consolidation after a bare number", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).consolidation = { after: "30" }; }, "tenants[0].workers[0].autoscaling.consolidation.after", '"30" is not a Karpenter duration'],
  ["Karpenter's consolidation policy misspelt", (r) => { withKarpenter(r); (pool0(r).autoscaling as Record<string, unknown>).consolidation = { policy: "WhenUnderutilized" }; }, "tenants[0].workers[0].autoscaling.consolidation.policy", '"WhenUnderutilized" is not allowed; allowed: WhenEmptyOrUnderutilized, WhenEmpty'],
  ["a Karpenter pool without the image", (r) => { withKarpenter(r); delete r.tenants[0]!.karpenter; }, "tenants[0].karpenter.image", 'is missing, and workers[0] ("md-0") is sized by Karpenter, whose project publishes no image; allowed: the controller image you built from its release tag'],
  ["Karpenter's image unpinned", (r) => { withKarpenter(r); r.tenants[0]!.karpenter = { image: "registry.example.com/karpenter:latest" }; }, "tenants[0].karpenter.image", '"registry.example.com/karpenter:latest" is not a pinned image reference; allowed: <registry>/<path>:<tag> or <registry>/<path>@sha256:<digest>'],
  ["Karpenter's image without a registry", (r) => { withKarpenter(r); r.tenants[0]!.karpenter = { image: "karpenter-clusterapi-controller:v0.2.0" }; }, "tenants[0].karpenter.image", "is not a pinned image reference"],
  ["Karpenter's image set with no Karpenter pool", (r) => { r.tenants[0]!.karpenter = { image: karpenterImage }; }, "tenants[0].karpenter", "is set, but no pool has autoscaling.provider karpenter; allowed: remove karpenter"],
  ["a Karpenter pool too big for its placement group", (r) => { withKarpenter(r); Object.assign(pool0(r), { placementGroup: true, machineType: "cx23" }); (pool0(r).autoscaling as Record<string, unknown>).cpuLimit = 18; }, "tenants[0].workers[0].autoscaling.cpuLimit", "10 servers as the CPU limit allows (with the one CAPI starts the pool with) do not fit a placement group"],
  ["autoscaling minSize above maxSize", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: 4, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "4 is above maxSize 3; allowed: 0 to 3"],
  ["autoscaling from zero on an Arm server type", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.machineType = "cax21"; pool.autoscaling = { minSize: 0, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "0 on the Arm server type \"cax21\": the autoscaler models a node of an empty pool as amd64"],
  ["negative autoscaling minSize", (r) => { const pool = (r.tenants[0]!.workers as Record<string, unknown>[])[0]!; delete pool.replicas; pool.autoscaling = { minSize: -1, maxSize: 3 }; }, "tenants[0].workers[0].autoscaling.minSize", "must be 0 or more; allowed: 0 to 100"],
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
  ["a Hetzner location CAPH does not accept", (r) => (r.tenants[0]!.regions = ["fsn1", "fal1"]), "tenants[0].regions[1]", "allowed: fsn1, nbg1, hel1, ash, hil, sin"],
  ["tenants in one routing domain overlap", (r) => { r.tenants[0]!.network = { routingDomain: "core" }; r.tenants[1]!.network = { routingDomain: "core", nodesCidr: "10.1.0.0/16" }; }, "tenants[1].network.podsCidr", 'in routing domain "core"'],
  ["public tenant node network", (r) => (r.tenants[0]!.network = { nodesCidr: "100.64.0.0/16" }), "tenants[0].network.nodesCidr", "allowed: inside 10.0.0.0/8"],
  ["Calico requested", (r) => (r.tenants[0]!.cni = { provider: "calico" }), "tenants[0].cni.provider", "allowed: cilium"],
  ["unknown CNI strategy", (r) => (r.tenants[0]!.cni = { provider: "cilium", strategy: "Helm" }), "tenants[0].cni.strategy", "allowed: HelmAddon, ClusterResourceSet"],
  ["LB GC flag as a string", (r) => (r.tenants[0]!.loadBalancerGarbageCollection = "no"), "tenants[0].loadBalancerGarbageCollection", "expected boolean"],
  ["readiness wait as a string", (r) => (r.tenants[1]!.waitForReady = "no"), "tenants[1].waitForReady", "expected boolean"],
  ["LB GC opt-out as an annotation", (r) => (r.tenants[0]!.annotations = { "caren.nutanix.com/loadbalancer-gc": "false" }), 'tenants[0].annotations["caren.nutanix.com/loadbalancer-gc"]', "set loadBalancerGarbageCollection"],
  ["unknown CAREN preflight check", (r) => (r.tenants[0]!.carenPreflight = { skip: ["Registry", "Registries"] }), "tenants[0].carenPreflight.skip[1]", "is not a preflight check CAREN runs for this fleet; allowed: GenericConfiguration, Registry"],
  ["CAREN preflight: skip all", (r) => (r.tenants[0]!.carenPreflight = { skip: ["all"] }), "tenants[0].carenPreflight.skip[0]", "allowed: GenericConfiguration, Registry"],
  ["CAREN preflight skip naming nothing", (r) => (r.tenants[0]!.carenPreflight = { skip: [] }), "tenants[0].carenPreflight.skip", "names no check"],
  ["CAREN preflight skip as an annotation", (r) => (r.tenants[0]!.annotations = { "preflight.cluster.caren.nutanix.com/skip": "Registry" }), 'tenants[0].annotations["preflight.cluster.caren.nutanix.com/skip"]', "set carenPreflight.skip"],
  ["annotation key with a space", (r) => (r.tenants[0]!.annotations = { "upgrade concurrency": "2" }), 'tenants[0].annotations["upgrade concurrency"]', "allowed: [prefix/]name"],
  ["annotation value not a string", (r) => (r.tenants[0]!.annotations = { "topology.cluster.x-k8s.io/upgrade-concurrency": 2 }), 'tenants[0].annotations["topology.cluster.x-k8s.io/upgrade-concurrency"]', "expected string"],
  ["tenants is not a list", (r) => (r.tenants = "alpha" as never), "tenants", "expected array"],
  ["ClusterResourceSet replacing kube-proxy", (r) => (r.tenants[0]!.cni = { provider: "cilium", strategy: "ClusterResourceSet", kubeProxyReplacement: true }), "tenants[0].cni.strategy", "allowed: strategy HelmAddon"],
];

describe("parseFleetConfig", () => {
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

  it("accepts ranges at kubeadm's limits: services /12 and /28, pods with one /24 per server", () => {
    const raw = baseline();
    raw.tenants[0]!.network = { servicesCidr: "10.128.0.0/12", podsCidr: "192.168.0.0/21" };
    raw.tenants[1]!.network = { servicesCidr: "10.128.0.0/28", nodesCidr: "10.0.0.0/16", nodesSubnetCidr: "10.0.0.0/28" };
    expect(() => parseFleetConfig(toInput(raw))).not.toThrow();
  });

  it(`has at least 30 distinct bad-input cases (has ${badInputs.length})`, () => {
    expect(new Set(badInputs.map(([description]) => description)).size).toBe(badInputs.length);
    expect(badInputs.length).toBeGreaterThanOrEqual(30);
  });

  it.each(badInputs)("rejects %s", (_description, mutate, path, allowed) => {
    expectRejected(mutate, path, allowed);
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
});

describe("a Karpenter pool (experimental)", () => {
  it("takes Karpenter's defaults for expiry and consolidation, and no replicas or bounds", () => {
    const raw = baseline();
    withKarpenter(raw);
    const config = parseFleetConfig(toInput(raw));
    expect(config.tenants[0]!.workers[0]!.autoscaling).toEqual({ provider: "karpenter", cpuLimit: 16, expireAfter: "720h", consolidation: { policy: "WhenEmptyOrUnderutilized", after: "30s" } });
    expect(config.tenants[0]!.workers[0]!.replicas).toBeUndefined();
    expect(config.tenants[0]!.karpenter).toEqual({ image: karpenterImage });
    expect(config.warnings).toEqual([]);
  });

  it("accepts Never, compound durations, a digest and the cluster autoscaler named explicitly next to it", () => {
    const raw = baseline();
    withKarpenter(raw);
    Object.assign(pool0(raw).autoscaling as Record<string, unknown>, { expireAfter: "Never", consolidation: { policy: "WhenEmpty", after: "1h30m" } });
    raw.tenants[0]!.karpenter = { image: `registry.example.com:5000/team/karpenter@sha256:${"a".repeat(64)}` };
    raw.tenants[0]!.workers = [...(raw.tenants[0]!.workers as object[]), { name: "md-1", machineType: "cx23", failureDomain: "fsn1", autoscaling: { provider: "cluster-autoscaler", minSize: 1, maxSize: 2 } }];
    const config = parseFleetConfig(toInput(raw));
    expect(config.tenants[0]!.workers.map((pool) => pool.autoscaling)).toEqual([
      { provider: "karpenter", cpuLimit: 16, expireAfter: "Never", consolidation: { policy: "WhenEmpty", after: "1h30m" } },
      { provider: "cluster-autoscaler", minSize: 1, maxSize: 2 },
    ]);
  });

  it("sizes the pod range for the servers its CPU limit allows", () => {
    const raw = baseline();
    withKarpenter(raw);
    // 1000 vCPUs of cx23 (2 each) are 500 servers, more than a /23 of pods (two /24s) holds.
    (pool0(raw).autoscaling as Record<string, unknown>).cpuLimit = 1000;
    raw.tenants[0]!.network = { podsCidr: "192.168.0.0/23" };
    expect(pathsOf(toInput(raw))).toContain("tenants[0].network.podsCidr");
  });
});

describe("parseFleetConfig: errors name the key path, the value and what is allowed", () => {
  it("reports a region listed twice at the second one", () => {
    const raw = baseline();
    raw.tenants[0]!.regions = ["fsn1", "nbg1", "fsn1"];
    expect(pathsOf(toInput(raw))).toEqual(["tenants[0].regions[2]"]);
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

describe("parseFleetConfig: messages name the value and the key to change", () => {
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
});
