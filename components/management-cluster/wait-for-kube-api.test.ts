import { readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../tests/support/stack-files";
import { localServerCertificate, runNodeScript, type ScriptRun } from "../../tests/support/script-harness";

// Exercises components/management-cluster/wait-for-kube-api.mjs against a real TLS server that demands a client
// certificate, like k3s does. The client side uses the admin credentials our own
// components/management-cluster/management-pki.mjs issues; the server certificate comes from openssl.

const script = path.join(repoRoot, "scripts", "wait-for-kube-api.mjs");
let dir: string;
const pem = (name: string) => readFileSync(path.join(dir, name), "utf8");

const runScript = (env: Record<string, string>): Promise<ScriptRun> => runNodeScript(script, env);

describe("wait-for-kube-api", () => {
  let server: https.Server;
  let url: string;
  let requests = 0;

  beforeAll(async () => {
    ({ dir } = localServerCertificate("wait-for-kube-api"));
    const pki = await import("./management-pki.mjs");
    const { clientCa } = await pki.issueAuthorities();
    const admin = await pki.issueAdminCertificate(clientCa);
    const intruder = await pki.issueAdminCertificate((await pki.issueAuthorities()).clientCa);
    writeFileSync(path.join(dir, "client-ca.crt"), clientCa.certPem);
    for (const [name, credentials] of [["admin", admin], ["intruder", intruder]] as const) {
      writeFileSync(path.join(dir, `${name}.crt`), credentials.certPem);
      writeFileSync(path.join(dir, `${name}.key`), credentials.keyPem);
    }
    server = https.createServer(
      { key: pem("server.key"), cert: pem("server.crt"), ca: pem("client-ca.crt"), requestCert: true, rejectUnauthorized: true },
      (request, response) => {
        requests += 1;
        // Not ready for the first two probes, like an apiserver still starting.
        response.writeHead(request.url === "/readyz" && requests > 2 ? 200 : 503).end();
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const credentials = (client: string) => ({
    KUBE_API_SERVER: url,
    KUBE_CA_PEM: pem("server-ca.crt"),
    KUBE_CLIENT_CERT_PEM: pem(`${client}.crt`),
    KUBE_CLIENT_KEY_PEM: pem(`${client}.key`),
    KUBE_API_POLL_MILLISECONDS: "50",
  });

  it("waits through 503s until /readyz answers 200 to the admin certificate", async () => {
    const { code, output } = await runScript({ ...credentials("admin"), KUBE_API_WAIT_SECONDS: "20" });
    expect(output).toContain("not ready yet (HTTP 503)");
    expect(output).toContain("is ready");
    expect(code).toBe(0);
  });

  it("gives up, bounded, when the server rejects the client certificate", async () => {
    const { code, output } = await runScript({ ...credentials("intruder"), KUBE_API_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(output).toContain(`gave up on ${url}`);
  });

  it("gives up when nothing listens", async () => {
    const { code, output } = await runScript({ ...credentials("admin"), KUBE_API_SERVER: "https://127.0.0.1:1", KUBE_API_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(output).toMatch(/ECONNREFUSED/);
  });

  it("refuses to start without credentials", async () => {
    const { code, output } = await runScript({ KUBE_API_SERVER: url });
    expect(code).toBe(2);
    expect(output).toContain("missing environment variables: KUBE_CA_PEM, KUBE_CLIENT_CERT_PEM, KUBE_CLIENT_KEY_PEM");
  });
});
