import { clusterClassNamespace } from "../platform/hetzner-cluster-class";

/**
 * What a shard stack's ManagementReference component (components/management-reference) writes
 * into the management cluster, as plain data: the shard's marker ConfigMap, which says which
 * stack declares which tenants, for operators and `kubectl`.
 */

/** The marker's name for a stack: a DNS label (lower case, other characters become "-"). */
export function shardMarkerName(stack: string): string {
  const label = `capi-fleet-shard-${stack.split("/").pop() ?? stack}`.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  return label.slice(0, 63).replace(/-+$/, "");
}

/** Whose marker it is: the shard stack, its management stack and its tenants. */
export interface ShardMarkerSpec {
  /** The management stack (fully qualified). */
  readonly managementStack: string;
  /** This shard stack (fully qualified). */
  readonly shardStack: string;
  /** This shard's tenants (name and namespace). */
  readonly tenants: readonly { name: string; namespace: string }[];
}

/** The shard's marker ConfigMap, in the ClusterClass's namespace (`capi-fleet-system/capi-fleet-shard-<stack>`). */
export function shardMarker(spec: ShardMarkerSpec) {
  return {
    metadata: {
      name: shardMarkerName(spec.shardStack),
      namespace: clusterClassNamespace,
      labels: { "capi-fleet.io/shard": "true" },
      annotations: { "capi-fleet.io/management-stack": spec.managementStack, "capi-fleet.io/shard-stack": spec.shardStack },
    },
    data: { tenants: JSON.stringify(spec.tenants.map(({ name, namespace }) => ({ name, namespace }))) },
  };
}
