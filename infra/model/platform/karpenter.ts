import { catalog } from "../versions/catalog";

/**
 * Worker pools sized by Karpenter (EXPERIMENTAL), through kubernetes-sigs/karpenter-provider-cluster-api
 * (catalog.karpenterClusterApi), which the program runs on the management cluster for each tenant
 * with such a pool (components/karpenter). What the provider reads, all at v0.2.0:
 * - the MachineDeployments it may scale: those a ClusterAPINodeClass's `scalableResourceSelector`
 *   selects that also carry {@link karpenterMemberLabel} (pkg/providers/machinedeployment/machinedeployment.go, `List`);
 * - their size before a server exists: only the `capacity.cluster-autoscaler.kubernetes.io/*`
 *   annotations of CAPI's scale-from-zero proposal, on the MachineDeployment
 *   (pkg/cloudprovider/cloudprovider.go, `capacityResourceListFromAnnotations`; CAPH's
 *   HCloudMachineTemplate `status.capacity` is not read, its TODO in `machineToNodeClaim` says so);
 * - the node labels it promises: the `.../labels` annotation and the MachineDeployment's template
 *   labels in CAPI's node-label domains (`nodeLabelsFromMachineDeployment`); the instance type is
 *   the `node.kubernetes.io/instance-type` label among them;
 * - scale up and down: it writes the MachineDeployment's `spec.replicas` (v1beta1 only, so never
 *   nil: `createMachine`), and before a scale-down marks the Machine with CAPI's delete annotation
 *   (`Delete`). So the pool is left unpinned, as an autoscaled pool is (cluster-autoscaler.ts).
 * CAPI copies a topology's labels onto the MachineDeployment *and* its Machine template
 * (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/desired_state.go,
 * `computeMachineDeployment`), and the provider takes a new server only from Machines without
 * {@link karpenterMemberLabel} (`pollForUnclaimedMachineInMachineDeploymentWithTimeout`): the member
 * label must therefore be put on the MachineDeployment alone, not through the topology
 * (components/karpenter labels it; the loop test shows both).
 */

/** The label that makes a MachineDeployment, and a Machine it claimed, the provider's (pkg/providers/providers.go, `NodePoolMemberLabel`). */
export const karpenterMemberLabel = "node.cluster.x-k8s.io/karpenter-member";

/** CAPI's scale-from-zero annotations the provider reads (pkg/cloudprovider/cloudprovider.go, `cpuKey`, `memoryKey`, `maxPodsKey`, `labelsKey`). */
export const capacityAnnotations = {
  cpu: "capacity.cluster-autoscaler.kubernetes.io/cpu",
  memory: "capacity.cluster-autoscaler.kubernetes.io/memory",
  maxPods: "capacity.cluster-autoscaler.kubernetes.io/maxPods",
  labels: "capacity.cluster-autoscaler.kubernetes.io/labels",
} as const;

/**
 * Pods a node takes: the kubelet's default `maxPods`, which the fleet's kubeadm configuration
 * keeps (k8s.io/kubernetes: pkg/kubelet/apis/config/v1beta1/defaults.go). Without the maxPods
 * annotation the provider's server has room for no pod at all, and Karpenter finds "no instance
 * type has enough resources" (seen in tests/in-the-loop/karpenter-in-the-loop.test.ts).
 */
export const kubeletMaxPods = 110;

/** The kinds the tenant's Karpenter reads in its workload cluster. */
const nodeClassGroup = "karpenter.cluster.x-k8s.io";
export const karpenterKinds = {
  nodePool: { apiVersion: "karpenter.sh/v1", kind: "NodePool" },
  nodeClass: { apiVersion: `${nodeClassGroup}/v1alpha1`, kind: "ClusterAPINodeClass" },
} as const;

/** `autoscaling` of a Karpenter pool, as validated (fleet-config.ts). */
export interface KarpenterLimits {
  readonly provider: "karpenter";
  readonly cpuLimit: number;
  readonly expireAfter: string;
  readonly consolidation: { readonly policy: string; readonly after: string };
}

/** The pool fields these functions read. */
export interface KarpenterPoolView {
  readonly name: string;
  readonly machineType: string;
  readonly autoscaling?: { readonly provider?: string } | undefined;
}

/** A pool Karpenter sizes. */
export type KarpenterPool = KarpenterPoolView & { readonly autoscaling: KarpenterLimits };

/** True when Karpenter sizes the pool. */
export function isKarpenterPool(pool: KarpenterPoolView): pool is KarpenterPool {
  return pool.autoscaling?.provider === "karpenter";
}

/** vCPUs and memory of a server type, when the catalog knows them. */
export function serverCapacity(machineType: string): { readonly cpu: number; readonly memoryGi: number } | undefined {
  return Object.hasOwn(catalog.hcloud.serverTypeCapacity, machineType) ? catalog.hcloud.serverTypeCapacity[machineType] : undefined;
}

/** Most servers Karpenter may create for the pool: as many as fit under its CPU limit (0 for an unknown type, which validation refuses). */
export function karpenterMaxServers(pool: KarpenterPool): number {
  const capacity = serverCapacity(pool.machineType);
  return capacity ? Math.floor(pool.autoscaling.cpuLimit / capacity.cpu) : 0;
}

/** Why a Karpenter pool cannot work as configured, each with the path under the pool (`autoscaling.cpuLimit`, ...). */
export function karpenterPoolProblems(pool: KarpenterPool): { path: string; message: string }[] {
  const capacity = serverCapacity(pool.machineType);
  if (!capacity) {
    return [
      {
        path: "machineType",
        message: `${JSON.stringify(pool.machineType)} has no known size, and Karpenter must know a server's CPU and memory before it exists (catalog.ts hcloud.serverTypeCapacity); allowed with Karpenter: ${Object.keys(catalog.hcloud.serverTypeCapacity).join(", ")}`,
      },
    ];
  }
  if (pool.autoscaling.cpuLimit < capacity.cpu) {
    return [
      {
        path: "autoscaling.cpuLimit",
        message: `${pool.autoscaling.cpuLimit} is below one ${pool.machineType} server (${capacity.cpu} vCPUs), so Karpenter could never create one; allowed: ${capacity.cpu} to 1000`,
      },
    ];
  }
  return [];
}

/** The architecture of a server type's nodes: Hetzner's cax types are Arm. */
function architectureOf(machineType: string): string {
  return machineType.startsWith("cax") ? "arm64" : "amd64";
}

/**
 * The fleet's mark of a Karpenter pool on its MachineDeployment topology: the NodePool's CPU
 * limit, so that what reads only the Cluster (the policy pack, the cost of a change) knows the
 * pool is Karpenter's and how far it may grow.
 */
export const karpenterCpuLimitAnnotation = "capi-fleet.io/karpenter-cpu-limit";

/**
 * The annotations of a Karpenter pool's MachineDeployment topology, which CAPI copies onto the
 * MachineDeployment: its server's CPU, memory and pods, the labels its nodes will have (the instance
 * type, as the hcloud CCM labels the node, and the architecture, so that an empty Arm pool is
 * offered to arm64 pods only), and the fleet's {@link karpenterCpuLimitAnnotation}.
 */
export function poolCapacityAnnotations(pool: KarpenterPool): Record<string, string> {
  const capacity = serverCapacity(pool.machineType);
  if (!capacity) throw new Error(`server type ${pool.machineType} has no known size; the config validation should have refused it`);
  return {
    [capacityAnnotations.cpu]: String(capacity.cpu),
    [capacityAnnotations.memory]: `${capacity.memoryGi}Gi`,
    [capacityAnnotations.maxPods]: String(kubeletMaxPods),
    [capacityAnnotations.labels]: `node.kubernetes.io/instance-type=${pool.machineType},kubernetes.io/arch=${architectureOf(pool.machineType)}`,
    [karpenterCpuLimitAnnotation]: String(pool.autoscaling.cpuLimit),
  };
}

/**
 * How many servers a Karpenter pool has, from its topology's annotations: the one CAPI starts it
 * with, up to that one plus the servers under its CPU limit; undefined for a pool that is not
 * Karpenter's (or whose annotations are not whole numbers).
 */
export function karpenterServerRange(annotations: Readonly<Record<string, unknown>>): { min: number; max: number } | undefined {
  const whole = (value: unknown) => (typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : undefined);
  const limit = whole(annotations[karpenterCpuLimitAnnotation]);
  const cpu = whole(annotations[capacityAnnotations.cpu]);
  if (limit === undefined || !cpu) return undefined;
  return { min: 1, max: Math.floor(limit / cpu) + 1 };
}

/** The MachineDeployment labels CAPI sets from the Cluster and the topology's pool name (api/core/v1beta2/common_types.go). */
export const machineDeploymentLabels = {
  clusterName: "cluster.x-k8s.io/cluster-name",
  topologyPoolName: "topology.cluster.x-k8s.io/deployment-name",
} as const;

/** The selector of one pool's MachineDeployment (CAPI's own labels, unique per Cluster and pool). */
export function poolMachineDeploymentSelector(tenantName: string, poolName: string): Record<string, string> {
  return { [machineDeploymentLabels.clusterName]: tenantName, [machineDeploymentLabels.topologyPoolName]: poolName };
}

/**
 * The ClusterAPINodeClass of a pool, in the workload cluster (cluster-scoped): it selects that
 * pool's MachineDeployment only. The provider lists MachineDeployments in every namespace of the
 * management cluster, so the selector names the Cluster too.
 */
export function karpenterNodeClass(tenantName: string, pool: KarpenterPool) {
  return {
    ...karpenterKinds.nodeClass,
    metadata: { name: pool.name },
    spec: { scalableResourceSelector: { matchLabels: poolMachineDeploymentSelector(tenantName, pool.name) } },
  };
}

/**
 * The NodePool of a pool, in the workload cluster, with the stack's limits: `limits.cpu`,
 * `expireAfter` and the consolidation policy (sigs.k8s.io/karpenter@v1.4.0:
 * pkg/apis/crds/karpenter.sh_nodepools.yaml; `requirements` is required, so the pool's server
 * type is its one requirement).
 */
export function karpenterNodePool(pool: KarpenterPool) {
  const limits = pool.autoscaling;
  return {
    ...karpenterKinds.nodePool,
    metadata: { name: pool.name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: nodeClassGroup, kind: karpenterKinds.nodeClass.kind, name: pool.name },
          requirements: [{ key: "node.kubernetes.io/instance-type", operator: "In", values: [pool.machineType] }],
          expireAfter: limits.expireAfter,
        },
      },
      limits: { cpu: String(limits.cpuLimit) },
      disruption: { consolidationPolicy: limits.consolidation.policy, consolidateAfter: limits.consolidation.after },
    },
  };
}

/** The tenant's Karpenter: where it runs and what it reads. */
export interface KarpenterTarget {
  /** The tenant's Cluster name. */
  readonly name: string;
  /** The tenant's namespace on the management cluster. */
  readonly namespace: string;
  /** CAPI's kubeconfig Secret of the Cluster and its key (tenant-cluster.ts, `workloadKubeconfigSecret`). */
  readonly kubeconfigSecret: { readonly name: string; readonly key: string };
  /** The controller image (the tenant's `karpenter.image`). */
  readonly image: string;
}

/** The provider's names on the management cluster: its Deployment and service account in the tenant's namespace, and its ClusterRole. */
export function karpenterNames(target: Pick<KarpenterTarget, "namespace">) {
  return { deployment: "karpenter", serviceAccount: "karpenter", managementKubeconfig: "karpenter-management-kubeconfig", clusterRole: `capi-fleet-karpenter-${target.namespace}` };
}

/** Where the pod finds what it reads. */
const mounts = { workload: "/etc/karpenter/workload", management: "/etc/karpenter/management", serviceAccount: "/var/run/secrets/kubernetes.io/serviceaccount" } as const;

/**
 * The kubeconfig through which the provider reaches the management cluster: its own service
 * account's token and CA, read from files so the kubelet's token rotation reaches it. The
 * provider's in-cluster default is not the service account but its main client, which is the
 * workload cluster here (pkg/operator/operator.go, `buildManagementClusterKubeClient`).
 */
export function karpenterManagementKubeconfig(namespace: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: management",
    `    cluster: { server: "https://kubernetes.default.svc", certificate-authority: "${mounts.serviceAccount}/ca.crt" }`,
    "users:",
    `  - name: karpenter`,
    `    user: { tokenFile: "${mounts.serviceAccount}/token" }`,
    "contexts:",
    `  - name: management`,
    `    context: { cluster: management, user: karpenter, namespace: "${namespace}" }`,
    "current-context: management",
    "",
  ].join("\n");
}

/** A Kubernetes RBAC PolicyRule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * What the provider does on the management cluster: it reads MachineDeployments and Machines
 * through informers over every namespace (its client has no namespace option at v0.2.0:
 * pkg/operator/operator.go, `cluster.New` with defaults), updates MachineDeployments' replicas and
 * Machines' labels and delete annotation. Hence a ClusterRole; the NodeClass's selector, not
 * RBAC, keeps it to its tenant's pools. Nothing on Secrets or on infrastructure objects.
 */
export function karpenterClusterRoleRules(): PolicyRule[] {
  return [{ apiGroups: ["cluster.x-k8s.io"], resources: ["machinedeployments", "machines"], verbs: ["get", "list", "watch", "update", "patch"] }];
}

/** The provider's ServiceAccount, ClusterRole and ClusterRoleBinding, and its kubeconfig ConfigMap for the management cluster. */
export function karpenterManagementRbac(target: Pick<KarpenterTarget, "namespace">) {
  const names = karpenterNames(target);
  return {
    serviceAccount: { apiVersion: "v1" as const, kind: "ServiceAccount" as const, metadata: { name: names.serviceAccount, namespace: target.namespace } },
    clusterRole: { apiVersion: "rbac.authorization.k8s.io/v1" as const, kind: "ClusterRole" as const, metadata: { name: names.clusterRole }, rules: karpenterClusterRoleRules() },
    clusterRoleBinding: {
      apiVersion: "rbac.authorization.k8s.io/v1" as const,
      kind: "ClusterRoleBinding" as const,
      metadata: { name: names.clusterRole },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: names.clusterRole },
      subjects: [{ kind: "ServiceAccount", name: names.serviceAccount, namespace: target.namespace }],
    },
    managementKubeconfig: {
      apiVersion: "v1" as const,
      kind: "ConfigMap" as const,
      metadata: { name: names.managementKubeconfig, namespace: target.namespace },
      data: { kubeconfig: karpenterManagementKubeconfig(target.namespace) },
    },
  };
}

/**
 * The provider's arguments and environment: the workload cluster is its main client (KUBECONFIG,
 * CAPI's kubeconfig Secret; the binary has no --kubeconfig flag), the management cluster its
 * `--cluster-api-kubeconfig` (pkg/operator/options/options.go). Its leader-election Lease lives
 * in the workload cluster, where the pod's own namespace need not exist, so in kube-system.
 */
export function karpenterCommandLine(workloadKubeconfig: string, managementKubeconfig: string): { args: string[]; env: Record<string, string> } {
  return {
    args: [`--cluster-api-kubeconfig=${managementKubeconfig}`, "--leader-election-namespace=kube-system"],
    env: { KUBECONFIG: workloadKubeconfig },
  };
}

/** The provider's Deployment in the tenant's namespace: one replica, the image the stack names. */
export function karpenterDeployment(target: KarpenterTarget) {
  const names = karpenterNames(target);
  const labels = { "app.kubernetes.io/name": "karpenter-clusterapi", "app.kubernetes.io/instance": target.name };
  const command = karpenterCommandLine(`${mounts.workload}/${target.kubeconfigSecret.key}`, `${mounts.management}/kubeconfig`);
  return {
    apiVersion: "apps/v1" as const,
    kind: "Deployment" as const,
    metadata: { name: names.deployment, namespace: target.namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: names.serviceAccount,
          securityContext: { runAsNonRoot: true, runAsUser: 65532 },
          containers: [
            {
              name: "controller",
              image: target.image,
              // The chart's entry point (charts/karpenter/templates/deployment.yaml at the tag).
              command: ["/karpenter-clusterapi-controller"],
              args: command.args,
              env: Object.entries(command.env).map(([name, value]) => ({ name, value })),
              ports: [
                { name: "http-metrics", containerPort: 8080, protocol: "TCP" },
                { name: "http-health", containerPort: 8081, protocol: "TCP" },
              ],
              volumeMounts: [
                { name: "workload-kubeconfig", mountPath: mounts.workload, readOnly: true },
                { name: "management-kubeconfig", mountPath: mounts.management, readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: "workload-kubeconfig", secret: { secretName: target.kubeconfigSecret.name } },
            { name: "management-kubeconfig", configMap: { name: names.managementKubeconfig } },
          ],
        },
      },
    },
  };
}

/** What delivers the tenant's NodeClasses and NodePools into its workload cluster: a ClusterResourceSet and its ConfigMap. */
export const karpenterResourceSetName = "karpenter-nodepools";

/**
 * The tenant's ClusterAPINodeClass and NodePool of each Karpenter pool, and the ClusterResourceSet
 * (CAPI core, `addons.cluster.x-k8s.io/v1beta2`) that applies them in the workload cluster and
 * again whenever they change (`strategy: Reconcile`; sigs.k8s.io/cluster-api@v1.12.10:
 * api/addons/v1beta2/clusterresourceset_types.go). Until the provider's CRDs are in the workload
 * cluster the apply fails, and CAPI retries it (internal/controllers/clusterresourceset/clusterresourceset_controller.go
 * returns the errors, so the object is queued again). `clusterSelector` selects the tenant's Cluster.
 */
export function karpenterResourceSet(tenantName: string, namespace: string, clusterSelector: Readonly<Record<string, string>>, pools: readonly KarpenterPool[]) {
  const documents = pools.flatMap((pool) => [karpenterNodeClass(tenantName, pool), karpenterNodePool(pool)]);
  return {
    configMap: {
      apiVersion: "v1" as const,
      kind: "ConfigMap" as const,
      metadata: { name: karpenterResourceSetName, namespace },
      // JSON documents are YAML documents; CAPI splits the value at "---".
      data: { "nodepools.yaml": documents.map((document) => JSON.stringify(document)).join("\n---\n") },
    },
    clusterResourceSet: {
      apiVersion: "addons.cluster.x-k8s.io/v1beta2" as const,
      kind: "ClusterResourceSet" as const,
      metadata: { name: karpenterResourceSetName, namespace },
      spec: {
        clusterSelector: { matchLabels: { ...clusterSelector } },
        resources: [{ kind: "ConfigMap", name: karpenterResourceSetName }],
        strategy: "Reconcile",
      },
    },
  };
}
