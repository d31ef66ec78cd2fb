import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { TLSSocket } from "node:tls";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildKubeconfig } from "../infra/model/kubeconfig";
import { repoRoot } from "./stack-files";
import { localServerCertificate, runNodeScript, type ScriptRun } from "./script-harness";

// Runs scripts/workload-kubeconfig.mjs as a process against a real TLS management API
// that serves the CAPI `<cluster>-kubeconfig` Secret, at first not at all (as before the
// control plane endpoint exists). It accepts our own admin client certificate
// (scripts/management-pki.mjs) or a bearer token, like an apiserver does.

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

describe("workload-kubeconfig", () => {
  beforeAll(async () => {
    ({ dir } = localServerCertificate("workload-kubeconfig"));
    const pki = await import("../scripts/management-pki.mjs");
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
        } else if (request.url === "/api/v1/namespaces/tenant-a/secrets/alpha-kubeconfig" && requests > missingFor) {
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
    expect(requests).toBe(4);
    expect(stderr.match(/waiting for Secret tenant-a\/alpha-kubeconfig: the Secret does not exist yet/g)).toHaveLength(1);
    expect(stderr).toContain("read the kubeconfig of cluster tenant-a/alpha");
    expect(stderr).not.toContain("client-key-data");
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
  ])("refuses to start with %j", async (overrides, message) => {
    const { code, stderr } = await runScript(env(overrides));
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(requests).toBe(0);
  });
});
