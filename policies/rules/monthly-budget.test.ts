import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { autoscalerAnnotations } from "../../infra/model/platform/cluster-autoscaler";
import { baselineFleet, shardFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { priceTableVariable } from "../lib/prices";
import { monthlyBudget as rule } from "./monthly-budget";

// Prices chosen for hand arithmetic (not Hetzner's): a server type costs the same in every location.
const entry = (price: string) => ({ source: "test", date: "2026-12-06", monthlyNet: { fsn1: price, nbg1: price, hel1: price } });
const testPrices = {
  currency: "EUR",
  serverTypes: { cx23: entry("3.00"), cx33: entry("5.00"), cpx31: entry("10.00"), cax31: entry("12.00") },
  loadBalancerTypes: { lb11: entry("5.00") },
  primaryIpv4: entry("0.50"),
};
// The baseline (prod's tenants and one management server), by hand, per month:
//   payments:  3 cx33 + 3 IPv4 (16.50), 2 pools of 3 cpx31 + 3 IPv4 (63.00), lb11 (5.00)  = 84.50
//   analytics: 3 cx33 + 3 IPv4 (16.50), cax31 pool of 2–6 + IPv4 (25.00–75.00), lb11 (5) = 46.50–96.50
//   edge:      1 cx23 + IPv4 (3.50), 2 cx23 + IPv4 (7.00), lb11 (5.00)                  = 15.50
//   management: 1 cx33 + IPv4 (5.50), lb11 (5.00)                                        = 10.50
//   stack: 157.00–207.00
const scratch = mkdtempSync(path.join(tmpdir(), "monthly-budget-"));
const pricesFile = path.join(scratch, "prices.json");
const emptyFile = path.join(scratch, "empty.json");
const before = process.env[priceTableVariable];

beforeAll(() => {
  writeFileSync(pricesFile, JSON.stringify(testPrices));
  writeFileSync(emptyFile, JSON.stringify({ currency: "EUR", serverTypes: {}, loadBalancerTypes: {}, primaryIpv4: null }));
  process.env[priceTableVariable] = pricesFile;
});
afterAll(() => {
  if (before === undefined) Reflect.deleteProperty(process.env, priceTableVariable);
  else process.env[priceTableVariable] = before;
  rmSync(scratch, { recursive: true, force: true });
});

const baseline = baselineFleet();
const budget = (config: Record<string, unknown>) => ({ "monthly-budget": config });

describe("monthly-budget", () => {
  it("passes the baseline without budgets, and with budgets it stays within (an autoscaled pool at its maximum, equal is within)", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
    expect(await evaluate([rule], baseline, budget({ stackMonthly: 207, tenants: { payments: 84.5, analytics: 96.5, edge: 15.5 } }))).toEqual([]);
  });

  it("advises when the stack goes over its budget", async () => {
    const violations = await evaluate([rule], baseline, budget({ stackMonthly: 206.99 }));
    expect(violations).toEqual([{ policy: "monthly-budget", level: "advisory", urn: "", message: "the stack: 157.00–207.00 a month is over its budget of 206.99." }]);
  });

  it("advises on each tenant over tenantMonthly, at its pool's maximum; a tenant's own budget overrides it", async () => {
    const violations = await evaluate([rule], baseline, budget({ tenantMonthly: 90 }));
    expect(violations.map((violation) => [violation.urn.split("::").pop(), violation.message])).toEqual([
      ["cluster-analytics", 'tenant "analytics" (Cluster tenant-analytics/analytics): 46.50–96.50 a month is over its budget of 90.00.'],
    ]);
    expect(await evaluate([rule], baseline, budget({ tenantMonthly: 90, tenants: { analytics: 100 } }))).toEqual([]);
  });

  it("sees a raised maxSize: the same budget is now exceeded", async () => {
    const fleet = cloneFixtures(baseline);
    const pool = (at(fixture(fleet, "cluster-analytics").props, "spec", "topology", "workers").machineDeployments as { metadata: { annotations: Record<string, string> } }[])[0]!;
    pool.metadata.annotations[autoscalerAnnotations.maxSize] = "7";
    const violations = await evaluate([rule], fleet, budget({ tenants: { analytics: 96.5 } }));
    expect(violations.map((violation) => violation.message)).toEqual(['tenant "analytics" (Cluster tenant-analytics/analytics): 46.50–109.00 a month is over its budget of 96.50.']);
  });

  it("is mandatory when the stack's policy config says so", async () => {
    const violations = await evaluate([rule], baseline, budget({ enforcementLevel: "mandatory", stackMonthly: 100 }));
    expect(violations.map((violation) => violation.level)).toEqual(["mandatory"]);
  });

  it("cannot judge a type the table has no price for, and says so instead of under-counting", async () => {
    const fleet = cloneFixtures(baseline);
    const topology = at(fixture(fleet, "cluster-edge").props, "spec", "topology");
    (topology.variables as { name: string; value: unknown }[]).find((variable) => variable.name === "hcloudControlPlaneMachineType")!.value = "cx53";
    const violations = await evaluate([rule], fleet, budget({ stackMonthly: 1000 }));
    expect(violations.map((violation) => violation.message)).toEqual([
      'tenant "edge" (Cluster tenant-edge/edge): no price for cx53 in fsn1 (server); the budget cannot be judged. Refresh the price table (npm run prices -- --refresh).',
    ]);
  });

  it("with the price table never refreshed: one violation saying the budgets cannot be judged (none without budgets)", async () => {
    process.env[priceTableVariable] = emptyFile;
    try {
      expect((await evaluate([rule], baseline, budget({ stackMonthly: 1000 }))).map((violation) => violation.message)).toEqual([
        "the budgets cannot be judged: the price table holds no prices yet; refresh it with HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).",
      ]);
      expect(await evaluate([rule], baseline)).toEqual([]);
    } finally {
      process.env[priceTableVariable] = pricesFile;
    }
  });

  it("counts a management server's IPv4 only when it has one, and cannot judge a management type without a price", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "server-1").props.publicNets = [{ ipv4Enabled: false, ipv6Enabled: true }];
    expect(await evaluate([rule], fleet, budget({ stackMonthly: 206.5 }))).toEqual([]);
    expect((await evaluate([rule], fleet, budget({ stackMonthly: 206.49 }))).map((violation) => violation.message)).toEqual(["the stack: 156.50–206.50 a month is over its budget of 206.49."]);
    fixture(fleet, "api-lb").props.loadBalancerType = "lb31";
    expect((await evaluate([rule], fleet, budget({ stackMonthly: 1000 }))).map((violation) => violation.message)).toEqual([
      "the management cluster: no price for lb31 in nbg1 (load balancer); the stack's budget cannot be judged. Refresh the price table (npm run prices -- --refresh).",
    ]);
  });

  it("leaves out a management server or load balancer it cannot read (no type or location), and lists several unpriced things", async () => {
    const fleet = cloneFixtures(baseline);
    delete fixture(fleet, "server-1").props.serverType;
    delete fixture(fleet, "api-lb").props.location;
    // 207.00 without the server (5.50) and the load balancer (5.00).
    expect(await evaluate([rule], fleet, budget({ stackMonthly: 196.5 }))).toEqual([]);
    const other = cloneFixtures(baseline);
    delete fixture(other, "server-1").props.location;
    delete fixture(other, "api-lb").props.loadBalancerType;
    expect(await evaluate([rule], other, budget({ stackMonthly: 196.5 }))).toEqual([]);
    const edge = cloneFixtures(baseline);
    const topology = at(fixture(edge, "cluster-edge").props, "spec", "topology");
    (topology.variables as { name: string; value: unknown }[]).find((variable) => variable.name === "hcloudControlPlaneMachineType")!.value = "cx53";
    (topology.variables as { name: string; value: unknown }[]).find((variable) => variable.name === "hcloudAPILoadBalancerType")!.value = "lb21";
    fixture(edge, "api-lb").props.loadBalancerType = "lb31";
    fixture(edge, "server-1").props.serverType = "cx43";
    expect((await evaluate([rule], edge, budget({ stackMonthly: 1000 }))).map((violation) => violation.message)).toEqual([
      'tenant "edge" (Cluster tenant-edge/edge): no price for cx53 in fsn1 (server), lb21 in fsn1 (load balancer); the budget cannot be judged. Refresh the price table (npm run prices -- --refresh).',
      "the management cluster: no price for cx43 in nbg1 (server), lb31 in nbg1 (load balancer); the stack's budget cannot be judged. Refresh the price table (npm run prices -- --refresh).",
    ]);
  });

  it("says so when CAPI_FLEET_PRICES names a table it cannot read", async () => {
    process.env[priceTableVariable] = path.join(scratch, "missing.json");
    try {
      expect((await evaluate([rule], baseline, budget({ tenantMonthly: 10 }))).map((violation) => violation.message)).toEqual([
        expect.stringMatching(/^the budgets cannot be judged: CAPI_FLEET_PRICES names an unreadable price table: ENOENT/),
      ]);
    } finally {
      process.env[priceTableVariable] = pricesFile;
    }
  });

  it("in a shard: judges only the shard's own tenants against its own budget", async () => {
    const shard = shardFleet();
    // 84.50 + 96.50 + 15.50: the tenants only, no management servers.
    expect(await evaluate([rule], shard, budget({ stackMonthly: 196.5 }))).toEqual([]);
    expect((await evaluate([rule], shard, budget({ stackMonthly: 196 }))).map((violation) => violation.message)).toEqual(["the stack: 146.50–196.50 a month is over its budget of 196.00."]);
  });
});
