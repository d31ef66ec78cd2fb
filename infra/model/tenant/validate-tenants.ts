// The tenants' cross-field rules: unique names and namespaces, ranges that fit and do not overlap
// within a routing domain, regions and pools, CAREN settings. The schema checks each field alone.
import { cidrContains, cidrsOverlap, firstSubnet, isPrivateIpv4, mustParseCidr, type Cidr } from "../config/cidr";
import { type FleetSettings, type TenantSettings, type WorkerPoolSettings } from "../config/fleet-config";
import type { SecretValue } from "../config/secret";
import type { RegistryCredentials } from "../config/secret-reader";
import type { ConfigProblem } from "../config/stack-config";
import { formatValue } from "../config/text";
import { clusterAutoscalerBounds, poolMaxReplicas, scaleFromZeroProblem } from "../platform/cluster-autoscaler";
import { isKarpenterPool, karpenterPoolProblems } from "../platform/karpenter";
import { reservedNamespaces } from "../platform/platform-namespaces";
import { kubeProxyModeOf } from "./caren-cluster-config";
import { tenantNameLabelProblem } from "./tenant-firewall";
import { networkZoneOf, placementGroupServerLimit } from "../facts/hetzner";

export type Tenant = TenantSettings & {
  /** Namespace of the tenant's Cluster (the tenant name unless set). */
  readonly namespace: string;
  /** Token of the tenant's own Hetzner project. */
  readonly hcloudToken: SecretValue;
  /** Registry credentials by the name the tenant's registries reference (`tenantRegistryCredentials.<tenant>`). */
  readonly registryCredentials: ReadonlyMap<string, RegistryCredentials>;
};

interface NamedCidr {
  readonly path: string;
  readonly cidr: Cidr;
}

export function tenantProblems(settings: Pick<FleetSettings, "tenants" | "gitops">, options: { gitopsFromManagementStack?: boolean } = {}): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const firstTenantWith = new Map<string, number>();
  const firstTenantInNamespace = new Map<string, number>();
  const rangesByRoutingDomain = new Map<string, NamedCidr[]>();
  const reserved = reservedNamespaces();
  // Tenant ranges are not compared with the management cluster's: each tenant has its own
  // Hetzner project and network, and the management cluster reaches a tenant only through
  // the public address of its API load balancer (CAPH's control-plane endpoint), so no
  // route joins them. Tenants that are routed together say so with a shared routingDomain.

  settings.tenants.forEach((tenant, index) => {
    const at = `tenants[${index}]`;
    const previous = firstTenantWith.get(tenant.name);
    if (previous !== undefined) {
      problems.push({ path: `${at}.name`, message: `${formatValue(tenant.name)} is already used by tenants[${previous}]; tenant names must be unique` });
    } else {
      firstTenantWith.set(tenant.name, index);
    }
    const labelProblem = tenantNameLabelProblem(tenant.name);
    if (labelProblem) problems.push({ path: `${at}.name`, message: labelProblem });
    const namespace = tenant.namespace ?? tenant.name;
    const sharing = firstTenantInNamespace.get(namespace);
    if (sharing !== undefined) {
      problems.push({
        path: `${at}.namespace`,
        message: `${formatValue(namespace)} is already the namespace of tenants[${sharing}]; each tenant needs its own namespace (its "hcloud" Secret is per namespace)`,
      });
    } else {
      firstTenantInNamespace.set(namespace, index);
    }
    const owner = reserved.get(namespace);
    if (owner !== undefined) {
      problems.push({
        path: tenant.namespace === undefined ? `${at}.name` : `${at}.namespace`,
        message:
          `${formatValue(namespace)} is the namespace of ${owner} on the management cluster; the tenant would take it over and deleting the tenant would delete it; ` +
          `allowed: any other DNS label${tenant.namespace === undefined ? ` (set ${at}.namespace, which defaults to the name)` : ""}`,
      });
    }
    problems.push(...regionProblems(tenant, at), ...workerProblems(tenant, at));
    problems.push(...carenSettingProblems(tenant, at));

    const ranges: NamedCidr[] = (["nodesCidr", "podsCidr", "servicesCidr"] as const).map((field) => ({
      path: `${at}.network.${field}`,
      cidr: mustParseCidr(tenant.network[field]),
    }));
    const [nodes] = ranges;
    if (nodes && !isPrivateIpv4(nodes.cidr)) {
      problems.push({
        path: nodes.path,
        message: `${formatValue(nodes.cidr.text)} is not a private range; allowed: inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (hcloud networks are RFC 1918 only)`,
      });
    }
    problems.push(...overlapProblems(ranges, ranges, "of the same tenant"), ...rangeSizeProblems(tenant, at));
    const subnet = tenant.network.nodesSubnetCidr;
    if (nodes && subnet !== undefined && !cidrContains(nodes.cidr, mustParseCidr(subnet))) {
      problems.push({
        path: `${at}.network.nodesSubnetCidr`,
        message: `${formatValue(subnet)} is not inside ${at}.network.nodesCidr ${nodes.cidr.text}`,
      });
    }
    if (tenant.apps && !settings.gitops && !options.gitopsFromManagementStack) {
      problems.push({
        path: `${at}.apps`,
        message: "needs the top-level gitops setting (Flux syncs the apps from the fleet repository); set gitops.url or remove apps",
      });
    }
    const domain = tenant.network.routingDomain;
    if (domain) {
      const earlier = rangesByRoutingDomain.get(domain) ?? [];
      problems.push(...overlapProblems(ranges, earlier, `in routing domain "${domain}"`));
      rangesByRoutingDomain.set(domain, [...earlier, ...ranges]);
    }
  });
  return problems;
}

/** Problems for ranges in `candidates` overlapping an earlier range in `existing` (skipping self-pairs). */
function overlapProblems(candidates: readonly NamedCidr[], existing: readonly NamedCidr[], where: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  candidates.forEach((candidate, i) => {
    const clash = existing.find((other, j) => (existing !== candidates || j < i) && cidrsOverlap(candidate.cidr, other.cidr));
    if (clash) {
      problems.push({
        path: candidate.path,
        message: `${formatValue(candidate.cidr.text)} overlaps ${clash.path} ${clash.cidr.text} ${where}; pick a disjoint range`,
      });
    }
  });
  return problems;
}

/**
 * Combinations of CAREN settings that break:
 * - kube-proxy replacement with the ClusterResourceSet strategy: CAREN's Cilium CRS manifest is
 *   static with `kube-proxy-replacement: false` (charts/cluster-api-runtime-extensions-nutanix/
 *   templates/cni/cilium/manifests/cilium-configmap.yaml at v0.50.0), so its hook waits forever
 *   for a kube-proxy replacement that never comes;
 * - Cilium values with the ClusterResourceSet strategy: CAREN reads them for HelmAddon only
 *   (api/v1alpha1/addon_types.go, "when HelmAddon is the strategy");
 * - `cni.kubeProxyReplacement: true` next to another `kubeProxy.mode`;
 * - Cilium values without `kubeProxyReplacement: true` while kube-proxy is disabled (CAREN's webhook
 *   denies the Cluster);
 * - a proxy with neither http nor https.
 */
function carenSettingProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const crs = tenant.cni.strategy === "ClusterResourceSet";
  if (tenant.cni.kubeProxyReplacement && tenant.kubeProxy && tenant.kubeProxy.mode !== "disabled") {
    problems.push({
      path: `${at}.kubeProxy.mode`,
      message: `${formatValue(tenant.kubeProxy.mode)} contradicts ${at}.cni.kubeProxyReplacement: true (which means disabled); allowed: remove one of them, or set disabled`,
    });
  } else if (crs && kubeProxyModeOf(tenant) === "disabled") {
    problems.push({
      path: `${at}.cni.strategy`,
      message:
        `ClusterResourceSet cannot replace kube-proxy: CAREN's Cilium manifest for it is static with kube-proxy-replacement: false, and its hook would wait forever; ` +
        "allowed: strategy HelmAddon with kube-proxy replacement, or keep kube-proxy",
    });
  }
  if (crs && tenant.cni.values) {
    problems.push({ path: `${at}.cni.values`, message: "is used by CAREN with the HelmAddon strategy only; allowed: strategy HelmAddon, or remove the values" });
  } else if (tenant.cni.values && kubeProxyModeOf(tenant) === "disabled" && tenant.cni.values.kubeProxyReplacement !== true) {
    // CAREN's Cluster webhook denies this combination (pkg/webhook/cluster/cilium_configuration_validator.go
    // at v0.50.0): without kube-proxy, Cilium must replace it.
    problems.push({
      path: `${at}.cni.values.kubeProxyReplacement`,
      message: `${formatValue(tenant.cni.values.kubeProxyReplacement)} leaves the cluster without kube-proxy and without its replacement (kube-proxy mode disabled); allowed: true`,
    });
  }
  if (tenant.proxy && !tenant.proxy.http && !tenant.proxy.https) {
    problems.push({ path: `${at}.proxy`, message: "sets no proxy; allowed: http and/or https (additionalNoProxy only adds exceptions), or remove proxy" });
  }
  return problems;
}

function regionProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const [first] = tenant.regions;
  tenant.regions.forEach((region, index) => {
    if (tenant.regions.indexOf(region) !== index) {
      problems.push({ path: `${at}.regions[${index}]`, message: `${formatValue(region)} is listed twice` });
    } else if (first && networkZoneOf[region] !== networkZoneOf[first]) {
      problems.push({
        path: `${at}.regions[${index}]`,
        message: `${formatValue(region)} is in network zone ${networkZoneOf[region]}, but ${first} is in ${networkZoneOf[first]}; a tenant's private network spans one zone`,
      });
    }
  });
  return problems;
}

function workerProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  tenant.workers.forEach((pool, index) => {
    if (seen.has(pool.name)) {
      problems.push({ path: `${at}.workers[${index}].name`, message: `${formatValue(pool.name)} is already a worker pool of this tenant; pool names must be unique` });
    }
    seen.add(pool.name);
    problems.push(...poolSizeProblems(pool, `${at}.workers[${index}]`));
    if (!tenant.regions.includes(pool.failureDomain)) {
      problems.push({
        path: `${at}.workers[${index}].failureDomain`,
        message: `${formatValue(pool.failureDomain)} is not one of the tenant's regions; allowed: ${tenant.regions.join(", ")}`,
      });
    }
  });
  // Karpenter's image is the tenant's, since the provider publishes none (catalog.ts, karpenterClusterApi).
  const karpenterPool = tenant.workers.findIndex(isKarpenterPool);
  const firstKarpenterPool = tenant.workers[karpenterPool];
  if (firstKarpenterPool && !tenant.karpenter) {
    problems.push({
      path: `${at}.karpenter.image`,
      message: `is missing, and workers[${karpenterPool}] (${formatValue(firstKarpenterPool.name)}) is sized by Karpenter, whose project publishes no image; allowed: the controller image you built from its release tag, e.g. registry.example.com/karpenter-clusterapi-controller:v0.2.0`,
    });
  } else if (!firstKarpenterPool && tenant.karpenter) {
    problems.push({ path: `${at}.karpenter`, message: "is set, but no pool has autoscaling.provider karpenter; allowed: remove karpenter, or give a pool autoscaling: { provider: karpenter, cpuLimit }" });
  }
  return problems;
}

/**
 * A pool is sized either by `replicas` or by one autoscaler (`autoscaling`: the cluster
 * autoscaler or Karpenter, never both: `provider` picks one), never both: CAPI's topology
 * controller would reset every scale the autoscaler makes (cluster-autoscaler.ts). In a
 * placement group the most servers it can have, plus one rollout surge, fit Hetzner's limit.
 */
function poolSizeProblems(pool: WorkerPoolSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { autoscaling, replicas } = pool;
  const karpenter = isKarpenterPool(pool);
  if (autoscaling && replicas !== undefined) {
    const who = karpenter ? "Karpenter" : "the autoscaler";
    problems.push({
      path: `${at}.replicas`,
      message: `${replicas} replicas on an autoscaled pool would undo every scale ${who} makes (CAPI's topology controller owns replicas when set); allowed: either replicas or autoscaling, so remove replicas`,
    });
  } else if (!autoscaling && replicas === undefined) {
    problems.push({ path: `${at}.replicas`, message: "is missing; allowed: replicas (0 to 100), or autoscaling: { minSize, maxSize } or autoscaling: { provider: karpenter, cpuLimit } instead" });
  }
  const bounds = clusterAutoscalerBounds(pool);
  if (bounds && bounds.minSize > bounds.maxSize) {
    problems.push({
      path: `${at}.autoscaling.minSize`,
      message: `${bounds.minSize} is above maxSize ${bounds.maxSize}; allowed: 0 to ${bounds.maxSize}`,
    });
  }
  if (karpenter) problems.push(...karpenterPoolProblems(pool).map((problem) => ({ path: `${at}.${problem.path}`, message: problem.message })));
  const fromZero = scaleFromZeroProblem(pool);
  if (fromZero) problems.push({ path: `${at}.autoscaling.minSize`, message: fromZero });
  const largest = poolMaxReplicas(pool);
  if (pool.placementGroup && largest + 1 > placementGroupServerLimit) {
    const field = karpenter ? "autoscaling.cpuLimit" : autoscaling ? "autoscaling.maxSize" : "replicas";
    problems.push({
      path: `${at}.${field}`,
      message:
        `${largest} ${karpenter ? "servers as the CPU limit allows (with the one CAPI starts the pool with) do" : autoscaling ? "as maxSize does" : "replicas do"} not fit a placement group: Hetzner allows ${placementGroupServerLimit} servers per group and a rolling update adds one; ` +
        `allowed: at most ${placementGroupServerLimit - 1}, or set ${at}.placementGroup: false, or split the pool`,
    });
  }
  return problems;
}

/**
 * kubeadm's limits on the ranges (kubernetes/kubernetes@v1.35.4: cmd/kubeadm/app/constants/constants.go,
 * cmd/kubeadm/app/apis/kubeadm/validation/validation.go `ValidateNetworking`; kube-apiserver applies
 * the same service-range limit in cmd/kube-apiserver/app/options/validation.go).
 */
const kubeadmLimits = {
  /** `MaximumBitsForServiceSubnet`: for IPv4 the service range must be /12 or smaller. */
  maximumServiceHostBits: 20,
  /** `MinimumAddressesInServiceSubnet`: the DNS Service takes the tenth address. */
  minimumServiceAddresses: 10,
  /** kube-controller-manager's `--node-cidr-mask-size-ipv4` default, as kubeadm reads it (`getClusterNodeMask`). */
  nodeMask: 24,
  /** `PodSubnetNodeMaskMaxDiff`. */
  podSubnetNodeMaskMaxDiff: 16,
} as const;

/**
 * Servers a tenant can have at once: every control-plane and worker replica, plus the one
 * surge server each KubeadmControlPlane and MachineDeployment rollout adds by default
 * (CAPI: `maxSurge` 1).
 */
function peakServerCount(tenant: TenantSettings): number {
  // An autoscaled pool counts at its maxSize: the autoscaler may grow it that far.
  const workers = tenant.workers.map(poolMaxReplicas).reduce((sum, replicas) => sum + replicas + (replicas > 0 ? 1 : 0), 0);
  return tenant.controlPlane.replicas + 1 + workers;
}

function rangeSizeProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const limits = kubeadmLimits;
  const services = mustParseCidr(tenant.network.servicesCidr);
  const serviceHostBits = 32 - services.prefixLength;
  // kubeadm refuses a range of fewer addresses than its minimum (ValidateIPNetFromString), so the smallest is a /28.
  const smallestServicePrefix = 32 - Math.ceil(Math.log2(limits.minimumServiceAddresses));
  if (serviceHostBits > limits.maximumServiceHostBits) {
    problems.push({
      path: `${at}.network.servicesCidr`,
      message: `${formatValue(services.text)} is larger than kubeadm and kube-apiserver accept for IPv4 services; allowed: /${32 - limits.maximumServiceHostBits} or smaller (up to /${smallestServicePrefix})`,
    });
  } else if (services.prefixLength > smallestServicePrefix) {
    problems.push({
      path: `${at}.network.servicesCidr`,
      message: `${formatValue(services.text)} is too small: kubeadm needs at least ${limits.minimumServiceAddresses} addresses (the DNS Service takes the tenth); allowed: /${smallestServicePrefix} or larger`,
    });
  }
  const servers = peakServerCount(tenant);
  const pods = mustParseCidr(tenant.network.podsCidr);
  // Read only when the pods range is at least one node's range (the first branch below takes the rest).
  const nodeRanges = 2 ** (limits.nodeMask - pods.prefixLength);
  if (pods.prefixLength > limits.nodeMask) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message: `${formatValue(pods.text)} is smaller than one node's pod range (/${limits.nodeMask}, kube-controller-manager's node mask, which Cilium's kubernetes IPAM uses); allowed: /${limits.nodeMask} or larger`,
    });
  } else if (limits.nodeMask - pods.prefixLength > limits.podSubnetNodeMaskMaxDiff) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message: `${formatValue(pods.text)} is more than ${limits.podSubnetNodeMaskMaxDiff} bits larger than the node mask /${limits.nodeMask}, which kubeadm refuses; allowed: /${limits.nodeMask - limits.podSubnetNodeMaskMaxDiff} or smaller`,
    });
  } else if (nodeRanges < servers) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message:
        `${formatValue(pods.text)} holds ${nodeRanges} node pod ranges of /${limits.nodeMask}, but the tenant can have ${servers} servers at once (replicas plus one rollout surge per pool and control plane); ` +
        `a node without a range gets no pod network; allowed: /${limits.nodeMask - Math.ceil(Math.log2(servers))} or larger`,
    });
  }
  const nodesSubnet = mustParseCidr(tenant.network.nodesSubnetCidr ?? firstSubnet(mustParseCidr(tenant.network.nodesCidr), 24));
  // hcloud keeps the network address, the gateway and the broadcast address of a subnet.
  const usable = 2 ** (32 - nodesSubnet.prefixLength) - 3;
  const needed = servers + 1;
  if (usable < needed) {
    problems.push({
      path: `${at}.network.${tenant.network.nodesSubnetCidr === undefined ? "nodesCidr" : "nodesSubnetCidr"}`,
      message:
        `${formatValue(nodesSubnet.text)} has ${usable} usable addresses, but the tenant needs ${needed} (${servers} servers at once, counting rollout surges, and the API load balancer), plus one per LoadBalancer Service; ` +
        `allowed: /${32 - Math.ceil(Math.log2(needed + 3))} or larger`,
    });
  }
  return problems;
}
