import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import {
  capacityAnnotations,
  isKarpenterPool,
  karpenterClusterRoleRules,
  karpenterCpuLimitAnnotation,
  karpenterServerRange,
  karpenterCommandLine,
  karpenterDeployment,
  karpenterManagementKubeconfig,
  karpenterManagementRbac,
  karpenterMaxServers,
  karpenterMemberLabel,
  karpenterNames,
  karpenterNodeClass,
  karpenterNodePool,
  karpenterPoolProblems,
  karpenterResourceSet,
  poolCapacityAnnotations,
  poolMachineDeploymentSelector,
  serverCapacity,
  type KarpenterPool,
  type KarpenterTarget,
} from "./karpenter";

const pool = (machineType: string, cpuLimit = 16): KarpenterPool => ({
  name: "burst",
  machineType,
  autoscaling: { provider: "karpenter", cpuLimit, expireAfter: "720h", consolidation: { policy: "WhenEmpty", after: "45s" } },
});

const target: KarpenterTarget = {
  name: "analytics",
  namespace: "tenant-analytics",
  kubeconfigSecret: { name: "analytics-kubeconfig", key: "value" },
  image: "registry.example.com/karpenter-clusterapi-controller:v0.2.0",
};

describe("which pools Karpenter sizes, and how many servers it may make", () => {
  it("is a pool whose autoscaling names Karpenter, not the cluster autoscaler's nor a fixed one", () => {
    expect(isKarpenterPool(pool("cx23"))).toBe(true);
    expect(isKarpenterPool({ name: "a", machineType: "cx23", autoscaling: { provider: "cluster-autoscaler" } })).toBe(false);
    expect(isKarpenterPool({ name: "a", machineType: "cx23", autoscaling: {} })).toBe(false);
    expect(isKarpenterPool({ name: "a", machineType: "cx23" })).toBe(false);
  });

  it("knows a server's size only for the catalog's types, never for inherited object keys", () => {
    expect(serverCapacity("cx33")).toEqual(catalog.hcloud.serverTypeCapacity.cx33);
    expect(serverCapacity("cpx42")).toBeUndefined();
    expect(serverCapacity("toString")).toBeUndefined();
  });

  it("fits as many servers under the CPU limit as whole servers go into it", () => {
    expect(karpenterMaxServers(pool("cx33", 16))).toBe(4);
    expect(karpenterMaxServers(pool("cx33", 19))).toBe(4);
    expect(karpenterMaxServers(pool("cpx21", 9))).toBe(3);
    expect(karpenterMaxServers(pool("cpx42", 16))).toBe(0);
  });

  it("refuses a type of unknown size and a limit below one server, and accepts exactly one server", () => {
    expect(karpenterPoolProblems(pool("cpx42")).map((problem) => problem.path)).toEqual(["machineType"]);
    expect(karpenterPoolProblems(pool("cpx42"))[0]!.message).toContain(`allowed with Karpenter: ${Object.keys(catalog.hcloud.serverTypeCapacity).join(", ")}`);
    expect(karpenterPoolProblems(pool("cx43", 7))).toEqual([{ path: "autoscaling.cpuLimit", message: "7 is below one cx43 server (8 vCPUs), so Karpenter could never create one; allowed: 8 to 1000" }]);
    expect(karpenterPoolProblems(pool("cx43", 8))).toEqual([]);
  });
});

describe("what the provider reads from the MachineDeployment", () => {
  it("gets the server's CPU, memory and pods as quantities, and the node labels as key=value pairs", () => {
    const annotations = poolCapacityAnnotations(pool("cx33"));
    expect(annotations).toEqual({
      [capacityAnnotations.cpu]: "4",
      [capacityAnnotations.memory]: "8Gi",
      [capacityAnnotations.maxPods]: "110",
      [capacityAnnotations.labels]: "node.kubernetes.io/instance-type=cx33,kubernetes.io/arch=amd64",
      [karpenterCpuLimitAnnotation]: "16",
    });
    // The provider splits the labels annotation at "," and each pair at the first "=" (cloudprovider.go, labelsFromScaleFromZeroAnnotation).
    const labels = Object.fromEntries(annotations[capacityAnnotations.labels]!.split(",").map((pair) => pair.split("=", 2) as [string, string]));
    expect(labels["kubernetes.io/arch"]).toBe("amd64");
  });

  it("labels an Arm (cax) server's node arm64, so an empty Arm pool is offered to arm64 pods", () => {
    expect(poolCapacityAnnotations(pool("cax21"))[capacityAnnotations.labels]).toBe("node.kubernetes.io/instance-type=cax21,kubernetes.io/arch=arm64");
    expect(poolCapacityAnnotations(pool("cax21"))[capacityAnnotations.memory]).toBe("8Gi");
  });

  it("tells, from the annotations alone, how many servers the pool may have: CAPI's first one up to it plus those under the limit", () => {
    expect(karpenterServerRange(poolCapacityAnnotations(pool("cx33", 18)))).toEqual({ min: 1, max: 5 });
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: "8", [capacityAnnotations.cpu]: "3" })).toEqual({ min: 1, max: 3 });
    expect(karpenterServerRange({ [capacityAnnotations.cpu]: "4" })).toBeUndefined();
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: "16" })).toBeUndefined();
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: "16", [capacityAnnotations.cpu]: "0" })).toBeUndefined();
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: "1.5", [capacityAnnotations.cpu]: "1" })).toBeUndefined();
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: "16", [capacityAnnotations.cpu]: "4x" })).toBeUndefined();
    expect(karpenterServerRange({ [karpenterCpuLimitAnnotation]: 16, [capacityAnnotations.cpu]: "4" })).toBeUndefined();
  });

  it("refuses a type of unknown size rather than promise a server of no size", () => {
    expect(() => poolCapacityAnnotations(pool("cpx42"))).toThrow("server type cpx42 has no known size; the config validation should have refused it");
  });
});

describe("the tenant's objects in its workload cluster", () => {
  it("a ClusterAPINodeClass per pool that selects only that pool's MachineDeployment of that Cluster", () => {
    const nodeClass = karpenterNodeClass("analytics", pool("cx23"));
    expect(nodeClass).toEqual({
      apiVersion: "karpenter.cluster.x-k8s.io/v1alpha1",
      kind: "ClusterAPINodeClass",
      metadata: { name: "burst" },
      spec: { scalableResourceSelector: { matchLabels: poolMachineDeploymentSelector("analytics", "burst") } },
    });
    expect(poolMachineDeploymentSelector("analytics", "burst")).toEqual({ "cluster.x-k8s.io/cluster-name": "analytics", "topology.cluster.x-k8s.io/deployment-name": "burst" });
  });

  it("a NodePool with the stack's CPU limit, expiry and consolidation, bound to the pool's NodeClass and server type", () => {
    expect(karpenterNodePool(pool("cx23", 12))).toEqual({
      apiVersion: "karpenter.sh/v1",
      kind: "NodePool",
      metadata: { name: "burst" },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: "karpenter.cluster.x-k8s.io", kind: "ClusterAPINodeClass", name: "burst" },
            requirements: [{ key: "node.kubernetes.io/instance-type", operator: "In", values: ["cx23"] }],
            expireAfter: "720h",
          },
        },
        limits: { cpu: "12" },
        disruption: { consolidationPolicy: "WhenEmpty", consolidateAfter: "45s" },
      },
    });
  });
});

describe("how the NodeClasses and NodePools reach the workload cluster", () => {
  it("a ClusterResourceSet selecting the tenant's Cluster re-applies a ConfigMap of one NodeClass and one NodePool per pool whenever they change", () => {
    const second = { ...pool("cx33"), name: "burst-2" };
    const set = karpenterResourceSet("analytics", "tenant-analytics", { "capi-fleet.io/tenant": "analytics" }, [pool("cx23"), second]);
    expect(set.clusterResourceSet).toEqual({
      apiVersion: "addons.cluster.x-k8s.io/v1beta2",
      kind: "ClusterResourceSet",
      metadata: { name: "karpenter-nodepools", namespace: "tenant-analytics" },
      spec: { clusterSelector: { matchLabels: { "capi-fleet.io/tenant": "analytics" } }, resources: [{ kind: "ConfigMap", name: "karpenter-nodepools" }], strategy: "Reconcile" },
    });
    expect(set.configMap.metadata).toEqual({ name: "karpenter-nodepools", namespace: "tenant-analytics" });
    // CAPI splits the value into documents at "---" lines and reads each as YAML (JSON is YAML).
    const documents = set.configMap.data["nodepools.yaml"].split("\n---\n").map((text) => parseYaml(text) as unknown);
    expect(documents).toEqual([karpenterNodeClass("analytics", pool("cx23")), karpenterNodePool(pool("cx23")), karpenterNodeClass("analytics", second), karpenterNodePool(second)]);
  });
});

describe("the provider on the management cluster", () => {
  it("reaches the management cluster with its own service account's rotating token and CA, in its namespace", () => {
    const kubeconfig = parseYaml(karpenterManagementKubeconfig("tenant-analytics")) as Record<string, unknown>;
    expect(kubeconfig).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "management", cluster: { server: "https://kubernetes.default.svc", "certificate-authority": "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" } }],
      users: [{ name: "karpenter", user: { tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" } }],
      contexts: [{ name: "management", context: { cluster: "management", user: "karpenter", namespace: "tenant-analytics" } }],
      "current-context": "management",
    });
  });

  it("may read, update and label MachineDeployments and Machines, and nothing else", () => {
    expect(karpenterClusterRoleRules()).toEqual([{ apiGroups: ["cluster.x-k8s.io"], resources: ["machinedeployments", "machines"], verbs: ["get", "list", "watch", "update", "patch"] }]);
    const rbac = karpenterManagementRbac(target);
    expect(rbac.clusterRole.metadata.name).toBe("capi-fleet-karpenter-tenant-analytics");
    expect(rbac.clusterRoleBinding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: rbac.clusterRole.metadata.name });
    expect(rbac.clusterRoleBinding.metadata.name).toBe(rbac.clusterRole.metadata.name);
    expect(rbac.clusterRoleBinding.subjects).toEqual([{ kind: "ServiceAccount", name: "karpenter", namespace: "tenant-analytics" }]);
    expect(rbac.serviceAccount.metadata).toEqual({ name: "karpenter", namespace: "tenant-analytics" });
    expect(rbac.managementKubeconfig.metadata).toEqual({ name: "karpenter-management-kubeconfig", namespace: "tenant-analytics" });
    expect(rbac.managementKubeconfig.data.kubeconfig).toBe(karpenterManagementKubeconfig("tenant-analytics"));
  });

  it("runs the stack's image with the workload cluster as KUBECONFIG and the management cluster as --cluster-api-kubeconfig", () => {
    expect(karpenterCommandLine("/w/value", "/m/kubeconfig")).toEqual({ args: ["--cluster-api-kubeconfig=/m/kubeconfig", "--leader-election-namespace=kube-system"], env: { KUBECONFIG: "/w/value" } });
    const deployment = karpenterDeployment(target);
    const spec = deployment.spec.template.spec;
    const container = spec.containers[0]!;
    expect(deployment.metadata).toMatchObject({ name: "karpenter", namespace: "tenant-analytics" });
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(spec.serviceAccountName).toBe(karpenterNames(target).serviceAccount);
    expect(container.image).toBe(target.image);
    expect(container.args).toEqual(["--cluster-api-kubeconfig=/etc/karpenter/management/kubeconfig", "--leader-election-namespace=kube-system"]);
    expect(container.env).toEqual([{ name: "KUBECONFIG", value: "/etc/karpenter/workload/value" }]);
    // Each mounted path is the directory of a file the arguments name: the Secret's key and the ConfigMap's key.
    const mountOf = (volume: string) => container.volumeMounts.find((mount) => mount.name === volume)!.mountPath;
    expect(spec.volumes).toEqual([
      { name: "workload-kubeconfig", secret: { secretName: "analytics-kubeconfig" } },
      { name: "management-kubeconfig", configMap: { name: "karpenter-management-kubeconfig" } },
    ]);
    expect(`${mountOf("workload-kubeconfig")}/${target.kubeconfigSecret.key}`).toBe("/etc/karpenter/workload/value");
    expect(`${mountOf("management-kubeconfig")}/kubeconfig`).toBe("/etc/karpenter/management/kubeconfig");
    expect(Object.keys(karpenterManagementRbac(target).managementKubeconfig.data)).toEqual(["kubeconfig"]);
    // Mounted read-only; the pod runs as the image's nonroot user (its Dockerfile's USER 65532), as the chart's securityContext says.
    expect(container.volumeMounts.every((mount) => mount.readOnly)).toBe(true);
    expect(spec.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 65532 });
    // The chart's entry point and the binary's default metrics and health ports (--metrics-port 8080, --health-probe-port 8081).
    expect(container.name).toBe("controller");
    expect(container.command).toEqual(["/karpenter-clusterapi-controller"]);
    expect(container.ports).toEqual([
      { name: "http-metrics", containerPort: 8080, protocol: "TCP" },
      { name: "http-health", containerPort: 8081, protocol: "TCP" },
    ]);
    // One tenant's pods are told apart from another's by their instance label.
    expect(deployment.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": "karpenter-clusterapi", "app.kubernetes.io/instance": "analytics" });
  });

  it("is the provider's own member label", () => {
    expect(karpenterMemberLabel).toBe("node.cluster.x-k8s.io/karpenter-member");
  });
});
