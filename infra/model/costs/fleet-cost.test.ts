import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prodTenants } from "../../../policies/testing/baseline";
import { tenantClusterManifest } from "../tenant/tenant-cluster";
import { clusterCostLines, costOf, formatChange, formatRange, managementCostLines, type CostLine } from "./fleet-cost";
import type { PriceTable } from "./price-table";

const tenant = (name: string) => {
  const found = prodTenants().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no prod tenant ${name}`);
  return found;
};

describe("what a tenant's Cluster makes Hetzner create", () => {
  it("payments (3 control-plane servers over fsn1 and nbg1, two fixed pools): the servers spread, an IPv4 each, the API load balancer in the first region", () => {
    const lines = clusterCostLines(tenantClusterManifest(tenant("payments")));
    expect(lines.map((line) => `${line.what} ${line.kind} ${line.type} ${line.location} ${line.count.min}-${line.count.max}`)).toEqual([
      "control plane server cx33 fsn1 2-2",
      "control plane: IPv4 primaryIpv4 ipv4 fsn1 2-2",
      "control plane server cx33 nbg1 1-1",
      "control plane: IPv4 primaryIpv4 ipv4 nbg1 1-1",
      "pool md-fsn1 server cpx31 fsn1 3-3",
      "pool md-fsn1: IPv4 primaryIpv4 ipv4 fsn1 3-3",
      "pool md-nbg1 server cpx31 nbg1 3-3",
      "pool md-nbg1: IPv4 primaryIpv4 ipv4 nbg1 3-3",
      "API load balancer loadBalancer lb11 fsn1 1-1",
    ]);
  });

  it("analytics: an autoscaled pool is its autoscaler's minSize to maxSize (the Cluster has no replicas for it)", () => {
    const pool = clusterCostLines(tenantClusterManifest(tenant("analytics"))).filter((line) => line.what.startsWith("pool"));
    expect(pool.map((line) => [line.kind, line.type, line.count])).toEqual([
      ["server", "cax31", { min: 2, max: 6 }],
      ["primaryIpv4", "ipv4", { min: 2, max: 6 }],
    ]);
  });

  it("the management cluster: its servers, their IPv4 addresses and its API load balancer", () => {
    expect(managementCostLines({ servers: 3, serverType: "cx33", location: "nbg1", apiLoadBalancerType: "lb11" }).map((line) => `${line.kind} ${line.type} ${line.count.max}`)).toEqual([
      "server cx33 3",
      "primaryIpv4 ipv4 3",
      "loadBalancer lb11 1",
    ]);
  });
});

describe("cost arithmetic (properties)", () => {
  const table: PriceTable = {
    currency: "EUR",
    serverTypes: { a: { source: "t", date: "2026-12-06", monthlyNet: { fsn1: "3.0000" } }, b: { source: "t", date: "2026-12-06", monthlyNet: { fsn1: "17.4900" } } },
    loadBalancerTypes: {},
    primaryIpv4: null,
  };
  const line = fc.record({
    type: fc.constantFrom("a", "b", "unpriced"),
    min: fc.integer({ min: 0, max: 100 }),
    extra: fc.integer({ min: 0, max: 100 }),
  }).map(({ type, min, extra }): CostLine => ({ what: "pool", kind: "server", type, location: "fsn1", count: { min, max: min + extra } }));

  it("is the sum of its lines, min never above max, and an unpriced line adds nothing but its name", () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), (lines) => {
        const cost = costOf(lines, table);
        const price = (type: string) => (type === "a" ? 30_000 : type === "b" ? 174_900 : 0);
        const min = lines.reduce((sum, entry) => sum + price(entry.type) * entry.count.min, 0);
        const max = lines.reduce((sum, entry) => sum + price(entry.type) * entry.count.max, 0);
        const unpriced = lines.some((entry) => entry.type === "unpriced") ? ["unpriced in fsn1 (server)"] : [];
        return cost.monthly.min === min && cost.monthly.max === max && min <= max && JSON.stringify(cost.unpriced) === JSON.stringify(unpriced);
      }),
    );
  });

  it("splits in any order to the same total (additive)", () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), fc.nat(), (lines, cut) => {
        const at = lines.length === 0 ? 0 : cut % lines.length;
        const whole = costOf(lines, table).monthly;
        const left = costOf(lines.slice(0, at), table).monthly;
        const right = costOf(lines.slice(at).reverse(), table).monthly;
        return whole.min === left.min + right.min && whole.max === left.max + right.max;
      }),
    );
  });

  it.each([
    [{ min: 100_000, max: 100_000 }, { min: 100_000, max: 100_000 }, "10.00", "±0.00"],
    [{ min: 100_000, max: 100_000 }, { min: 200_000, max: 500_000 }, "20.00–50.00", "+10.00–+40.00"],
    [{ min: 200_000, max: 200_000 }, { min: 50_000, max: 50_000 }, "5.00", "-15.00"],
  ])("formats %j → %j as %s, change %s", (before, after, range, change) => {
    expect(formatRange(after)).toBe(range);
    expect(formatChange(before, after)).toBe(change);
  });
});
