import { createServer, type Server } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issue } from "../../tests/support/fakes/cert-manager";
import { runRegisteredCommand } from "../../tests/support/engine-pwd";
import { byType, one, runStack, waitsFor } from "../../tests/support/fleet-run";
import { adminKubeconfig, freePort, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../../tests/support/kube-apiserver";
import type { Registration } from "../../tests/support/pulumi-mocks";
import { clusterIpLookup, startServiceEgress, type ServiceEgress } from "../../tests/support/service-egress";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

// The ClusterApi component's admission wait (components/cluster-api/wait-for-admission.mjs), run as
// the program registers it against a real kube-apiserver whose webhook, named by a Service as the
// operator's is, is served by this test through the API server's egress (tests/support/service-egress.ts):
// not serving yet, serving, refusing. The objects are ConfigMaps in a namespace the webhook
// watches, so no operator CRD is needed; what the API server does with a webhook is the same.

const commandType = "command:local:Command";
const waitName = "cluster-api-wait-for-admission";
const namespace = "admission-test";
const service = { name: "late-webhook", namespace: "default" };
const ca = issue("admission-test-ca", [], true);
const serving = issue(`${service.name}.${service.namespace}.svc`, [`${service.name}.${service.namespace}.svc`], false, ca);

let api: KubeApiServer | undefined;
let egress: ServiceEgress | undefined;
let webhook: Server | undefined;
let verdict: { allowed: boolean; message?: string } = { allowed: true };
let wait: Registration | undefined;

beforeAll(async () => {
  egress = await startServiceEgress();
  api = await startKubeApiServer(await kubeApiServerBinaries(30 * 60_000), 90_000, "wait-for-admission", undefined, [`--egress-selector-config-file=${egress.configFile}`]);
  egress.lookup = clusterIpLookup(api);
  const must = async (method: string, path: string, body: unknown) => {
    const answer = await api!.request(method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.json)}`);
  };
  await must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { "admission-test": "yes" } } });
  await must("POST", `/api/v1/namespaces/${service.namespace}/services`, { apiVersion: "v1", kind: "Service", metadata: { name: service.name }, spec: { ports: [{ port: 443, targetPort: 9443 }] } });
  await must("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "late-webhook" },
    webhooks: [
      {
        name: "late.admission-test.example",
        clientConfig: { service: { ...service, path: "/validate", port: 443 }, caBundle: Buffer.from(ca.cert).toString("base64") },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
        namespaceSelector: { matchLabels: { "admission-test": "yes" } },
        failurePolicy: "Fail",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 5,
      },
    ],
  });
  const { registrations } = await runStack("dev");
  wait = one(registrations, commandType, waitName);
}, 35 * 60_000);

afterAll(async () => {
  webhook?.close();
  await api?.stop();
  await egress?.stop();
});

async function serveWebhook(): Promise<void> {
  const port = await freePort();
  webhook = createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      const review = JSON.parse(body) as { apiVersion: string; request: { uid: string; dryRun?: boolean } };
      if (review.request.dryRun !== true) throw new Error("the wait sent a request that was not a dry run");
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ apiVersion: review.apiVersion, kind: "AdmissionReview", response: { uid: review.request.uid, allowed: verdict.allowed, ...(verdict.message ? { status: { code: 403, message: verdict.message } } : {}) } }));
    });
  });
  await new Promise<void>((resolve) => webhook!.listen(port, "127.0.0.1", resolve));
  egress!.route(`${service.name}.${service.namespace}`, port);
}

/** The wait as registered, its kubeconfig pointed at the test's API server and its objects replaced by ConfigMaps. */
function runWait(extra: Record<string, string> = {}) {
  const requests = [0, 1].map((index) => ({ path: `/api/v1/namespaces/${namespace}/configmaps`, body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `probe-${index}`, namespace }, data: { index: String(index) } } }));
  return runRegisteredCommand(
    wait!,
    "create",
    { ...(wait!.inputs.environment as Record<string, string>), MANAGEMENT_KUBECONFIG: adminKubeconfig(api!), ADMISSION_REQUESTS: JSON.stringify(requests), ADMISSION_POLL_MILLISECONDS: "250", ...extra },
    120_000,
  );
}

describe("the admission wait before the Cluster API providers", () => {
  it.each(["dev", "prod"])("%s: every provider waits for it, and it dry-runs exactly the providers the program creates", async (stack) => {
    const { registrations } = await runStack(stack);
    const command = one(registrations, commandType, waitName);
    expect(command.inputs.create).toBe(`node ${scriptEntryPoints.waitForAdmission}`);
    expect(command.secretInputs).toContain("environment");
    const providers = byType(registrations, "kubernetes:operator.cluster.x-k8s.io/v1alpha2:CoreProvider")
      .concat(["BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider", "AddonProvider"].flatMap((kind) => byType(registrations, `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${kind}`)));
    expect(providers).toHaveLength(5);
    for (const provider of providers) expect(waitsFor(registrations, provider, command), provider.name).toBe(true);
    const operator = registrations.find((registration) => registration.type === "kubernetes:helm.sh/v3:Release" && registration.name === "cluster-api-operator")!;
    expect(waitsFor(registrations, command, operator)).toBe(true);
    const requests = JSON.parse((command.inputs.environment as Record<string, string>).ADMISSION_REQUESTS!) as { path: string; body: { kind: string; metadata: object; spec: object } }[];
    expect(requests.map((request) => request.body)).toEqual(providers.map((provider) => ({ apiVersion: provider.inputs.apiVersion, kind: provider.inputs.kind, metadata: { name: (provider.inputs.metadata as { name: string }).name, namespace: (provider.inputs.metadata as { namespace: string }).namespace }, spec: provider.inputs.spec })));
    for (const request of requests) {
      const metadata = request.body.metadata as { namespace: string };
      expect(request.path).toBe(`/apis/operator.cluster.x-k8s.io/v1alpha2/namespaces/${metadata.namespace}/${request.body.kind.toLowerCase()}s`);
    }
  });

  it("against a real API server: waits while the webhook does not serve, passes once it admits, and stores nothing", async () => {
    const started = Date.now();
    const running = runWait();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await serveWebhook();
    const run = await running;
    expect(run.code, run.output).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(run.stderr).toContain("not yet admitted: ConfigMap admission-test/probe-0 (HTTP 500");
    expect(run.stderr).toContain("failed calling webhook");
    expect(run.stderr).toContain("the API server admits ConfigMap admission-test/probe-1");
    const stored = await api!.request("GET", `/api/v1/namespaces/${namespace}/configmaps/probe-0`);
    expect(stored.status).toBe(404);
  }, 180_000);

  it("fails at once, naming the object and the reason, when the webhook refuses", async () => {
    verdict = { allowed: false, message: "provider spec refused by the test" };
    try {
      const run = await runWait();
      expect(run.code).toBe(1);
      expect(run.elapsedMs).toBeLessThan(10_000);
      expect(run.stderr).toContain("refuses ConfigMap admission-test/probe-0 (HTTP 403)");
      expect(run.stderr).toContain("provider spec refused by the test");
    } finally {
      verdict = { allowed: true };
    }
  }, 60_000);

  it("gives up, bounded, naming what it waited for", async () => {
    // No webhook at all now: its server and the API server's open connections to it are gone.
    webhook!.closeAllConnections();
    webhook!.close();
    egress!.route(`${service.name}.${service.namespace}`, 1);
    const run = await runWait({ ADMISSION_WAIT_SECONDS: "2" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("gave up after 2s; still not admitted: ConfigMap admission-test/probe-0");
  }, 60_000);
});
