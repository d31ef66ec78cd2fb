import { catalog } from "../versions/catalog";
import { parseKubernetesVersion } from "../versions/kubernetes-version";
import { isKarpenterPool, karpenterCpuLimitAnnotation, karpenterMaxServers, type KarpenterLimits } from "./karpenter";
import { mirroredImage, type Mirrors } from "./mirrors";

/**
 * Worker pools sized by the Kubernetes cluster autoscaler, which the program runs on the
 * management cluster for each tenant with such a pool (components/cluster-autoscaler), and what
 * CAPI does with them.
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

/** The cluster autoscaler's bounds of a pool (`provider` may be left out). */
export interface ClusterAutoscalerBounds {
  readonly provider?: "cluster-autoscaler" | undefined;
  readonly minSize: number;
  readonly maxSize: number;
}

/** The pool fields these functions read. */
export interface PoolSize {
  readonly name: string;
  readonly machineType: string;
  readonly replicas?: number | undefined;
  readonly autoscaling?: ClusterAutoscalerBounds | KarpenterLimits | undefined;
}

/** True when an autoscaler (the cluster autoscaler or Karpenter) sizes the pool, so its topology pins no replicas. */
export function isAutoscaled(pool: PoolSize): boolean {
  return pool.autoscaling !== undefined;
}

/** The cluster autoscaler's bounds, when it sizes the pool. */
export function clusterAutoscalerBounds(pool: PoolSize): ClusterAutoscalerBounds | undefined {
  const autoscaling = pool.autoscaling;
  return autoscaling && autoscaling.provider !== "karpenter" ? autoscaling : undefined;
}

/**
 * Why a pool may not scale from zero, or undefined. An empty pool has no Node to copy, so the
 * autoscaler builds one from the HCloudMachineTemplate's `status.capacity` (cpu and memory only,
 * CAPH: pkg/services/hcloud/machinetemplate/machinetemplate.go) and labels it with the
 * architecture of `CAPI_SCALE_ZERO_DEFAULT_ARCH`, default amd64, unless the template publishes
 * `status.nodeInfo` (kubernetes/autoscaler@cluster-autoscaler-1.35.2:
 * cluster-autoscaler/cloudprovider/clusterapi/clusterapi_unstructured.go and
 * clusterapi_utils.go; 1.33 and 1.34 read no nodeInfo at all), which CAPH does not. An empty Arm
 * pool (Hetzner's cax types) would then be scaled up for amd64 pods and never for arm64 ones.
 */
export function scaleFromZeroProblem(pool: PoolSize): string | undefined {
  const bounds = clusterAutoscalerBounds(pool);
  if (bounds?.minSize !== 0 || !pool.machineType.startsWith("cax")) return undefined;
  return `0 on the Arm server type ${JSON.stringify(pool.machineType)}: the autoscaler models a node of an empty pool as amd64 (CAPH publishes only cpu and memory), so it would scale this pool up for amd64 pods and never for arm64 ones; allowed: 1 to ${bounds.maxSize}`;
}

/**
 * The most servers the pool can have outside a rollout: its replicas, the autoscaler's maxSize,
 * or for Karpenter the servers under its CPU limit plus the one CAPI's webhook gives a new
 * MachineDeployment without replicas or bounds (internal/webhooks/machinedeployment.go,
 * `calculateMachineDeploymentReplicas`), which Karpenter does not own.
 */
export function poolMaxReplicas(pool: PoolSize): number {
  if (isKarpenterPool(pool)) return karpenterMaxServers(pool) + 1;
  return clusterAutoscalerBounds(pool)?.maxSize ?? pool.replicas ?? 0;
}

/** The annotations of an autoscaled pool's MachineDeployment topology (values are strings in Kubernetes). */
export function poolAutoscalerAnnotations(pool: PoolSize): Record<string, string> | undefined {
  const bounds = clusterAutoscalerBounds(pool);
  return bounds ? { [autoscalerAnnotations.minSize]: String(bounds.minSize), [autoscalerAnnotations.maxSize]: String(bounds.maxSize) } : undefined;
}

/** The fields of a MachineDeployment topology (as the Cluster declares it) the policy rule reads. */
export interface MachineDeploymentTopologyView {
  readonly name?: unknown;
  readonly replicas?: unknown;
  readonly metadata?: { readonly annotations?: Readonly<Record<string, unknown>> };
}

/**
 * Why a MachineDeployment topology pins replicas on an autoscaled pool, or undefined: a pool with
 * the cluster autoscaler's bounds or Karpenter's mark (karpenter.ts). With both, CAPI's topology
 * controller resets `spec.replicas` to the topology's value at every reconcile, undoing each
 * scale the autoscaler makes.
 */
export function pinnedAutoscaledPoolProblem(md: MachineDeploymentTopologyView): string | undefined {
  const annotations = md.metadata?.annotations ?? {};
  if (md.replicas === undefined || md.replicas === null) return undefined;
  const bounds = [autoscalerAnnotations.minSize, autoscalerAnnotations.maxSize].filter((key) => key in annotations);
  if (bounds.length > 0) {
    return `MachineDeployment ${JSON.stringify(md.name ?? "?")} has the autoscaler's ${bounds.join(" and ")} annotation${bounds.length > 1 ? "s" : ""} and replicas: ${JSON.stringify(md.replicas)}`;
  }
  if (karpenterCpuLimitAnnotation in annotations) {
    return `MachineDeployment ${JSON.stringify(md.name ?? "?")} is sized by Karpenter (annotation ${karpenterCpuLimitAnnotation}) and has replicas: ${JSON.stringify(md.replicas)}`;
  }
  return undefined;
}

/**
 * The autoscaler of one tenant: the upstream cluster-autoscaler chart (catalog.clusterAutoscaler)
 * in the tenant's namespace on the management cluster, in the clusterapi provider's
 * "kubeconfig-incluster" mode: CAPI objects through its service account, the workload cluster
 * through the kubeconfig Secret CAPI writes (kubernetes/autoscaler@cluster-autoscaler-1.35.2:
 * cluster-autoscaler/cloudprovider/clusterapi/README.md, "Autoscaler running in management
 * cluster using service account credentials, with separate workload cluster").
 */
export interface ClusterAutoscalerTarget {
  /** The tenant's Cluster name. */
  readonly name: string;
  /** The tenant's namespace on the management cluster (its Cluster and MachineDeployments live there). */
  readonly namespace: string;
  /** The tenant's Kubernetes version; the autoscaler's minor follows it. */
  readonly kubernetesVersion: string;
  /** CAPI's kubeconfig Secret of the Cluster and its key (tenant-cluster.ts, `workloadKubeconfigSecret`). */
  readonly kubeconfigSecret: { readonly name: string; readonly key: string };
}

/** The service account the autoscaler runs as; the program creates it with its Role. */
export const clusterAutoscalerServiceAccount = "cluster-autoscaler";

/** The autoscaler's Deployment in the tenant's namespace (the chart's `fullnameOverride`, _helpers.tpl). */
export const clusterAutoscalerDeployment = "cluster-autoscaler";

/**
 * The image tag for a tenant at `kubernetesVersion`: the autoscaler release of the same minor
 * (kubernetes/autoscaler: cluster-autoscaler/README.md, "Releases"). Throws for a minor the
 * catalog has no tag for, so adding a tenant minor without its autoscaler fails loudly.
 */
export function clusterAutoscalerImageTag(kubernetesVersion: string): string {
  const version = parseKubernetesVersion(kubernetesVersion);
  const minor = version ? `${version.major}.${version.minor}` : kubernetesVersion;
  const tag = catalog.clusterAutoscaler.imageTagByMinor[minor];
  if (!tag) {
    throw new Error(
      `no cluster-autoscaler image for Kubernetes ${minor} (catalog.clusterAutoscaler.imageTagByMinor has ${Object.keys(catalog.clusterAutoscaler.imageTagByMinor).join(", ")})`,
    );
  }
  return tag;
}

/**
 * The chart values (kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0,
 * cluster-autoscaler/charts/cluster-autoscaler: values.yaml and templates/deployment.yaml):
 * - `clusterAPIMode: kubeconfig-incluster` makes the Deployment pass `--kubeconfig` (the workload
 *   cluster, from the mounted Secret) and `--clusterapi-cloud-config-authoritative` (CAPI objects
 *   in-cluster), and `--namespace` = `clusterAPIConfigMapsNamespace` (default kube-system) of the
 *   workload cluster for its status ConfigMap and leader-election lease;
 * - `clusterAPIKubeconfigSecret` is mounted at the directory of `clusterAPIWorkloadKubeconfigPath`,
 *   so the path's file name is the Secret's key: only the Secret's name enters the values, never
 *   its content;
 * - `autoDiscovery.clusterName` and `.namespace` become
 *   `--node-group-auto-discovery=clusterapi:clusterName=<name>,namespace=<namespace>`; with a
 *   namespace the provider's informers watch only that namespace
 *   (cluster-autoscaler/cloudprovider/clusterapi/clusterapi_autodiscovery.go, `namespaceToWatch`),
 *   which is what lets a namespaced Role suffice;
 * - `rbac.create: false` with the program's service account: the Role is
 *   {@link clusterAutoscalerRoleRules}, tested against a real API server, not the chart's.
 * The status ConfigMap (`cluster-autoscaler-status`) is in the workload cluster's kube-system.
 */
export function clusterAutoscalerValues(target: ClusterAutoscalerTarget, mirrors: Mirrors = {}): Record<string, unknown> {
  const kubeconfig = target.kubeconfigSecret;
  return {
    cloudProvider: "clusterapi",
    clusterAPIMode: "kubeconfig-incluster",
    clusterAPIKubeconfigSecret: kubeconfig.name,
    clusterAPIWorkloadKubeconfigPath: `/etc/kubernetes/${kubeconfig.key}`,
    autoDiscovery: { clusterName: target.name, namespace: target.namespace },
    image: { ...(mirrors.images ? { repository: mirroredImage(catalog.clusterAutoscaler.image, mirrors) } : {}), tag: clusterAutoscalerImageTag(target.kubernetesVersion) },
    rbac: {
      create: false,
      // Stryker disable next-line BooleanLiteral: equivalent, the chart renders its ServiceAccount only with rbac.create too (templates/serviceaccount.yaml)
      serviceAccount: { create: false, name: clusterAutoscalerServiceAccount },
    },
    // The Deployment's name (the runbook's `kubectl logs`), instead of "<release>-clusterapi-cluster-autoscaler".
    fullnameOverride: clusterAutoscalerDeployment,
  };
}

/** A Kubernetes RBAC PolicyRule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * What the autoscaler may do on the management cluster, in the tenant's namespace only (a Role):
 * - the clusterapi rules the chart's namespaced Role grants in kubeconfig-incluster mode
 *   (cluster-autoscaler-chart-9.59.0: templates/role.yaml, `not .Values.rbac.clusterScoped`):
 *   read and update the CAPI scalable objects and Machines (a Machine gets the delete annotation
 *   before a scale-down), and the scale subresource of MachineDeployments and MachinePools;
 * - reading HCloudMachineTemplates, whose `status.capacity` (filled by CAPH v1.1.8:
 *   pkg/services/hcloud/machinetemplate/machinetemplate.go) is how the autoscaler builds a node
 *   of a pool at zero (cloudprovider/clusterapi/README.md, "RBAC changes for scaling from zero";
 *   clusterapi_unstructured.go, `resourceCapacityFromInfrastructureObject`).
 * Nothing on Secrets: the kubelet mounts the kubeconfig Secret, the autoscaler never reads it.
 */
export function clusterAutoscalerRoleRules(): PolicyRule[] {
  return [
    { apiGroups: ["cluster.x-k8s.io"], resources: ["machinedeployments", "machinepools", "machines", "machinesets"], verbs: ["get", "list", "update", "watch"] },
    { apiGroups: ["cluster.x-k8s.io"], resources: ["machinedeployments/scale", "machinepools/scale"], verbs: ["get", "patch", "update"] },
    { apiGroups: ["infrastructure.cluster.x-k8s.io"], resources: ["hcloudmachinetemplates"], verbs: ["get", "list", "watch"] },
  ];
}

/**
 * The autoscaler's ServiceAccount, Role and RoleBinding in the tenant's namespace, as the
 * component creates them (and the RBAC test applies them to a real API server).
 */
export function clusterAutoscalerRbac(namespace: string) {
  const metadata = { name: clusterAutoscalerServiceAccount, namespace };
  return {
    serviceAccount: { apiVersion: "v1" as const, kind: "ServiceAccount" as const, metadata },
    role: { apiVersion: "rbac.authorization.k8s.io/v1" as const, kind: "Role" as const, metadata, rules: clusterAutoscalerRoleRules() },
    roleBinding: {
      apiVersion: "rbac.authorization.k8s.io/v1" as const,
      kind: "RoleBinding" as const,
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: clusterAutoscalerServiceAccount },
      subjects: [{ kind: "ServiceAccount", name: clusterAutoscalerServiceAccount, namespace }],
    },
  };
}
