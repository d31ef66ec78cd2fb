import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { TLSSocket } from "node:tls";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildKubeconfig } from "../../infra/model/management/kubeconfig";
import { repoRoot } from "../../tests/support/stack-files";
import { localServerCertificate, runNodeScript, type ScriptRun } from "../../tests/support/script-harness";

// Runs components/tenant-cluster/workload-kubeconfig.mjs as a process against a real TLS management API
// that serves the tenant's v1beta2 Cluster (with the conditions CAPI v1.12 reports) and the
// CAPI `<cluster>-kubeconfig` Secret, at first not at all (as before the control plane
// endpoint exists). It accepts our own admin client certificate (components/management-cluster/management-pki.mjs)
// or a bearer token, like an apiserver does.

const script = path.join(repoRoot, "scripts", "workload-kubeconfig.mjs");
let dir: string;
const pem = (name: string) => readFileSync(path.join(dir, name), "utf8");

const runScript = (env: Record<string, string>): Promise<ScriptRun> => runNodeScript(script, env);

/** What the workload cluster's kubeconfig looks like in the Secret CAPI writes. */
const workloadKubeconfig = stringify({
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "alpha", cluster: { server: "https://198.51.100.20:6443", "certificate-authority-data": "Q0EK" } }],
  users: [{ name: "alpha-admin", user: { "client-certificate-data": "Q0VSVAo=", "client-key-data": "S0VZCg==" } }],
  contexts: [{ name: "alpha-admin@alpha", context: { cluster: "alpha", user: "alpha-admin" } }],
  "current-context": "alpha-admin@alpha",
});

const token = randomBytes(24).toString("hex");
let server: https.Server;
let url: string;
let certificateKubeconfig: string;
let requests: number;
/** Secret GETs answered 404 before the Secret exists; Infinity: never. */
let missingFor: number;
let forbidden: boolean;
/** The Cluster's status for each Cluster GET (called with the GET's number); undefined: 404. */
let clusterStatus: (read: number) => Record<string, unknown> | undefined;
let clusterReads: number;
let clusterGeneration: number;
/** Secret GETs (the Secret is not read before the Cluster is Available). */
let secretReads: number;

const clusterPath = "/apis/cluster.x-k8s.io/v1beta2/namespaces/tenant-a/clusters/alpha";
const condition = (type: string, status: string, reason: string, message = "", observedGeneration = 1) => ({
  type,
  status,
  reason,
  message,
  observedGeneration,
  lastTransitionTime: "2026-01-01T00:00:00Z",
});
/** A Cluster CAPI has reconciled and found Available (reasons from cluster_types.go). */
const availableStatus = {
  observedGeneration: 1,
  phase: "Provisioned",
  conditions: [
    condition("Available", "True", "Available"),
    condition("InfrastructureReady", "True", "Ready"),
    condition("ControlPlaneInitialized", "True", "Initialized"),
    condition("ControlPlaneAvailable", "True", "Available"),
    condition("WorkersAvailable", "True", "Available"),
    condition("RemoteConnectionProbe", "True", "ProbeSucceeded"),
    condition("TopologyReconciled", "True", "ReconcileSucceeded"),
  ],
};
/** A Cluster whose servers never come up: the KubeadmControlPlane has no Machine that is ready. */
const stuckStatus = {
  observedGeneration: 1,
  phase: "Provisioned",
  conditions: [
    condition("Available", "False", "NotAvailable", "* ControlPlaneAvailable: Control plane not yet initialized\n* WorkersAvailable: 0 available replicas, at least 2 required"),
    condition("InfrastructureReady", "True", "Ready"),
    condition("ControlPlaneInitialized", "False", "NotInitialized", "Control plane not yet initialized"),
    condition("ControlPlaneAvailable", "False", "NotAvailable", "Control plane not yet initialized"),
    condition("WorkersAvailable", "False", "NotAvailable", "0 available replicas, at least 2 required"),
    condition("TopologyReconciled", "True", "ReconcileSucceeded"),
  ],
};

describe("workload-kubeconfig", () => {
  beforeAll(async () => {
    ({ dir } = localServerCertificate("workload-kubeconfig"));
    const pki = await import("../management-cluster/management-pki.mjs");
    const { clientCa } = await pki.issueAuthorities();
    const admin = await pki.issueAdminCertificate(clientCa);
    server = https.createServer(
      { key: pem("server.key"), cert: pem("server.crt"), ca: clientCa.certPem, requestCert: true, rejectUnauthorized: false },
      (request, response) => {
        requests += 1;
        const json = (status: number, body: unknown) => response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
        const authenticated = (request.socket instanceof TLSSocket && request.socket.authorized) || request.headers.authorization === `Bearer ${token}`;
        if (!authenticated) {
          json(401, { kind: "Status", status: "Failure", reason: "Unauthorized", code: 401, message: "Unauthorized" });
        } else if (forbidden) {
          json(403, {
            kind: "Status",
            status: "Failure",
            reason: "Forbidden",
            code: 403,
            message: 'secrets "alpha-kubeconfig" is forbidden: User "capi-fleet-admin" cannot get resource "secrets" in the namespace "tenant-a"',
          });
        } else if (request.url === clusterPath) {
          clusterReads += 1;
          const status = clusterStatus(clusterReads);
          if (status === undefined) {
            json(404, { kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: 'clusters.cluster.x-k8s.io "alpha" not found' });
          } else {
            json(200, { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", metadata: { name: "alpha", namespace: "tenant-a", generation: clusterGeneration }, status });
          }
        } else if (request.url === "/api/v1/namespaces/tenant-a/secrets/alpha-kubeconfig" && (secretReads += 1) > missingFor) {
          json(200, { kind: "Secret", apiVersion: "v1", data: { value: Buffer.from(workloadKubeconfig).toString("base64") } });
        } else {
          json(404, { kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: 'secrets "alpha-kubeconfig" not found' });
        }
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    certificateKubeconfig = buildKubeconfig({
      name: "fleet-management",
      server: url,
      certificateAuthorityPem: pem("server-ca.crt"),
      clientCertificatePem: admin.certPem,
      clientKeyPem: admin.keyPem,
    });
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    requests = 0;
    missingFor = 0;
    forbidden = false;
    clusterStatus = () => availableStatus;
    clusterReads = 0;
    clusterGeneration = 1;
    secretReads = 0;
  });

  const env = (overrides: Record<string, string> = {}) => ({
    MANAGEMENT_KUBECONFIG: certificateKubeconfig,
    TENANT_NAMESPACE: "tenant-a",
    TENANT_CLUSTER: "alpha",
    WAIT_SECONDS: "10",
    POLL_MILLISECONDS: "50",
    ...overrides,
  });

  it("prints the kubeconfig on stdout once the Secret appears, logging the wait on stderr", async () => {
    missingFor = 3;
    const { code, stdout, stderr } = await runScript(env());
    expect(code).toBe(0);
    expect(stdout).toBe(workloadKubeconfig);
    expect(secretReads).toBe(4);
    expect(stderr.match(/waiting for Secret tenant-a\/alpha-kubeconfig: the Secret does not exist yet/g)).toHaveLength(1);
    expect(stderr).toContain("read the kubeconfig of cluster tenant-a/alpha");
    expect(stderr).not.toContain("client-key-data");
  });

  it("waits until the Cluster is Available before it reads the Secret", async () => {
    clusterStatus = (read) => (read < 3 ? stuckStatus : availableStatus);
    const { code, stdout, stderr } = await runScript(env());
    expect(code).toBe(0);
    expect(stdout).toBe(workloadKubeconfig);
    expect(clusterReads).toBe(3);
    expect(secretReads).toBe(1);
    expect(stderr).toContain("waiting for cluster tenant-a/alpha to become Available: Available: False, reason NotAvailable");
    expect(stderr).toContain("cluster tenant-a/alpha is Available");
  });

  it("gives up, bounded, naming every condition that is not True with its status, reason and message", async () => {
    clusterStatus = () => stuckStatus;
    const { code, stdout, stderr } = await runScript(env({ WAIT_SECONDS: "1" }));
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(secretReads).toBe(0);
    expect(stderr).toContain("gave up after 1 s waiting for cluster tenant-a/alpha to become Available; conditions not True:\n");
    const listed = stderr.split("\n").filter((line) => line.startsWith("  - "));
    expect(listed).toEqual([
      "  - Available: False, reason NotAvailable: * ControlPlaneAvailable: Control plane not yet initialized * WorkersAvailable: 0 available replicas, at least 2 required",
      "  - ControlPlaneInitialized: False, reason NotInitialized: Control plane not yet initialized",
      "  - ControlPlaneAvailable: False, reason NotAvailable: Control plane not yet initialized",
      "  - WorkersAvailable: False, reason NotAvailable: 0 available replicas, at least 2 required",
      "  - RemoteConnectionProbe: not reported yet",
    ]);
    expect(stderr).toContain("kubectl -n tenant-a describe cluster alpha");
  });

  it("does not take an Available condition CAPI computed for an older generation", async () => {
    clusterGeneration = 2;
    const { code, stderr } = await runScript(env({ WAIT_SECONDS: "1" }));
    expect(code).toBe(1);
    expect(secretReads).toBe(0);
    expect(stderr).toContain("  - Available: True, but for generation 1; CAPI has not yet observed generation 2\n");
  });

  it("names a Cluster that does not exist", async () => {
    clusterStatus = () => undefined;
    const { code, stderr } = await runScript(env({ WAIT_SECONDS: "1" }));
    expect(code).toBe(1);
    expect(stderr).toContain("conditions not True:\n  - the Cluster does not exist\n");
  });

  it("waits only for the Secret with WAIT_FOR_READY=false (the opt-out)", async () => {
    clusterStatus = () => stuckStatus;
    const { code, stdout } = await runScript(env({ WAIT_FOR_READY: "false" }));
    expect(code).toBe(0);
    expect(stdout).toBe(workloadKubeconfig);
    expect(clusterReads).toBe(0);
  });

  it("authenticates with a bearer token too", async () => {
    const tokenKubeconfig = stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "mgmt", cluster: { server: url, "certificate-authority-data": Buffer.from(pem("server-ca.crt")).toString("base64") } }],
      users: [{ name: "robot", user: { token } }],
      contexts: [{ name: "robot@mgmt", context: { cluster: "mgmt", user: "robot" } }],
      "current-context": "robot@mgmt",
    });
    const { code, stdout, stderr } = await runScript(env({ MANAGEMENT_KUBECONFIG: tokenKubeconfig }));
    expect(code).toBe(0);
    expect(stdout).toBe(workloadKubeconfig);
    expect(stderr).not.toContain(token);
  });

  it("gives up, bounded, naming the Secret, the cluster and what to check", async () => {
    missingFor = Infinity;
    const { code, stdout, stderr } = await runScript(env({ WAIT_SECONDS: "1" }));
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("gave up after 1 s waiting for Secret tenant-a/alpha-kubeconfig");
    expect(stderr).toContain("cluster tenant-a/alpha");
    expect(stderr).toContain("kubectl -n tenant-a describe cluster alpha");
    expect(stderr).toContain("ControlPlaneInitialized");
  });

  it("fails fast on 403 with the status and the reason", async () => {
    forbidden = true;
    const { code, stdout, stderr } = await runScript(env());
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(requests).toBe(1);
    expect(stderr).toContain('HTTP 403: secrets "alpha-kubeconfig" is forbidden');
    expect(stderr).toContain("cannot read Cluster tenant-a/alpha");
  });

  it("fails fast on 401 when the token is wrong", async () => {
    const wrong = certificateKubeconfig.replace(/ {6}client-certificate-data: .*\n {6}client-key-data: .*\n/, "      token: wrong-token\n");
    expect(wrong).not.toBe(certificateKubeconfig);
    const { code, stderr } = await runScript(env({ MANAGEMENT_KUBECONFIG: wrong }));
    expect(code).toBe(1);
    expect(requests).toBe(1);
    expect(stderr).toContain("HTTP 401: Unauthorized");
    expect(stderr).not.toContain("wrong-token");
  });

  it("keeps waiting, bounded, while the management API cannot be reached", async () => {
    const unreachable = certificateKubeconfig.replace(url, "https://127.0.0.1:1");
    const { code, stderr } = await runScript(env({ MANAGEMENT_KUBECONFIG: unreachable, WAIT_SECONDS: "1" }));
    expect(code).toBe(1);
    expect(stderr).toContain("the management API at https://127.0.0.1:1 cannot be reached (connect ECONNREFUSED 127.0.0.1:1)");
    expect(stderr).toContain("gave up after 1 s");
  });

  it.each([
    [{ TENANT_NAMESPACE: "", TENANT_CLUSTER: "" }, "missing environment variables: TENANT_NAMESPACE, TENANT_CLUSTER"],
    [{ MANAGEMENT_KUBECONFIG: "/home/me/.kube/config" }, "MANAGEMENT_KUBECONFIG is not a kubeconfig: it has no clusters list"],
    [{ WAIT_SECONDS: "soon" }, 'WAIT_SECONDS must be a positive number (got "soon")'],
    [{ WAIT_FOR_READY: "yes" }, 'WAIT_FOR_READY must be true or false (got "yes")'],
  ])("refuses to start with %j", async (overrides, message) => {
    const { code, stderr } = await runScript(env(overrides));
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(requests).toBe(0);
  });
});
