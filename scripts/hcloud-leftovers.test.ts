import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runNodeScript } from "../tests/support/script-harness";
import { repoRoot } from "../tests/support/stack-files";

const script = path.join(repoRoot, "scripts", "hcloud-leftovers.mjs");
const token = "t".repeat(64);

/** What the fake Hetzner project holds, by collection; `pageSize` forces pagination. */
let project: Record<string, Record<string, unknown>[]> = {};
const pageSize = 2;
let server: http.Server;
let endpoint: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://hetzner");
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.headers.authorization !== `Bearer ${token}`) {
      send(401, { error: { code: "unauthorized", message: "unable to authenticate" } });
      return;
    }
    const kind = url.pathname.replace(/^\/v1\//, "");
    const items = project[kind] ?? [];
    const page = Number(url.searchParams.get("page") ?? "1");
    const last = Math.max(1, Math.ceil(items.length / pageSize));
    send(200, { [kind]: items.slice((page - 1) * pageSize, page * pageSize), meta: { pagination: { page, next_page: page < last ? page + 1 : null } } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => {
  server.close();
});

beforeEach(() => {
  project = {};
});

describe("scripts/hcloud-leftovers.mjs", () => {
  it("passes an empty project (SSH keys are kept, not counted)", async () => {
    project = { ssh_keys: [{ id: 1, name: "ops" }] };
    const run = await runNodeScript(script, { HCLOUD_TOKEN: token, HCLOUD_ENDPOINT: endpoint });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("kept: ssh key ops (id 1)");
    expect(run.stderr).toContain("the project is empty");
  });

  it("lists every leftover across pages and fails", async () => {
    project = {
      servers: [1, 2, 3].map((id) => ({ id, name: `payments-md-0-${id}`, labels: { "caph-cluster-payments": "owned" } })),
      load_balancers: [{ id: 7, name: "a1b2", labels: { "hcloud-ccm/service-uid": "0f0e" } }],
      volumes: [{ id: 9, name: "pvc-1234" }],
    };
    const run = await runNodeScript(script, { HCLOUD_TOKEN: token, HCLOUD_ENDPOINT: endpoint });
    expect(run.code).toBe(1);
    for (const line of [
      "left over: server payments-md-0-3 (id 3, labels caph-cluster-payments=owned)",
      "left over: load balancer a1b2 (id 7, labels hcloud-ccm/service-uid=0f0e)",
      "left over: volume pvc-1234 (id 9)",
      "5 resource(s) left in the project",
    ]) {
      expect(run.stderr).toContain(line);
    }
  });

  it("says when the token is refused", async () => {
    const run = await runNodeScript(script, { HCLOUD_TOKEN: "wrong", HCLOUD_ENDPOINT: endpoint });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Hetzner refused the token (401)");
    expect(run.stderr).not.toContain("wrong");
  });

  it("fails fast when Hetzner cannot be reached", async () => {
    const run = await runNodeScript(script, { HCLOUD_TOKEN: token, HCLOUD_ENDPOINT: "http://127.0.0.1:1/v1" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("could not list the project at http://127.0.0.1:1/v1");
  });

  it("needs the token and documents itself", async () => {
    expect((await runNodeScript(script, {})).code).toBe(2);
    const help = await runNodeScript(script, {}, 20_000, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: HCLOUD_TOKEN=<tenant project token> node scripts/hcloud-leftovers.mjs");
  });
});
