import { afterAll, describe, expect, it } from "vitest";
import { clusterClassName, clusterClassNamespace } from "../../infra/model/platform/hetzner-cluster-class";
import { runRegisteredCommand } from "../support/engine-pwd";
import { byType, one, runStack, waitsFor } from "../support/fleet-run";
import { adminKubeconfig, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../support/kube-apiserver";
import type { Registration } from "../support/pulumi-mocks";
import { readSource, sourceOfGroup } from "../support/upstream-crds";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

// `pulumi destroy` of a management stack while Clusters it does not declare (gitops-created
// tenants, a shard's tenants) use the fleet's ClusterClass: Cluster API refuses to delete the class
// (sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/clusterclass.go), so the destroy would stop
// half-way. The destroy guard, a delete-only command the engine runs first, is run here as the
// program registers it against a real kube-apiserver with CAPI's Cluster CRD (from CAPI's module).

const commandType = "command:local:Command";
const guardName = "destroy-guard-foreign-clusters";

let api: KubeApiServer | undefined;
afterAll(async () => {
  await api?.stop();
});

/** Runs the guard's `delete` as the engine does on destroy, its kubeconfig pointed at `server`. */
function runGuard(command: Registration, server: KubeApiServer) {
  return runRegisteredCommand(command, "delete", { ...(command.inputs.environment as Record<string, string>), MANAGEMENT_KUBECONFIG: adminKubeconfig(server) });
}

async function must(response: Promise<{ status: number }>, ...ok: number[]): Promise<void> {
  const { status } = await response;
  if (!ok.includes(status)) throw new Error(`HTTP ${status}`);
}

/** A Cluster of a topology class, as far as the guard reads it. */
function topologyCluster(namespace: string, name: string, classRef: { name: string; namespace?: string }) {
  return { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", metadata: { name, namespace }, spec: { topology: { classRef, version: "v1.34.6", controlPlane: { replicas: 1 } } } };
}

describe("the destroy guard", () => {
  it.each(["dev", "prod"])("%s: the engine deletes it before anything else in the cluster, and it holds every tenant the stack declares", async (stack) => {
    const { registrations } = await runStack(stack);
    const guard = one(registrations, commandType, guardName);
    expect(guard.inputs.delete).toBe(`node ${scriptEntryPoints.destroyGuard}`);
    expect(guard.inputs.create).toBeUndefined();
    expect(guard.secretInputs).toContain("environment");
    const others = registrations.filter((r) => r !== guard && (r.type.startsWith("kubernetes:") || r.type === commandType) && r.type !== "pulumi:providers:kubernetes");
    expect(others.length).toBeGreaterThan(20);
    // Pulumi deletes a resource before those it depends on.
    for (const other of others) expect(waitsFor(registrations, guard, other), other.name).toBe(true);
    const declared = JSON.parse((guard.inputs.environment as Record<string, string>).DECLARED_CLUSTERS!) as string[];
    const clusters = byType(registrations, "kubernetes:cluster.x-k8s.io/v1beta2:Cluster").map((cluster) => {
      const metadata = cluster.inputs.metadata as { name: string; namespace: string };
      return `${metadata.namespace}/${metadata.name}`;
    });
    expect(declared).toEqual(clusters.sort());
  });

  it("against a real API server: passes without Cluster API and with the stack's own Clusters, stops naming a Cluster it does not declare", async () => {
    const { registrations } = await runStack("prod");
    const guard = one(registrations, commandType, guardName);
    api ??= await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "destroy-guard");

    const noCapi = await runGuard(guard, api);
    expect(noCapi.code, noCapi.stderr).toBe(0);
    expect(noCapi.stderr).toContain("Cluster API is not installed");

    const capi = readSource(sourceOfGroup("cluster.x-k8s.io")!);
    if ("unavailable" in capi) throw new Error(capi.unavailable);
    await must(api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", capi.crds.find((crd) => crd.metadata.name === "clusters.cluster.x-k8s.io")), 201);
    for (let attempt = 0; (await api.request("GET", "/apis/cluster.x-k8s.io/v1beta2/clusters")).status !== 200; attempt += 1) {
      if (attempt > 100) throw new Error("the Cluster CRD is not served");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const classRef = { name: clusterClassName, namespace: clusterClassNamespace };
    const declared = JSON.parse((guard.inputs.environment as Record<string, string>).DECLARED_CLUSTERS!) as string[];
    for (const key of [...declared, "gitops-team/gitops-team", "elsewhere/other-class"]) {
      const namespace = key.split("/")[0]!;
      await must(api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }), 201, 409);
    }
    for (const key of declared) {
      const [namespace, name] = key.split("/") as [string, string];
      await must(api.request("POST", `/apis/cluster.x-k8s.io/v1beta2/namespaces/${namespace}/clusters`, topologyCluster(namespace, name, classRef)), 201);
    }
    // Another class entirely, and a classRef without a namespace (the Cluster's own): neither is the fleet's class.
    await must(api.request("POST", "/apis/cluster.x-k8s.io/v1beta2/namespaces/elsewhere/clusters", topologyCluster("elsewhere", "other-class", { name: clusterClassName })), 201);
    const ownOnly = await runGuard(guard, api);
    expect(ownOnly.code, ownOnly.stderr).toBe(0);

    await must(api.request("POST", "/apis/cluster.x-k8s.io/v1beta2/namespaces/gitops-team/clusters", topologyCluster("gitops-team", "gitops-team", classRef)), 201);
    const foreign = await runGuard(guard, api);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`stopped before deleting anything: 1 Cluster(s) that this stack does not declare use the ClusterClass ${clusterClassNamespace}/${clusterClassName}: gitops-team/gitops-team`);
  }, 45 * 60_000);
});
