import { firstSubnet, mustParseCidr } from "../config/cidr";
import { kubeProxyModeOf } from "./caren-cluster-config";
import type { TenantSettings } from "../config/fleet-config";

/**
 * The settings of a tenant that cannot change once its cluster exists. The program records
 * them in the stack output `tenantImmutables` and, on the next run, refuses a change before
 * anything is registered, naming the key, the deployed value and the way out. Otherwise the
 * change would preview green and `up` would report success while the topology controller
 * hangs on a refused patch:
 * - `network.nodesCidr` and the nodes subnet: CAPH refuses any change to the HetznerCluster's
 *   `spec.hcloudNetwork` (syself/cluster-api-provider-hetzner@v1.1.8:
 *   api/v1beta1/hetznercluster_webhook.go `ValidateUpdate`, "field is immutable");
 * - the first region: the same webhook refuses a change to `controlPlaneLoadBalancer.region`
 *   (the ClusterClass sets it to the first region) and keeps the regions in the old first
 *   region's network zone;
 * - `network.podsCidr` and `network.servicesCidr`: kubeadm writes them into the cluster at
 *   `kubeadm init` only (sigs.k8s.io/cluster-api@v1.12.10:
 *   bootstrap/kubeadm/internal/controllers/kubeadmconfig_controller.go
 *   `computeClusterConfigurationAndAdditionalData`, for a cluster not yet initialised), so a
 *   new range never reaches the running control plane and new nodes disagree with old ones;
 * - `namespace`: the Cluster, its Secret and its add-ons live there, and Kubernetes objects
 *   cannot move between namespaces: a new namespace deletes the cluster and creates another;
 * - `kubeProxy.mode` and `cni.kubeProxyReplacement` (the kube-proxy mode): CAREN's `kubeProxy.mode` "cannot be
 *   changed after cluster creation" (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 *   api/v1alpha1/clusterconfig_types.go, `self == oldSelf`).
 */

/** One tenant's immutable settings, as recorded in the stack output. */
export interface TenantImmutables {
  /** Absent in records written before it was recorded: then it is not compared. */
  readonly namespace?: string;
  readonly nodesCidr: string;
  readonly nodesSubnetCidr: string;
  readonly podsCidr: string;
  readonly servicesCidr: string;
  readonly firstRegion: string;
  readonly kubeProxyReplacement: boolean;
  /**
   * The kube-proxy mode (`iptables` when unset: kubeadm's default). Absent in records written
   * before it was recorded: then only `kubeProxyReplacement` is compared.
   */
  readonly kubeProxyMode?: string;
}

/** The config key (below `tenants[i]`) of each field, and why it cannot change. */
const fields: Readonly<Record<keyof TenantImmutables, { key: string; why: string }>> = {
  namespace: { key: "namespace", why: "the Cluster lives in it, and a Kubernetes object cannot move to another namespace: the cluster would be deleted and a new one created" },
  nodesCidr: { key: "network.nodesCidr", why: "CAPH refuses changes to the HetznerCluster's network" },
  nodesSubnetCidr: { key: "network.nodesSubnetCidr", why: "CAPH refuses changes to the HetznerCluster's network (the default is the first /24 of nodesCidr)" },
  podsCidr: { key: "network.podsCidr", why: "kubeadm sets the pod range only when the cluster is initialised" },
  servicesCidr: { key: "network.servicesCidr", why: "kubeadm sets the service range only when the cluster is initialised" },
  firstRegion: { key: "regions[0]", why: "CAPH refuses changes to the API load balancer's region, which is the first region, and keeps the regions in its network zone" },
  kubeProxyReplacement: { key: "cni.kubeProxyReplacement", why: "CAREN's kube-proxy mode cannot be changed after the cluster is created" },
  kubeProxyMode: { key: "kubeProxy.mode", why: "CAREN's kube-proxy mode cannot be changed after the cluster is created (kubeadm sets it up only when the cluster is initialised)" },
};

/** What `tenant` would record. */
export function tenantImmutables(tenant: TenantSettings): TenantImmutables {
  // Stryker disable next-line StringLiteral: equivalent, the schema requires a region (min 1), so the default never applies
  const [firstRegion = ""] = tenant.regions;
  return {
    namespace: tenant.namespace ?? tenant.name,
    nodesCidr: tenant.network.nodesCidr,
    nodesSubnetCidr: tenant.network.nodesSubnetCidr ?? firstSubnet(mustParseCidr(tenant.network.nodesCidr), 24),
    podsCidr: tenant.network.podsCidr,
    servicesCidr: tenant.network.servicesCidr,
    firstRegion,
    kubeProxyReplacement: kubeProxyModeOf(tenant) === "disabled",
    kubeProxyMode: kubeProxyModeOf(tenant) ?? "iptables",
  };
}

/** The `tenantImmutables` stack output. */
export function tenantImmutablesOutput(tenants: readonly TenantSettings[]): Record<string, TenantImmutables> {
  return Object.fromEntries(tenants.map((tenant) => [tenant.name, tenantImmutables(tenant)]));
}

/** The entries of a previous `tenantImmutables` output; malformed entries are skipped and reported. */
export function deployedImmutablesFrom(output: unknown): { immutables: Map<string, TenantImmutables>; ignored: string[] } {
  const immutables = new Map<string, TenantImmutables>();
  const ignored: string[] = [];
  if (output === undefined || output === null) {
    return { immutables, ignored };
  }
  if (typeof output !== "object" || Array.isArray(output)) {
    return { immutables, ignored: ["(the whole output is not a mapping)"] };
  }
  for (const [tenant, entry] of Object.entries(output as Record<string, unknown>)) {
    const record = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
    const strings = (["nodesCidr", "nodesSubnetCidr", "podsCidr", "servicesCidr", "firstRegion"] as const).every((field) => typeof record[field] === "string");
    const optionalStrings = (["namespace", "kubeProxyMode"] as const).every((field) => ["string", "undefined"].includes(typeof record[field]));
    if (strings && typeof record.kubeProxyReplacement === "boolean" && optionalStrings) {
      immutables.set(tenant, record as unknown as TenantImmutables);
    } else {
      ignored.push(tenant);
    }
  }
  return { immutables, ignored };
}

/** One refused change: the config key, and the message naming the deployed value and the way out. */
export interface ImmutableChange {
  readonly path: string;
  readonly message: string;
}

/** Every change of an immutable setting against what the last update deployed (tenants without a record are new). */
export function immutableChanges(tenants: readonly TenantSettings[], deployed: ReadonlyMap<string, TenantImmutables>): ImmutableChange[] {
  const changes: ImmutableChange[] = [];
  tenants.forEach((tenant, index) => {
    const before = deployed.get(tenant.name);
    if (!before) {
      return;
    }
    const now = tenantImmutables(tenant);
    for (const field of Object.keys(fields) as (keyof TenantImmutables)[]) {
      // With the mode recorded, the mode alone reports a change (one problem, not two).
      if (field === "kubeProxyReplacement" && before.kubeProxyMode !== undefined) continue;
      if (before[field] !== undefined && now[field] !== before[field]) {
        const { key, why } = fields[field];
        changes.push({
          path: `tenants[${index}].${key}`,
          message:
            `${JSON.stringify(now[field])} differs from the deployed ${JSON.stringify(before[field])}, and it cannot change once the cluster exists: ${why}; ` +
            `keep ${JSON.stringify(before[field])}, or create a new tenant (another name and namespace) with the new value, move the workloads and remove this one`,
        });
      }
    }
  });
  return changes;
}
