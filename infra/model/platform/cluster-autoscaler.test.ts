import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import {
  autoscalerAnnotations,
  clusterAutoscalerBounds,
  clusterAutoscalerDeployment,
  clusterAutoscalerImageTag,
  clusterAutoscalerRbac,
  clusterAutoscalerValues,
  isAutoscaled,
  pinnedAutoscaledPoolProblem,
  poolAutoscalerAnnotations,
  poolMaxReplicas,
  scaleFromZeroProblem,
  type ClusterAutoscalerTarget,
} from "./cluster-autoscaler";
import { karpenterCpuLimitAnnotation } from "./karpenter";
import { parseKubernetesVersion } from "../versions/kubernetes-version";
import { workloadKubeconfigSecret } from "../tenant/tenant-cluster";

const target: ClusterAutoscalerTarget = {
  name: "analytics",
  namespace: "tenant-analytics",
  kubernetesVersion: "v1.35.3",
  kubeconfigSecret: workloadKubeconfigSecret("analytics"),
};

/**
 * A READING of the chart's templates at catalog.clusterAutoscaler.chart.version
 * (kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0, cluster-autoscaler/charts/cluster-autoscaler),
 * restricted to the clusterapi branches the fleet's values take; the chart itself is not
 * reachable from tests, so this restates its rules, each with the template it comes from.
 */
function chartReading(values: Record<string, unknown>) {
  const v = values as {
    cloudProvider: string;
    clusterAPIMode: string;
    clusterAPIKubeconfigSecret?: string;
    clusterAPIWorkloadKubeconfigPath?: string;
    clusterAPIConfigMapsNamespace?: string;
    autoDiscovery?: { clusterName?: string; namespace?: string };
    rbac?: { create?: boolean; clusterScoped?: boolean; serviceAccount?: { create?: boolean; name?: string } };
    fullnameOverride?: string;
  };
  // values.yaml defaults the fleet relies on.
  const workloadPath = v.clusterAPIWorkloadKubeconfigPath ?? "/etc/kubernetes/value";
  const rbacCreate = v.rbac?.create ?? true;
  const saCreate = v.rbac?.serviceAccount?.create ?? true;
  const args: string[] = [];
  // templates/deployment.yaml: the Deployment exists only with auto-discovery or explicit groups.
  const rendersDeployment = Boolean(v.autoDiscovery?.clusterName || v.autoDiscovery?.namespace);
  args.push(`--cloud-provider=${v.cloudProvider}`);
  if (v.cloudProvider === "clusterapi" && v.clusterAPIMode === "kubeconfig-incluster") args.push(`--namespace=${v.clusterAPIConfigMapsNamespace || "kube-system"}`);
  if (v.cloudProvider === "clusterapi") {
    // _helpers.tpl, cluster-autoscaler.capiAutodiscoveryConfig: clusterName=…[,namespace=…]
    const discovery = [v.autoDiscovery?.clusterName ? `clusterName=${v.autoDiscovery.clusterName}` : "", v.autoDiscovery?.namespace ? `namespace=${v.autoDiscovery.namespace}` : ""].filter(Boolean).join(",");
    if (discovery) args.push(`--node-group-auto-discovery=clusterapi:${discovery}`);
    if (v.clusterAPIMode === "kubeconfig-incluster") args.push(`--kubeconfig=${workloadPath}`, "--clusterapi-cloud-config-authoritative");
  }
  return {
    rendersDeployment,
    // _helpers.tpl, cluster-autoscaler.fullname: the override, else "<release>-<cloudProvider>-cluster-autoscaler".
    deploymentName: v.fullnameOverride || `cluster-autoscaler-${v.cloudProvider}-cluster-autoscaler`,
    args,
    // deployment.yaml: the Secret is mounted at the path without its "/value" suffix.
    mount: v.clusterAPIKubeconfigSecret ? { secretName: v.clusterAPIKubeconfigSecret, mountPath: workloadPath.replace(/\/value$/, "") } : undefined,
    // _helpers.tpl, cluster-autoscaler.serviceAccountName.
    serviceAccountName: saCreate ? v.rbac?.serviceAccount?.name || "<fullname>" : v.rbac?.serviceAccount?.name || "default",
    // templates/role.yaml, clusterrole.yaml, serviceaccount.yaml: rbac.create gates all of them.
    rendersRbac: rbacCreate,
    rendersServiceAccount: rbacCreate && saCreate,
  };
}

describe("the cluster autoscaler of a tenant", () => {
  it("runs the autoscaler release of each tenant minor the fleet offers (the autoscaler's rule: same minor as the cluster)", () => {
    // kubernetes/autoscaler: cluster-autoscaler/README.md, "Releases": CA 1.x.y for Kubernetes 1.x.
    for (const version of catalog.tenantKubernetesVersions) {
      const tenantVersion = parseKubernetesVersion(version)!;
      const tagVersion = parseKubernetesVersion(clusterAutoscalerImageTag(version))!;
      expect([tagVersion.major, tagVersion.minor], version).toEqual([tenantVersion.major, tenantVersion.minor]);
    }
    expect(() => clusterAutoscalerImageTag("v1.36.0")).toThrow(/no cluster-autoscaler image for Kubernetes 1\.36 \(catalog\.clusterAutoscaler\.imageTagByMinor has 1\.33, 1\.34, 1\.35\)/);
  });

  it("gets values the chart turns into a management-cluster autoscaler for exactly this Cluster (a reading of the chart's templates)", () => {
    const chart = chartReading(clusterAutoscalerValues(target));
    expect(chart.rendersDeployment).toBe(true);
    expect(chart.deploymentName).toBe(clusterAutoscalerDeployment);
    expect(chart.args).toEqual([
      "--cloud-provider=clusterapi",
      // Status ConfigMap and leader election in the workload cluster's kube-system.
      "--namespace=kube-system",
      "--node-group-auto-discovery=clusterapi:clusterName=analytics,namespace=tenant-analytics",
      "--kubeconfig=/etc/kubernetes/value",
      "--clusterapi-cloud-config-authoritative",
    ]);
    // The kubeconfig file the flag names is the key CAPI writes in the Secret the pod mounts.
    expect(chart.mount).toEqual({ secretName: "analytics-kubeconfig", mountPath: "/etc/kubernetes" });
    expect(`${chart.mount!.mountPath}/${target.kubeconfigSecret.key}`).toBe(chart.args.find((a) => a.startsWith("--kubeconfig="))!.slice("--kubeconfig=".length));
    // The pod runs as the ServiceAccount the program binds to its Role; the chart adds no RBAC of its own.
    const rbac = clusterAutoscalerRbac(target.namespace);
    expect(chart.serviceAccountName).toBe(rbac.serviceAccount.metadata.name);
    expect(rbac.roleBinding.subjects).toEqual([{ kind: "ServiceAccount", name: chart.serviceAccountName, namespace: target.namespace }]);
    expect(chart.rendersRbac).toBe(false);
    expect(chart.rendersServiceAccount).toBe(false);
    // The discovery namespace is the Role's: the provider then watches that namespace only
    // (cloudprovider/clusterapi/clusterapi_autodiscovery.go, namespaceToWatch), which the Role allows.
    expect(rbac.role.metadata.namespace).toBe(target.namespace);
  });

  it("follows the tenant's Kubernetes minor in its image", () => {
    for (const [minor, tag] of Object.entries(catalog.clusterAutoscaler.imageTagByMinor)) {
      expect(clusterAutoscalerValues({ ...target, kubernetesVersion: `v${minor}.1` }).image).toEqual({ tag });
    }
  });

  it("names the kubeconfig Secret and holds no credential", () => {
    const values = clusterAutoscalerValues(target);
    const strings = JSON.stringify(values).match(/"[^"]*"/g)!.map((s) => JSON.parse(s) as string);
    expect(strings).toContain(target.kubeconfigSecret.name);
    expect(strings.filter((s) => /BEGIN|certificate|token|password|kubeconfig-data|client-key/i.test(s))).toEqual([]);
  });

  it("scales from zero only on x86 server types", () => {
    const pool = (machineType: string, minSize: number) => ({ name: "md-0", machineType, autoscaling: { minSize, maxSize: 3 } });
    expect(scaleFromZeroProblem(pool("cax31", 0))).toContain('0 on the Arm server type "cax31"');
    expect(scaleFromZeroProblem(pool("cax31", 1))).toBeUndefined();
    expect(scaleFromZeroProblem(pool("cpx31", 0))).toBeUndefined();
    expect(scaleFromZeroProblem({ name: "md-0", machineType: "cax31", replicas: 0 })).toBeUndefined();
    // The problem names the range that works: from one node up to the pool's maxSize.
    expect(scaleFromZeroProblem(pool("cax11", 0))).toMatch(/allowed: 1 to 3$/);
  });
});

describe("the autoscaler's RBAC objects", () => {
  it("bind the service account the pod runs as to the Role, all in the tenant's namespace (RoleRef: the Role's API group, kind and name)", () => {
    const { serviceAccount, role, roleBinding } = clusterAutoscalerRbac("tenant-analytics");
    expect(roleBinding.roleRef).toEqual({ apiGroup: role.apiVersion.split("/")[0], kind: role.kind, name: role.metadata.name });
    expect(roleBinding.subjects).toEqual([{ kind: serviceAccount.kind, name: serviceAccount.metadata.name, namespace: serviceAccount.metadata.namespace }]);
    expect([serviceAccount, role, roleBinding].map((object) => object.metadata.namespace)).toEqual(["tenant-analytics", "tenant-analytics", "tenant-analytics"]);
    // The chart's pod runs as that account (values: rbac.serviceAccount.name).
    expect((clusterAutoscalerValues(target).rbac as { serviceAccount: { name: string } }).serviceAccount.name).toBe(serviceAccount.metadata.name);
  });
});

describe("an autoscaled pool's size", () => {
  const autoscaled = { name: "md-0", machineType: "cx23", autoscaling: { minSize: 2, maxSize: 6 } };
  const fixed = { name: "md-1", machineType: "cx23", replicas: 3 };
  const karpenter = { name: "md-3", machineType: "cx33", autoscaling: { provider: "karpenter" as const, cpuLimit: 18, expireAfter: "720h", consolidation: { policy: "WhenEmpty", after: "30s" } } };

  it("is at most the autoscaler's maxSize, or the pool's replicas, or nothing", () => {
    expect([autoscaled, fixed, { name: "md-2", machineType: "cx23" }].map(poolMaxReplicas)).toEqual([6, 3, 0]);
    expect([autoscaled, fixed, karpenter].map(isAutoscaled)).toEqual([true, false, true]);
  });

  it("for Karpenter, is the servers under its CPU limit plus the one CAPI starts an unpinned pool with; Karpenter writes no bounds", () => {
    // 18 vCPUs hold four cx33 (4 vCPUs each), rounded down.
    expect(poolMaxReplicas(karpenter)).toBe(5);
    expect(clusterAutoscalerBounds(karpenter)).toBeUndefined();
    expect(poolAutoscalerAnnotations(karpenter)).toBeUndefined();
    expect(clusterAutoscalerBounds({ ...autoscaled, autoscaling: { ...autoscaled.autoscaling, provider: "cluster-autoscaler" } })).toEqual({ provider: "cluster-autoscaler", minSize: 2, maxSize: 6 });
    expect(scaleFromZeroProblem({ ...karpenter, machineType: "cax21" })).toBeUndefined();
  });

  it("reaches CAPI as the bounds' annotations, decimal strings as CAPI parses them (strconv.Atoi), and only for an autoscaled pool", () => {
    // sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/machinedeployment.go, calculateMachineDeploymentReplicas.
    const annotations = poolAutoscalerAnnotations(autoscaled)!;
    expect(Object.keys(annotations).sort()).toEqual([autoscalerAnnotations.maxSize, autoscalerAnnotations.minSize].sort());
    expect(Object.values(annotations).every((value) => /^\d+$/.test(value))).toBe(true);
    expect([Number(annotations[autoscalerAnnotations.minSize]), Number(annotations[autoscalerAnnotations.maxSize])]).toEqual([2, 6]);
    expect(poolAutoscalerAnnotations(fixed)).toBeUndefined();
  });
});

describe("pinnedAutoscaledPoolProblem", () => {
  const bounds = { [autoscalerAnnotations.minSize]: "2", [autoscalerAnnotations.maxSize]: "6" };

  it("flags replicas next to either bound, and nothing without bounds or without replicas (null is unset in JSON)", () => {
    const combinations = [
      [{}, undefined],
      [{}, 3],
      [bounds, undefined],
      [bounds, null],
      [bounds, 0],
      [{ [autoscalerAnnotations.minSize]: "2" }, 3],
      [{ [autoscalerAnnotations.maxSize]: "6" }, 3],
      [{ "other.io/annotation": "x" }, 3],
    ] as const;
    expect(combinations.map(([annotations, replicas]) => pinnedAutoscaledPoolProblem({ name: "md-0", replicas, metadata: { annotations } }) !== undefined)).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
      true,
      false,
    ]);
    expect(pinnedAutoscaledPoolProblem({ name: "md-0", replicas: 3 })).toBeUndefined();
  });

  it("names the MachineDeployment, the annotations it has and its replicas", () => {
    const both = pinnedAutoscaledPoolProblem({ name: "md-0", replicas: 3, metadata: { annotations: bounds } })!;
    expect(both).toContain(`"md-0" has the autoscaler's ${autoscalerAnnotations.minSize} and ${autoscalerAnnotations.maxSize} annotations and replicas: 3`);
    const one = pinnedAutoscaledPoolProblem({ replicas: 0, metadata: { annotations: { [autoscalerAnnotations.maxSize]: "6" } } })!;
    expect(one).toContain(`has the autoscaler's ${autoscalerAnnotations.maxSize} annotation and replicas: 0`);
    expect(one).not.toContain(autoscalerAnnotations.minSize);
    // A topology without a name is still reported.
    expect(one).toMatch(/^MachineDeployment "\?"/);
  });

  it("flags replicas on a Karpenter pool by the fleet's mark, and names it", () => {
    const karpenter = { [karpenterCpuLimitAnnotation]: "16" };
    expect(pinnedAutoscaledPoolProblem({ name: "burst", replicas: 2, metadata: { annotations: karpenter } })).toBe(
      `MachineDeployment "burst" is sized by Karpenter (annotation ${karpenterCpuLimitAnnotation}) and has replicas: 2`,
    );
    expect(pinnedAutoscaledPoolProblem({ replicas: 0, metadata: { annotations: karpenter } })).toMatch(/^MachineDeployment "\?" is sized by Karpenter/);
    expect(pinnedAutoscaledPoolProblem({ name: "burst", metadata: { annotations: karpenter } })).toBeUndefined();
    expect(pinnedAutoscaledPoolProblem({ name: "burst", replicas: null, metadata: { annotations: karpenter } })).toBeUndefined();
  });
});
