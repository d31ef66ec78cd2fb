import { describe, expect, it } from "vitest";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { readStackConfig } from "../../../tests/support/stack-files";
import { fleetCostReport, formatStackCost, moverCount, partDelta, stackCostChange } from "./cost-report";
import { emptyPriceTable, testPriceTable } from "./price-fixtures";
import type { CostedStack } from "./stack-cost";

/** dev as committed ("now"), and with a second tenant whose pool autoscales 1–4 ("after"). */
function devNowAndAfter(): { now: CostedStack; after: CostedStack } {
  const { values, secretKeys } = readStackConfig("dev");
  const now = parseFleetConfig({ stack: "dev", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
  const [first] = now.tenants;
  if (!first) throw new Error("dev has no tenant");
  const second = {
    ...first,
    name: "dev-b",
    namespace: "dev-b",
    controlPlane: { ...first.controlPlane, machineType: "cx23" },
    workers: [{ ...first.workers[0]!, replicas: undefined, autoscaling: { minSize: 1, maxSize: 4 }, machineType: "cx23" }],
  };
  return { now, after: { ...now, tenants: [...now.tenants, second] } };
}

// By hand at the test prices (cx23 3.00, cx33 5.00, lb11 5.00, IPv4 0.50):
//   dev-a 14.00 (1 cx33, 1 cx23, 2 IPv4, lb11); dev-b 12.00–22.50 (1 cx23, 1–4 cx23, IPv4s, lb11);
//   management 8.50 (1 cx23, IPv4, lb11). In ten-thousandths below.
describe("a stack's cost before and after", () => {
  it("by tenant, for the management cluster and in total; a new tenant has no cost now", () => {
    const { now, after } = devNowAndAfter();
    const change = stackCostChange("dev", now, after, testPriceTable());
    expect(change).toEqual({
      stack: "dev",
      tenants: { "dev-a": { now: { min: 140_000, max: 140_000 }, after: { min: 140_000, max: 140_000 } }, "dev-b": { now: undefined, after: { min: 120_000, max: 225_000 } } },
      management: { now: { min: 85_000, max: 85_000 }, after: { min: 85_000, max: 85_000 } },
      total: { now: { min: 225_000, max: 225_000 }, after: { min: 345_000, max: 450_000 } },
      nowUnknown: undefined,
      unpriced: [],
    });
    expect(partDelta(change.tenants["dev-b"]!)).toEqual({ min: 120_000, max: 225_000 });
    expect(partDelta({ now: { min: 10, max: 20 }, after: undefined })).toEqual({ min: -10, max: -20 });
  });

  it("with `now` unknown: says why, and has no now", () => {
    const { after } = devNowAndAfter();
    const change = stackCostChange("dev", "the stack file is new since main", after, testPriceTable());
    expect(change.nowUnknown).toBe("the stack file is new since main");
    expect(change.total.now).toBeUndefined();
    expect(change.management.now).toBeUndefined();
    expect(Object.keys(change.tenants)).toEqual(["dev-a", "dev-b"]);
    expect(change.tenants["dev-a"]).toEqual({ now: undefined, after: { min: 140_000, max: 140_000 } });
  });

  it("prints one row per tenant, the management cluster and the total, aligned, with what is not counted", () => {
    const { now, after } = devNowAndAfter();
    const text = formatStackCost(stackCostChange("dev", now, after, testPriceTable()), testPriceTable(), { now: "A", after: "B" });
    expect(text.split("\n")).toEqual([
      "Monthly cost of stack dev (EUR, net of VAT; an autoscaled pool as min–max):",
      "  now: A; after: B",
      "                           now         after          change",
      "  dev-a                  14.00         14.00           ±0.00",
      "  dev-b                      —   12.00–22.50   +12.00–+22.50",
      "  (management cluster)    8.50          8.50           ±0.00",
      "  stack total            22.50   34.50–45.00   +12.00–+22.50",
      "  Not known in advance, not included: load balancers of LoadBalancer Services in the workload clusters (one per Service, created by the hcloud CCM); volumes of the hcloud CSI driver (one per PersistentVolume).",
    ]);
  });

  it("prints ? where now is unknown, lists what has no price, and says when the table holds none", () => {
    const { after } = devNowAndAfter();
    const table = { ...testPriceTable(), primaryIpv4: null };
    const text = formatStackCost(stackCostChange("dev", "why", after, table), table, { now: "A", after: "B" });
    expect(text).toContain("  now: A (why); after: B");
    expect(text).toMatch(/\n {2}stack total +\? +32\.00–41\.00 +\?\n/);
    expect(text).toContain("  Not priced (the totals are lower bounds): primary IPv4 in fsn1 (address)\n");
    const twoUnpriced = { ...table, loadBalancerTypes: {} };
    expect(formatStackCost(stackCostChange("dev", "why", after, twoUnpriced), twoUnpriced, { now: "A", after: "B" })).toContain(
      "  Not priced (the totals are lower bounds): lb11 in fsn1 (load balancer), primary IPv4 in fsn1 (address)\n",
    );
    expect(formatStackCost(stackCostChange("dev", "why", after, emptyPriceTable), emptyPriceTable, { now: "A", after: "B" })).toBe(
      "Monthly cost of stack dev: the price table holds no prices yet; refresh it: HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).",
    );
  });
});

describe("a shard, and a stack whose management cluster goes", () => {
  it("a shard (no management cluster) has no management row; a management cluster that goes shows — after", () => {
    const { now, after } = devNowAndAfter();
    const shard = formatStackCost(stackCostChange("shard", { tenants: now.tenants }, { tenants: after.tenants }, testPriceTable()), testPriceTable(), { now: "A", after: "B" });
    expect(shard).not.toContain("management cluster");
    expect(shard).toMatch(/\n {2}stack total +14\.00 +26\.00–36\.50 +\+12\.00–\+22\.50\n/);
    const gone = formatStackCost(stackCostChange("dev", now, { tenants: now.tenants }, testPriceTable()), testPriceTable(), { now: "A", after: "B" });
    expect(gone).toMatch(/\n {2}\(management cluster\) +8\.50 +— +-8\.50\n/);
    const added = formatStackCost(stackCostChange("dev", { tenants: now.tenants }, now, testPriceTable()), testPriceTable(), { now: "A", after: "B" });
    expect(added).toMatch(/\n {2}\(management cluster\) +— +8\.50 +\+8\.50\n/);
  });

  it("lists unpriced lines once each, sorted, from both sides", () => {
    const { now, after } = devNowAndAfter();
    const table = { ...testPriceTable(), primaryIpv4: null, loadBalancerTypes: {} };
    expect(stackCostChange("dev", now, after, table).unpriced).toEqual(["lb11 in fsn1 (load balancer)", "primary IPv4 in fsn1 (address)"]);
  });
});

describe("the fleet's cost report (the PR comment's)", () => {
  it("sums the stacks known on both sides, lists the largest movers first and the stacks that cannot be priced", () => {
    const { now, after } = devNowAndAfter();
    const table = testPriceTable();
    const cheaper = { ...now, tenants: now.tenants.map((tenant) => ({ ...tenant, workers: tenant.workers.map((pool) => ({ ...pool, replicas: 0 })) })) };
    const report = fleetCostReport(
      [stackCostChange("dev", now, after, table), stackCostChange("small", now, cheaper, table), stackCostChange("new", "new", after, table)],
      [{ stack: "broken", problems: [{ path: "tenants[0].controlPlane.machineType", message: "no price" }] }],
      table,
    );
    expect(report).toEqual({
      currency: "EUR",
      refreshed: true,
      fleet: { now: "45.00", after: "53.50–64.00", change: "+8.50–+19.00" },
      movers: [
        { tenant: "dev-b", stack: "dev", now: "—", after: "12.00–22.50", change: "+12.00–+22.50" },
        { tenant: "dev-a", stack: "small", now: "14.00", after: "10.50", change: "-3.50" },
      ],
      stacks: [
        { stack: "dev", now: "22.50", after: "34.50–45.00", change: "+12.00–+22.50", nowUnknown: undefined, unpriced: [] },
        { stack: "small", now: "22.50", after: "19.00", change: "-3.50", nowUnknown: undefined, unpriced: [] },
        { stack: "new", now: "?", after: "34.50–45.00", change: "?", nowUnknown: "new", unpriced: [] },
      ],
      unpricedStacks: [{ stack: "broken", problems: [{ path: "tenants[0].controlPlane.machineType", message: "no price" }] }],
      notKnownInAdvance: [
        "load balancers of LoadBalancer Services in the workload clusters (one per Service, created by the hcloud CCM)",
        "volumes of the hcloud CSI driver (one per PersistentVolume)",
      ],
    });
  });

  it("ranks movers by their largest change in size (a drop counts as much as a rise), and leaves out a tenant whose range does not move", () => {
    const part = (now: [number, number], after: [number, number]) => ({ now: { min: now[0], max: now[1] }, after: { min: after[0], max: after[1] } });
    const change = (tenants: Record<string, ReturnType<typeof part>>) => ({ stack: "s", tenants, management: { now: undefined, after: undefined }, total: part([0, 0], [0, 0]), nowUnknown: undefined, unpriced: [] });
    const report = fleetCostReport(
      [change({ rise: part([10, 10], [30, 30]), drop: part([50, 50], [10, 10]), wider: part([10, 10], [10, 40]), same: part([10, 20], [10, 20]) })],
      [],
      testPriceTable(),
    );
    expect(report.movers.map((mover) => mover.tenant)).toEqual(["drop", "wider", "rise"]);
  });

  it(`lists at most ${moverCount} movers, ties by name`, () => {
    const { now } = devNowAndAfter();
    const table = testPriceTable();
    const [first] = now.tenants;
    const many = Array.from({ length: moverCount + 2 }, (_, index) => ({ ...first!, name: `t-${String(index)}`, namespace: `t-${String(index)}` }));
    const report = fleetCostReport([stackCostChange("s", { ...now, tenants: [] }, { ...now, tenants: many }, table)], [], table);
    expect(report.movers.map((mover) => mover.tenant)).toEqual(["t-0", "t-1", "t-2", "t-3", "t-4"]);
    expect(fleetCostReport([], [], emptyPriceTable).refreshed).toBe(false);
  });
});
