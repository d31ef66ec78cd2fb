import { afterAll, describe, expect, it } from "vitest";
import { configKeys } from "../../infra/model/config/stack-config";
import { karpenterClusterRoleRules, karpenterMemberLabel, poolMachineDeploymentSelector } from "../../infra/model/platform/karpenter";
import { runRegisteredCommand } from "../support/engine-pwd";
import { byType, runStack } from "../support/fleet-run";
import { adminKubeconfig, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../support/kube-apiserver";
import type { Registration } from "../support/pulumi-mocks";
import { readSource, sourceOfGroup } from "../support/upstream-crds";

// A Karpenter tenant's management-side objects as the program registers them (dev, its pool handed
// to Karpenter, under mocks), against a real kube-apiserver with RBAC and CAPI's MachineDeployment
// CRD (the catalog's CAPI module): the hand-over command, run as the command provider runs it, and
// the provider's ClusterRole, judged by the API server's own SubjectAccessReview. The real provider
// and CAPI's controllers act on them in tests/in-the-loop/karpenter-in-the-loop.test.ts (when its binary is given).

const namespace = "dev-a";
const cluster = "dev-a";
const pool = "md-0";
let api: KubeApiServer | undefined;
let registrations: Registration[] = [];

function karpenterDev(values: Record<string, string>): void {
  const tenants = JSON.parse(values[configKeys.tenants]!) as { workers: Record<string, unknown>[]; karpenter?: unknown }[];
  delete tenants[0]!.workers[0]!.replicas;
  tenants[0]!.workers[0]!.autoscaling = { provider: "karpenter", cpuLimit: 8 };
  tenants[0]!.karpenter = { image: "registry.example.com/karpenter-clusterapi-controller:v0.2.0" };
  values[configKeys.tenants] = JSON.stringify(tenants);
}

async function must(response: Promise<{ status: number; json: Record<string, unknown> }>, ...ok: number[]) {
  const answer = await response;
  if (!ok.includes(answer.status)) throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.json).slice(0, 400)}`);
  return answer.json;
}

const mdPath = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${namespace}/machinedeployments`;

/** A MachineDeployment as CAPI's topology controller creates it for the pool (its labels and replicas). */
function machineDeployment(name: string, replicas: number) {
  const labels = poolMachineDeploymentSelector(cluster, pool);
  return {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "MachineDeployment",
    metadata: { name, namespace, labels },
    spec: {
      clusterName: cluster,
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          clusterName: cluster,
          bootstrap: { configRef: { apiGroup: "bootstrap.cluster.x-k8s.io", kind: "KubeadmConfigTemplate", name: "workers" } },
          infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "HCloudMachineTemplate", name: "workers" },
        },
      },
    },
  };
}

let prepared: Promise<void> | undefined;
const ready = (): Promise<void> => (prepared ??= prepare());
async function prepare(): Promise<void> {
  ({ registrations } = await runStack("dev", karpenterDev));
  api = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "karpenter-commands");
  const capi = readSource(sourceOfGroup("cluster.x-k8s.io")!);
  if ("unavailable" in capi) throw new Error(capi.unavailable);
  for (const name of ["machinedeployments.cluster.x-k8s.io", "machines.cluster.x-k8s.io"]) {
    await must(api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", capi.crds.find((crd) => crd.metadata.name === name)!), 201);
  }
  await must(api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }), 201);
  for (let attempt = 0; (await api.request("GET", mdPath)).status !== 200; attempt += 1) {
    if (attempt > 100) throw new Error("the MachineDeployment CRD is not served");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

afterAll(async () => {
  await api?.stop();
}, 60_000);

const handOverCommand = () => byType(registrations, "command:local:Command").find((r) => r.inputs.create === "node scripts/karpenter-hand-over.mjs")!;
const environment = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...(handOverCommand().inputs.environment as Record<string, string>),
  MANAGEMENT_KUBECONFIG: adminKubeconfig(api!),
  POLL_MILLISECONDS: "200",
  ...extra,
});

describe("a Karpenter tenant's hand-over and RBAC on a real API server", () => {
  it("hands the pool's MachineDeployment to Karpenter once: member label and zero replicas, then leaves its replicas alone", async () => {
    await ready();
    expect(handOverCommand().inputs.environment).toMatchObject({ TENANT_NAMESPACE: namespace, TENANT_CLUSTER: cluster, POOLS: pool });
    await must(api!.request("POST", mdPath, machineDeployment("dev-a-md-0-abcde", 1)), 201);
    const first = await runRegisteredCommand(handOverCommand(), "create", environment());
    expect(first.code, first.output).toBe(0);
    expect(first.stderr).toContain("md-0: MachineDeployment dev-a-md-0-abcde handed to Karpenter");
    const handed = await must(api!.request("GET", `${mdPath}/dev-a-md-0-abcde`), 200);
    expect((handed.metadata as { labels: Record<string, string> }).labels[karpenterMemberLabel]).toBe("");
    expect((handed.spec as { replicas: number }).replicas).toBe(0);

    // Karpenter's own scale since then is not undone by a second run (a changed pool list reruns it).
    await must(api!.request("PATCH", `${mdPath}/dev-a-md-0-abcde`, { spec: { replicas: 3 } }, "application/merge-patch+json"), 200);
    const again = await runRegisteredCommand(handOverCommand(), "create", environment());
    expect(again.code, again.output).toBe(0);
    expect(again.stderr).toContain("is Karpenter's already; left alone");
    expect(((await must(api!.request("GET", `${mdPath}/dev-a-md-0-abcde`), 200)).spec as { replicas: number }).replicas).toBe(3);
  }, 40 * 60_000 + 120_000);

  it("gives up, naming the pool, when CAPI has not made its MachineDeployment in time; refuses a missing setting", async () => {
    await ready();
    const missing = await runRegisteredCommand(handOverCommand(), "create", environment({ POOLS: "md-9", WAIT_SECONDS: "1" }));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no MachineDeployment of pool md-9 of Cluster ${namespace}/${cluster} after 1 s`);
    const { POOLS: _pools, ...withoutPools } = environment();
    const refused = await runRegisteredCommand(handOverCommand(), "create", withoutPools);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("missing environment variables: POOLS");
  }, 40 * 60_000 + 120_000);

  it("the provider's ClusterRole lets it read and update MachineDeployments and Machines in every namespace, and nothing else", async () => {
    await ready();
    const declared = (type: string) => structuredClone(byType(registrations, type)[0]!.inputs);
    const serviceAccount = declared("kubernetes:core/v1:ServiceAccount") as { metadata: { name: string; namespace: string } };
    await must(api!.request("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, serviceAccount), 201);
    await must(api!.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", declared("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")), 201);
    await must(api!.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", declared("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")), 201);
    const user = `system:serviceaccount:${namespace}:${serviceAccount.metadata.name}`;
    const allowed = async (attributes: Record<string, string>) => {
      const review = await must(api!.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: { user, groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`], resourceAttributes: attributes } }), 201);
      return (review.status as { allowed: boolean }).allowed;
    };
    // Everything the provider does (pkg/providers: list and watch through informers, get, update; its ClusterRole adds patch).
    for (const { resources, verbs } of karpenterClusterRoleRules()) {
      for (const resource of resources) {
        for (const verb of verbs) {
          expect(await allowed({ group: "cluster.x-k8s.io", resource, verb }), `${verb} ${resource} cluster-wide`).toBe(true);
          expect(await allowed({ group: "cluster.x-k8s.io", resource, verb, namespace: "tenant-other" }), `${verb} ${resource} elsewhere`).toBe(true);
        }
      }
    }
    for (const [group, resource, verb] of [["cluster.x-k8s.io", "machinedeployments", "delete"], ["cluster.x-k8s.io", "clusters", "get"], ["", "secrets", "get"], ["infrastructure.cluster.x-k8s.io", "hcloudmachinetemplates", "get"]] as const) {
      expect(await allowed({ group, resource, verb, namespace }), `${verb} ${group}/${resource}`).toBe(false);
    }
  }, 40 * 60_000 + 120_000);
});
