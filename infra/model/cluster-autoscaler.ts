/**
 * Worker pools sized by the Kubernetes cluster autoscaler, which CAREN's
 * `addons.clusterAutoscaler` handler installs, and what CAPI does with them.
 *
 * An autoscaled pool's MachineDeployment topology carries the autoscaler's min/max annotations
 * and no `replicas`. CAPI copies the topology's annotations onto the MachineDeployment (and its
 * machine template) and sets `spec.replicas` only from the topology's own `replicas`
 * (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/desired_state.go,
 * `computeMachineDeployment`: `desiredMachineDeploymentObj.Spec.Replicas = machineDeploymentTopology.Replicas`),
 * so with none the topology controller never owns the field and does not fight the autoscaler.
 * CAPI's MachineDeployment webhook then defaults it from the annotations: minSize for a new
 * MachineDeployment, and for an existing one its old replicas clamped into [minSize, maxSize]
 * (internal/webhooks/machinedeployment.go, `calculateMachineDeploymentReplicas`).
 */

/** The autoscaler's node-group bounds (sigs.k8s.io/cluster-api@v1.12.10: api/core/v1beta2/common_types.go). */
export const autoscalerAnnotations = {
  minSize: "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
  maxSize: "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
} as const;

/**
 * How CAREN deploys the autoscaler (`clusterConfig.addons.clusterAutoscaler.strategy`): through
 * CAAPH, as for Cilium (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 * pkg/handlers/lifecycle/clusterautoscaler/handler.go; the CRD's default too).
 */
export const clusterAutoscalerStrategy = "HelmAddon";

/** The pool fields these functions read. */
export interface PoolSize {
  readonly name: string;
  readonly replicas?: number | undefined;
  readonly autoscaling?: { readonly minSize: number; readonly maxSize: number } | undefined;
}

/** True when the autoscaler sizes the pool. */
export function isAutoscaled(pool: PoolSize): boolean {
  return pool.autoscaling !== undefined;
}

/** The most servers the pool can have outside a rollout: its replicas, or the autoscaler's maxSize. */
export function poolMaxReplicas(pool: PoolSize): number {
  return pool.autoscaling?.maxSize ?? pool.replicas ?? 0;
}

/** The annotations of an autoscaled pool's MachineDeployment topology (values are strings in Kubernetes). */
export function poolAutoscalerAnnotations(pool: PoolSize): Record<string, string> | undefined {
  const bounds = pool.autoscaling;
  return bounds ? { [autoscalerAnnotations.minSize]: String(bounds.minSize), [autoscalerAnnotations.maxSize]: String(bounds.maxSize) } : undefined;
}

/** The fields of a MachineDeployment topology (as the Cluster declares it) the policy rule reads. */
export interface MachineDeploymentTopologyView {
  readonly name?: unknown;
  readonly replicas?: unknown;
  readonly metadata?: { readonly annotations?: Readonly<Record<string, unknown>> };
}

/**
 * Why a MachineDeployment topology pins replicas on an autoscaled pool, or undefined. With both,
 * CAPI's topology controller resets `spec.replicas` to the topology's value at every reconcile,
 * undoing each scale the autoscaler makes.
 */
export function pinnedAutoscaledPoolProblem(md: MachineDeploymentTopologyView): string | undefined {
  const annotations = md.metadata?.annotations ?? {};
  const bounds = [autoscalerAnnotations.minSize, autoscalerAnnotations.maxSize].filter((key) => key in annotations);
  if (bounds.length === 0 || md.replicas === undefined || md.replicas === null) return undefined;
  return `MachineDeployment ${JSON.stringify(md.name ?? "?")} has the autoscaler's ${bounds.join(" and ")} annotation${bounds.length > 1 ? "s" : ""} and replicas: ${JSON.stringify(md.replicas)}`;
}
