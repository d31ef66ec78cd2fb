import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../tests/support/kube-apiserver";

/**
 * The scripts' Kubernetes client against a real kube-apiserver: a DELETE's DeleteOptions travel
 * in its body, and Node frames no DELETE body without a Content-Length. Without it the API
 * server never saw the UID precondition components/tenant-cluster/drain-load-balancers.mjs sends, so a Service
 * replaced under the same name would have been deleted too.
 */

let server: KubeApiServer | undefined;

beforeAll(async () => {
  server = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "kube-client-delete");
}, 45 * 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("kubeRequest DELETE with DeleteOptions (the drain's UID precondition)", () => {
  const path = "/api/v1/namespaces/default/configmaps/drain-precondition";

  it("is refused by the API server when the UID does not match, and deletes when it does", async () => {
    if (!server) throw new Error("no API server");
    const { kubeRequest } = await import("./kube-client.mjs");
    const created = await server.request("POST", "/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "drain-precondition" } });
    expect(created.status).toBe(201);
    const uid = (created.json.metadata as { uid: string }).uid;
    const options = (preconditionUid: string) => ({ timeoutMs: 30_000, body: { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: preconditionUid } } });

    const stale = await kubeRequest(server.target, "DELETE", path, options("00000000-0000-4000-8000-000000000000"));
    expect(stale.status).toBe(409);
    expect(stale.reason).toContain("the UID in the precondition (00000000-0000-4000-8000-000000000000) does not match the UID in record");
    expect((await server.request("GET", path)).status).toBe(200);

    const current = await kubeRequest(server.target, "DELETE", path, options(uid));
    expect(current.status).toBe(200);
    expect((await server.request("GET", path)).status).toBe(404);
  });
});
