import http from "node:http";
import type { AddressInfo } from "node:net";
import { parse, stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { byType, one, runStack } from "../support/fleet-run";
import { kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../support/kube-apiserver";
import type { Registration } from "../support/pulumi-mocks";
import { runRegisteredCommand } from "../support/engine-pwd";
import { fakeHcloudToken } from "../support/stack-files";
import { readSource, sourceOfGroup } from "../support/upstream-crds";

// The tenants' kubeconfig and load-balancer drain commands exactly as the program registers them
// (command line and environment, from the prod program under mocks), run the way the command
// provider runs them (`sh -c`, in the command's `dir` resolved from the directory the engine starts the
// plugin in, which `Pulumi.yaml`'s `main` decides, with the resource's environment), against:
// - a real kube-apiserver serving with the program's own management PKI: a serving certificate
//   from the program's server CA, and the program's client CA as --client-ca-file, as k3s does
//   with the CA files the program writes. It holds the CAPI Cluster CRD, the tenant's Cluster as
//   the program declares it (status written as CAPI v1.12 reports an Available Cluster) and the
//   `<cluster>-kubeconfig` Secret, which points back at the same API server as the workload cluster;
// - a stand-in for the Hetzner API (plain HTTP) that answers load-balancer lists.
// The one change to the program's output: the management kubeconfig's server address becomes the
// API server's (the mocks give the management load balancer a documentation address).

const tenant = { name: "payments", namespace: "tenant-payments" };
const clusterType = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster";
const commandType = "command:local:Command";

let api: KubeApiServer | undefined;
let registrations: Registration[];
let hetzner: http.Server | undefined;
let hetznerUrl: string;
const hetznerRequests: { authorization: string; selector: string }[] = [];

/** The environment a registered command runs with, the management kubeconfig pointed at the test's API server. */
function environmentOf(command: Registration, server: string): Record<string, string> {
  const environment = { ...(command.inputs.environment as Record<string, string>) };
  const kubeconfig = parse(environment.MANAGEMENT_KUBECONFIG!) as { clusters: { cluster: { server: string } }[] };
  expect(kubeconfig.clusters).toHaveLength(1);
  kubeconfig.clusters[0]!.cluster.server = server;
  environment.MANAGEMENT_KUBECONFIG = stringify(kubeconfig);
  return environment;
}

async function must(response: Promise<{ status: number; json: Record<string, unknown> }>, ...ok: number[]) {
  const answer = await response;
  if (!ok.includes(answer.status)) throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.json).slice(0, 400)}`);
  return answer.json;
}

/**
 * Runs the program, starts the API server with its PKI and fills it, once; called from the tests
 * (not a beforeAll) so that mutation testing credits them with the program code it runs.
 */
let prepared: Promise<void> | undefined;
const ready = (): Promise<void> => (prepared ??= prepare());

async function prepare(): Promise<void> {
  ({ registrations } = await runStack("prod"));
  const pkiCommand = byType(registrations, commandType).find((r) => r.inputs.create === "node scripts/management-pki.mjs authorities")!;
  const authorities = JSON.parse(pkiCommand.state!.stdout as string) as { serverCa: { certPem: string; keyPem: string }; clientCa: { certPem: string } };
  api = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "tenant-commands", {
    serverCa: authorities.serverCa,
    clientCaCertPem: authorities.clientCa.certPem,
  });

  // The Cluster kind, from CAPI's module at the catalog's version (sigs.k8s.io/cluster-api@v1.12.10: config/crd/bases).
  const capi = readSource(sourceOfGroup("cluster.x-k8s.io")!);
  if ("unavailable" in capi) throw new Error(capi.unavailable);
  const clusterCrd = capi.crds.find((crd) => crd.metadata.name === "clusters.cluster.x-k8s.io")!;
  await must(api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", clusterCrd), 201);
  await must(api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: tenant.namespace } }), 201);
  const clusterPath = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${tenant.namespace}/clusters`;
  for (let attempt = 0; ; attempt += 1) {
    if ((await api.request("GET", clusterPath)).status === 200) break;
    if (attempt > 100) throw new Error("the Cluster CRD is not served");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  // The tenant's Cluster as the program declares it, then the status CAPI writes once it is Available.
  const declared = byType(registrations, clusterType).find((r) => r.urn.includes(`tenant-${tenant.name}`))!;
  const created = await must(api.request("POST", clusterPath, structuredClone(declared.inputs)), 201);
  const metadata = created.metadata as { name: string; generation: number };
  const condition = (type: string, reason: string) => ({ type, status: "True", reason, message: "", observedGeneration: metadata.generation, lastTransitionTime: "2026-01-01T00:00:00Z" });
  await must(
    api.request("PUT", `${clusterPath}/${metadata.name}/status`, {
      ...created,
      status: {
        observedGeneration: metadata.generation,
        conditions: [
          condition("Available", "Available"),
          condition("InfrastructureReady", "Ready"),
          condition("ControlPlaneInitialized", "Initialized"),
          condition("ControlPlaneAvailable", "Available"),
          condition("WorkersAvailable", "Available"),
          condition("RemoteConnectionProbe", "ProbeSucceeded"),
          condition("TopologyReconciled", "ReconcileSucceeded"),
        ],
      },
    }),
    200,
  );

  // CAPI's kubeconfig Secret; the "workload cluster" is the same API server (token auth).
  const workloadKubeconfig = stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: tenant.name, cluster: { server: api.url, "certificate-authority-data": Buffer.from(authorities.serverCa.certPem).toString("base64") } }],
    users: [{ name: `${tenant.name}-admin`, user: { token: api.target.token } }],
    contexts: [{ name: tenant.name, context: { cluster: tenant.name, user: `${tenant.name}-admin` } }],
    "current-context": tenant.name,
  });
  await must(
    api.request("POST", `/api/v1/namespaces/${tenant.namespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      type: "cluster.x-k8s.io/secret",
      metadata: { name: `${tenant.name}-kubeconfig`, labels: { "cluster.x-k8s.io/cluster-name": tenant.name } },
      stringData: { value: workloadKubeconfig },
    }),
    201,
  );

  // Stand-in for the Hetzner API: records who asks for which load balancers, and knows none.
  hetzner = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://hetzner");
    hetznerRequests.push({ authorization: request.headers.authorization ?? "", selector: url.searchParams.get("label_selector") ?? "" });
    response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ load_balancers: [], meta: { pagination: { page: 1, per_page: 50, total_entries: 0 } } }));
  });
  const listening = hetzner;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  hetznerUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}/v1`;
}

afterAll(async () => {
  await api?.stop();
  await new Promise<void>((resolve) => {
    if (hetzner) {
      hetzner.close(() => {
        resolve();
      });
    }
    else resolve();
  });
});

describe("the tenant commands the program registers, against a real API server with the program's PKI", () => {
  it("the kubeconfig command authenticates with the program's admin certificate, finds the declared Cluster Available and prints its kubeconfig", async () => {
    await ready();
    const command = one(registrations, commandType, `tenant-${tenant.name}-kubeconfig`);
    const run = await runRegisteredCommand(command, "create", environmentOf(command, api!.url));
    expect(run.stderr).toContain(`cluster ${tenant.namespace}/${tenant.name} is Available`);
    expect(run.code).toBe(0);
    const printed = parse(run.stdout) as { clusters: { cluster: { server: string } }[] };
    expect(printed.clusters[0]!.cluster.server).toBe(api!.url);
  }, 45 * 60_000);

  it("the drain command, run as on delete, deletes the workload's LoadBalancer Services and asks Hetzner with the tenant's token", async () => {
    await ready();
    const service = await must(
      api!.request("POST", "/api/v1/namespaces/default/services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "ingress" },
        spec: { type: "LoadBalancer", ports: [{ port: 443 }] },
      }),
      201,
    );
    const uid = (service.metadata as { uid: string }).uid;
    const command = one(registrations, commandType, `tenant-${tenant.name}-load-balancer-drain`);
    // Not from the program: where the Hetzner API is, and a short poll.
    const environment = { ...environmentOf(command, api!.url), HCLOUD_ENDPOINT: hetznerUrl, POLL_MILLISECONDS: "200" };
    const run = await runRegisteredCommand(command, "delete", environment);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toBe("");
    expect((await api!.request("GET", "/api/v1/namespaces/default/services/ingress")).status).toBe(404);
    expect(hetznerRequests.length).toBeGreaterThan(0);
    expect(hetznerRequests.every((request) => request.authorization === `Bearer ${fakeHcloudToken(`capi-fleet:tenantHcloudTokens.${tenant.name}`)}`)).toBe(true);
    expect(hetznerRequests[0]!.selector).toContain(uid);
  }, 45 * 60_000);
});
