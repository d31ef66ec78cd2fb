import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterAutoscalerRbac, clusterAutoscalerServiceAccount } from "../../infra/model/platform/cluster-autoscaler";
import { kubeApiServerBinaries, startKubeApiServer, type KubeApiServer, type KubeResponse } from "../support/kube-apiserver";
import { crdSources, readSource, sourceOfGroup, type Crd } from "../support/upstream-crds";
import { skipIfDeclared } from "../support/unverified";

/**
 * The cluster autoscaler's RBAC (infra/model/platform/cluster-autoscaler.ts, as components/cluster-autoscaler
 * creates it) against a real kube-apiserver with RBAC authorization: the ServiceAccount, Role and
 * RoleBinding are applied in a tenant namespace, the upstream MachineDeployment and
 * HCloudMachineTemplate CRDs are installed (CAPI v1.12.10 and CAPH v1.1.8 at the catalog's
 * versions), and the autoscaler's own token (a real TokenRequest) then does what the clusterapi
 * provider does: reads MachineDeployments and HCloudMachineTemplates of its namespace and scales
 * a MachineDeployment through its scale subresource
 * (kubernetes/autoscaler@cluster-autoscaler-1.35.2: cluster-autoscaler/cloudprovider/clusterapi/
 * clusterapi_unstructured.go, `SetSize` through `managementScaleClient`). The same requests in
 * another tenant's namespace, cluster-wide, or on Secrets are refused; `watch`, which needs a
 * long request, is checked with SubjectAccessReview.
 *
 * Not here: the chart and the autoscaler binary themselves (no chart repository or image
 * registry is reachable from tests); the chart's values are checked against a reading of its
 * templates in infra/model/platform/cluster-autoscaler.test.ts.
 */

const tenant = "tenant-analytics";
const other = "tenant-edge";
const machineDeploymentCrd = "machinedeployments.cluster.x-k8s.io";
const machineTemplateCrd = "hcloudmachinetemplates.infrastructure.cluster.x-k8s.io";

let api: KubeApiServer | undefined;
let token = "";
let unavailable = "";
let rbacApplied = false;

const message = (response: KubeResponse) => JSON.stringify(response.json.message ?? response.json);
const A = () => {
  if (!api) throw new Error("no API server");
  return api;
};

async function must(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse> {
  const response = await A().request(method, path, body, contentType);
  if (response.status >= 300) throw new Error(`${method} ${path}: HTTP ${response.status}: ${message(response)}`);
  return response;
}

/**
 * Applies the program's ServiceAccount, Role and RoleBinding once, and returns the ServiceAccount's
 * token. Every test calls it, not beforeAll: StrykerJS counts only code a test runs as covered by
 * it (docs/testing.md, "Mutation testing"), and a mutated Role must reach the API server.
 */
async function autoscalerToken(): Promise<string> {
  const rbac = clusterAutoscalerRbac(tenant);
  if (rbacApplied) return token;
  await must("POST", `/api/v1/namespaces/${tenant}/serviceaccounts`, rbac.serviceAccount);
  await must("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${tenant}/roles`, rbac.role);
  await must("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${tenant}/rolebindings`, rbac.roleBinding);
  const issued = await must("POST", `/api/v1/namespaces/${tenant}/serviceaccounts/${clusterAutoscalerServiceAccount}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  token = (issued.json.status as { token: string }).token;
  rbacApplied = true;
  return token;
}

/** A request with the autoscaler's ServiceAccount token (the scripts' client, as the API server's other tests use it). */
async function asAutoscaler(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; json: Record<string, unknown>; reason: string }> {
  const { kubeRequest } = await import("../../components/kube-client.mjs");
  const bearer = await autoscalerToken();
  return (await kubeRequest({ ...A().target, token: bearer }, method, path, { timeoutMs: 30_000, body, contentType })) as { status: number; json: Record<string, unknown>; reason: string };
}

async function installCrd(crd: Crd): Promise<void> {
  await must("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = await must("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    const conditions = (got.json.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === "Established" && c.status === "True")) return;
    if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established: ${JSON.stringify(conditions)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A MachineDeployment the v1beta2 schema accepts (no CAPI webhook runs here). */
const machineDeployment = (namespace: string) => ({
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "MachineDeployment",
  metadata: { name: "md-0", namespace },
  spec: {
    clusterName: "analytics",
    replicas: 2,
    selector: { matchLabels: { pool: "md-0" } },
    template: {
      metadata: { labels: { pool: "md-0" } },
      spec: {
        clusterName: "analytics",
        version: "v1.35.3",
        bootstrap: { configRef: { apiGroup: "bootstrap.cluster.x-k8s.io", kind: "KubeadmConfigTemplate", name: "md-0" } },
        infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "HCloudMachineTemplate", name: "md-0" },
      },
    },
  },
});

const machineTemplate = (namespace: string) => ({
  apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1",
  kind: "HCloudMachineTemplate",
  metadata: { name: "md-0", namespace },
  spec: { template: { spec: { type: "cax31", imageName: "ubuntu-24.04" } } },
});

const mdPath = (namespace: string) => `/apis/cluster.x-k8s.io/v1beta2/namespaces/${namespace}/machinedeployments`;
const templatePath = (namespace: string) => `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${namespace}/hcloudmachinetemplates`;

beforeAll(async () => {
  const capi = readSource(crdSources.find((source) => source.module === "sigs.k8s.io/cluster-api")!);
  const caph = readSource(sourceOfGroup("infrastructure.cluster.x-k8s.io")!);
  if ("unavailable" in capi || "unavailable" in caph) {
    unavailable = ["unavailable" in capi ? capi.unavailable : "", "unavailable" in caph ? caph.unavailable : ""].filter(Boolean).join("; ");
    return;
  }
  api = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "cluster-autoscaler-rbac");
  for (const crd of [...capi.crds, ...caph.crds].filter((c) => [machineDeploymentCrd, machineTemplateCrd].includes(c.metadata.name))) await installCrd(crd);
  for (const namespace of [tenant, other]) {
    await must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await must("POST", mdPath(namespace), machineDeployment(namespace));
    await must("POST", templatePath(namespace), machineTemplate(namespace));
    await must("POST", `/api/v1/namespaces/${namespace}/secrets`, { apiVersion: "v1", kind: "Secret", metadata: { name: "analytics-kubeconfig", namespace }, stringData: { value: "stand-in" } });
  }
}, 45 * 60_000);

afterAll(async () => {
  await api?.stop();
});

describe("the cluster autoscaler's RBAC on a real API server", () => {
  it("lets the autoscaler read and scale its tenant's MachineDeployments and read its HCloudMachineTemplates", async (context) => {
    if (unavailable) return skipIfDeclared(context, `upstream CRDs unavailable: ${unavailable}`);
    expect((await asAutoscaler("GET", mdPath(tenant))).status).toBe(200);
    expect((await asAutoscaler("GET", `${templatePath(tenant)}/md-0`)).status).toBe(200);
    const scaled = await asAutoscaler("PATCH", `${mdPath(tenant)}/md-0/scale`, { spec: { replicas: 4 } }, "application/merge-patch+json");
    expect(scaled.status, scaled.reason).toBe(200);
    expect(((await must("GET", `${mdPath(tenant)}/md-0`)).json.spec as { replicas: number }).replicas).toBe(4);
    // Marking a Machine for deletion before a scale-down is an update (clusterapi_unstructured.go, MarkMachineForDeletion).
    const updated = await asAutoscaler("PUT", `${mdPath(tenant)}/md-0`, (await must("GET", `${mdPath(tenant)}/md-0`)).json);
    expect(updated.status, updated.reason).toBe(200);
  });

  it("refuses the same in another tenant's namespace, cluster-wide, and on the kubeconfig Secret", async (context) => {
    if (unavailable) return skipIfDeclared(context, `upstream CRDs unavailable: ${unavailable}`);
    const refused = [
      await asAutoscaler("GET", mdPath(other)),
      await asAutoscaler("PATCH", `${mdPath(other)}/md-0/scale`, { spec: { replicas: 5 } }, "application/merge-patch+json"),
      await asAutoscaler("GET", templatePath(other)),
      await asAutoscaler("GET", "/apis/cluster.x-k8s.io/v1beta2/machinedeployments"),
      await asAutoscaler("GET", `/api/v1/namespaces/${tenant}/secrets/analytics-kubeconfig`),
      await asAutoscaler("DELETE", `${mdPath(tenant)}/md-0`),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(((await must("GET", `${mdPath(other)}/md-0`)).json.spec as { replicas: number }).replicas).toBe(2);
  });

  it("grants what the clusterapi provider needs, in the tenant's namespace only (SubjectAccessReview)", async (context) => {
    if (unavailable) return skipIfDeclared(context, `upstream CRDs unavailable: ${unavailable}`);
    await autoscalerToken();
    const allowed = async (namespace: string, group: string, resource: string, verb: string) => {
      const review = await must("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user: `system:serviceaccount:${tenant}:${clusterAutoscalerServiceAccount}`, resourceAttributes: { namespace, group, resource, verb } },
      });
      return (review.json.status as { allowed: boolean }).allowed;
    };
    // What the provider does (a reading; the autoscaler is not reachable here): the chart's namespaced
    // Role for clusterapi (cluster-autoscaler-chart-9.59.0: templates/role.yaml) — get, list, watch
    // and update on the scalable objects and Machines (informers; MarkMachineForDeletion), get,
    // patch and update on their scale subresource (SetSize) — and reading the infrastructure
    // templates for scale from zero (cloudprovider/clusterapi/README.md, "RBAC changes for scaling from zero").
    const needs: [string, string, string[]][] = [
      ...["machinedeployments", "machinepools", "machines", "machinesets"].map((resource): [string, string, string[]] => ["cluster.x-k8s.io", resource, ["get", "list", "update", "watch"]]),
      ...["machinedeployments/scale", "machinepools/scale"].map((resource): [string, string, string[]] => ["cluster.x-k8s.io", resource, ["get", "patch", "update"]]),
      ["infrastructure.cluster.x-k8s.io", "hcloudmachinetemplates", ["get", "list", "watch"]],
    ];
    for (const [group, path, verbs] of needs) {
      const [resource, subresource] = path.split("/") as [string, string | undefined];
      const review = async (namespace: string, verb: string) => {
        const response = await must("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: { user: `system:serviceaccount:${tenant}:${clusterAutoscalerServiceAccount}`, resourceAttributes: { namespace, group, resource, subresource, verb } },
        });
        return (response.json.status as { allowed: boolean }).allowed;
      };
      for (const verb of verbs) {
        expect(await review(tenant, verb), `${verb} ${path} in ${tenant}`).toBe(true);
        expect(await review(other, verb), `${verb} ${path} in ${other}`).toBe(false);
        expect(await review("", verb), `${verb} ${path} cluster-wide`).toBe(false);
      }
    }
    expect(await allowed(tenant, "cluster.x-k8s.io", "machinedeployments", "delete"), "delete").toBe(false);
  });
});
