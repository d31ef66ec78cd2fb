import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGoProgram } from "../go-programs";
import { runNodeScript } from "../script-harness";
import { repoRoot } from "../stack-files";
import { matchesLabelSelector, startHcloudApiStandIn, type HcloudApiStandIn, type SchemaMessage } from "./hcloud-api";

// The stand-in Hetzner API (tests/support/fakes/hcloud-api.ts) answers as hcloud-go reads it: every request
// the hcloud provider's Firewall makes and every answer is decoded, refusing unknown fields, by
// hcloud-go v2.40.0's schema types (tests/go/hcloud-schema, the version terraform-provider-hcloud
// v1.63.0 builds with); and the repository's scripts that call Hetzner work against it.

const token = "project-token";
let api: HcloudApiStandIn;

/** The problems hcloud-go's schema types find in these messages. */
function decode(messages: readonly SchemaMessage[]): Promise<string[]> {
  const { binary } = buildGoProgram("hcloud-schema");
  return new Promise((resolve, reject) => {
    const child = execFile(binary, [], (error, stdout) => {
      if (error) reject(new Error(`tests/go/hcloud-schema: ${error.message}`));
      else resolve(JSON.parse(stdout) as string[]);
    });
    child.stdin?.end(JSON.stringify(messages));
  });
}

async function call(method: string, apiPath: string, body?: unknown, bearer = token) {
  const response = await fetch(`${api.endpoint}${apiPath}`, { method, headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

beforeAll(async () => {
  api = await startHcloudApiStandIn();
  api.addProject(token);
});
afterAll(async () => {
  await api.stop();
});

describe("the stand-in Hetzner API", () => {
  it("serves the Firewall's whole life as terraform-provider-hcloud calls it, and every message decodes into hcloud-go's schema types", async () => {
    const created = await call("POST", "/firewalls", {
      name: "alpha-nodes",
      labels: { "capi-fleet/tenant": "alpha" },
      rules: [{ direction: "in", source_ips: ["10.0.0.0/16"], protocol: "tcp", port: "1-65535" }],
      apply_to: [{ type: "label_selector", label_selector: { selector: "caph-cluster-alpha=owned" } }],
    });
    expect(created.status).toBe(201);
    const id = (created.json.firewall as { id: number }).id;
    const actionIds = (created.json.actions as { id: number }[]).map((action) => action.id);
    expect(actionIds).toHaveLength(1);
    expect((await call("GET", `/actions?id=${actionIds[0]!}`)).json.actions).toEqual([expect.objectContaining({ id: actionIds[0], status: "success" })]);
    expect((await call("GET", `/actions/${actionIds[0]!}`)).status).toBe(200);
    expect((await call("GET", `/firewalls/${id}`)).json.firewall).toEqual(expect.objectContaining({ name: "alpha-nodes", rules: [expect.objectContaining({ port: "1-65535", destination_ips: [], description: null })] }));
    expect((await call("PUT", `/firewalls/${id}`, { labels: { "capi-fleet/tenant": "alpha", more: "x" } })).status).toBe(200);
    expect((await call("POST", `/firewalls/${id}/actions/set_rules`, { rules: [{ direction: "in", source_ips: ["0.0.0.0/0"], protocol: "icmp" }] })).status).toBe(201);
    // Applied: the delete is refused until the provider removes the firewall from its resources, as Hetzner does.
    expect((await call("DELETE", `/firewalls/${id}`)).status).toBe(422);
    const applied = (await call("GET", `/firewalls/${id}`)).json.firewall as { applied_to: unknown[] };
    expect((await call("POST", `/firewalls/${id}/actions/remove_from_resources`, { remove_from: applied.applied_to })).status).toBe(201);
    expect((await call("POST", `/firewalls/${id}/actions/apply_to_resources`, { apply_to: [{ type: "server", server: { id: 7 } }] })).status).toBe(201);
    expect((await call("POST", `/firewalls/${id}/actions/remove_from_resources`, { remove_from: [{ type: "server", server: { id: 7 } }] })).status).toBe(201);
    expect((await call("DELETE", `/firewalls/${id}`)).status).toBe(204);
    expect((await call("GET", `/firewalls/${id}`)).status).toBe(404);
    expect((await call("GET", "/firewalls", undefined, "another-token")).status).toBe(401);
    expect(await decode(api.messages)).toEqual([]);
  });

  it("keeps projects apart, lists load balancers by the CCM's label selector, and the leftovers script reads it", async () => {
    const other = "other-token";
    api.addProject(other);
    const lb = await call("POST", "/load_balancers", { name: "a1", load_balancer_type: "lb11", location: "fsn1", labels: { "hcloud-ccm/service-uid": "u-1" } }, other);
    expect(lb.status).toBe(201);
    expect(((await call("GET", "/load_balancers?label_selector=hcloud-ccm%2Fservice-uid+in+(u-1,u-2)", undefined, other)).json.load_balancers as unknown[]).length).toBe(1);
    expect(((await call("GET", "/load_balancers?label_selector=hcloud-ccm%2Fservice-uid+in+(u-2)", undefined, other)).json.load_balancers as unknown[]).length).toBe(0);
    expect(((await call("GET", "/load_balancers")).json.load_balancers as unknown[]).length).toBe(0);
    const leftovers = path.join(repoRoot, "scripts", "hcloud-leftovers.mjs");
    const withOne = await runNodeScript(leftovers, { HCLOUD_TOKEN: other, HCLOUD_ENDPOINT: api.endpoint });
    expect(withOne.code, withOne.output).toBe(1);
    expect(withOne.output).toMatch(/left over: load balancer a1 \(id \d+, labels hcloud-ccm\/service-uid=u-1\)/);
    expect((await runNodeScript(leftovers, { HCLOUD_TOKEN: token, HCLOUD_ENDPOINT: api.endpoint })).code).toBe(0);
    const id = (lb.json.load_balancer as { id: number }).id;
    expect((await call("DELETE", `/load_balancers/${id}`, undefined, other)).status).toBe(204);
    expect((await runNodeScript(leftovers, { HCLOUD_TOKEN: other, HCLOUD_ENDPOINT: api.endpoint })).code).toBe(0);
    expect(await decode(api.messages)).toEqual([]);
  });

  it("negative control: a field hcloud-go does not have, or a type it cannot read, is found", async () => {
    const problems = await decode([
      { schema: "FirewallGetResponse", body: { firewall: { id: 1, name: "x", applied: [] } } },
      { schema: "LoadBalancerCreateResponse", body: { load_balancer: { id: "1" } } },
    ]);
    expect(problems).toEqual([expect.stringContaining('unknown field "applied"'), expect.stringContaining("cannot unmarshal string")]);
  });

  it.each([
    ["hcloud-ccm/service-uid in (a,b)", { "hcloud-ccm/service-uid": "b" }, true],
    ["hcloud-ccm/service-uid in (a,b)", { "hcloud-ccm/service-uid": "c" }, false],
    ["x notin (a)", { x: "b" }, true],
    ["env=prod,tier", { env: "prod", tier: "1" }, true],
    ["env=prod,tier", { env: "prod" }, false],
    ["env!=prod", { env: "dev" }, true],
    ["!owned", { owned: "" }, false],
    ["caph-cluster-alpha==owned", { "caph-cluster-alpha": "owned" }, true],
  ])("label selector %s on %j: %s", (selector, labels, expected) => {
    expect(matchesLabelSelector(labels, selector)).toBe(expected);
  });
});
