import { describe, expect, it } from "vitest";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { readStackConfig } from "../../../tests/support/stack-files";
import { emptyPriceTable, testPriceTable } from "./price-fixtures";
import { isUnrefreshed, stackCostOf, unpricedProblems, type CostedStack } from "./stack-cost";

function stack(name: string): CostedStack {
  const { values, secretKeys } = readStackConfig(name);
  return parseFleetConfig({ stack: name, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
}

describe("a stack's cost from its config", () => {
  // By hand at the test prices: payments 84.50, analytics 46.50–96.50, edge 15.50; management
  // (3 cx33 + IPv4 in nbg1, lb11) 21.50; the stack 168.00–218.00 (in ten-thousandths below).
  it("prices prod by tenant and management cluster, an autoscaled pool as a range", () => {
    const cost = stackCostOf(stack("prod"), testPriceTable());
    expect(Object.fromEntries([...cost.tenants].map(([name, { cost: tenant }]) => [name, tenant.monthly]))).toEqual({
      payments: { min: 845_000, max: 845_000 },
      analytics: { min: 465_000, max: 965_000 },
      edge: { min: 155_000, max: 155_000 },
    });
    expect(cost.management?.cost.monthly).toEqual({ min: 215_000, max: 215_000 });
    expect(cost.total).toEqual({ monthly: { min: 1_680_000, max: 2_180_000 }, unpriced: [] });
  });

  it("has no management cost for an existing cluster (not the fleet's to price) or a shard", () => {
    const prod = stack("prod");
    expect(stackCostOf({ tenants: prod.tenants }, testPriceTable()).management).toBeUndefined();
    expect(stackCostOf({ tenants: [], management: { ...prod.management, mode: "existing" } as CostedStack["management"] }, testPriceTable())).toMatchObject({
      management: undefined,
      total: { monthly: { min: 0, max: 0 }, unpriced: [] },
    });
  });

  it("knows a table that was never refreshed", () => {
    expect(isUnrefreshed(emptyPriceTable)).toBe(true);
    expect(isUnrefreshed(testPriceTable())).toBe(false);
    expect(isUnrefreshed({ ...emptyPriceTable, loadBalancerTypes: testPriceTable().loadBalancerTypes })).toBe(false);
    expect(isUnrefreshed({ ...emptyPriceTable, serverTypes: testPriceTable().serverTypes })).toBe(false);
    expect(isUnrefreshed({ ...emptyPriceTable, primaryIpv4: testPriceTable().primaryIpv4 })).toBe(false);
  });
});

describe("what the table cannot price, by config path", () => {
  it("nothing for prod at the test prices", () => {
    expect(unpricedProblems(stack("prod"), testPriceTable())).toEqual([]);
  });

  it("a type without an entry, with the priced types; a location without a price, with the priced locations; one problem per path", () => {
    const table = testPriceTable();
    const { cx33: _cx33, ...serverTypes } = table.serverTypes;
    const withoutCx33 = { ...table, serverTypes: { ...serverTypes, cpx31: { ...table.serverTypes.cpx31!, monthlyNet: { fsn1: "10.00" } } } };
    expect(unpricedProblems(stack("prod"), withoutCx33)).toEqual([
      {
        path: "tenants[0].controlPlane.machineType",
        message: '"cx33" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: cax31, cpx31, cx23, or refresh the table: npm run prices -- --refresh',
      },
      { path: "tenants[0].workers[1].machineType", message: 'server type "cpx31" has no price in nbg1; priced there: fsn1' },
      {
        path: "tenants[1].controlPlane.machineType",
        message: '"cx33" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: cax31, cpx31, cx23, or refresh the table: npm run prices -- --refresh',
      },
      {
        path: "management.serverType",
        message: '"cx33" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: cax31, cpx31, cx23, or refresh the table: npm run prices -- --refresh',
      },
    ]);
  });

  it("a location without a price, for each kind, with the locations priced (sorted)", () => {
    const table = testPriceTable();
    const only = (entry: { source: string; date: string }) => ({ ...entry, monthlyNet: { nbg1: "1.00", hel1: "1.00" } });
    const elsewhere = { ...table, serverTypes: { ...table.serverTypes, cx23: only(table.serverTypes.cx23!) }, loadBalancerTypes: { lb11: only(table.loadBalancerTypes.lb11!) }, primaryIpv4: only(table.primaryIpv4!) };
    expect(unpricedProblems(stack("dev"), elsewhere).map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "tenants[0].regions[0]: primary IPv4 has no price in fsn1; priced there: hel1, nbg1",
      'tenants[0].apiLoadBalancerType: load-balancer type "lb11" has no price in fsn1; priced there: hel1, nbg1',
      'tenants[0].workers[0].machineType: server type "cx23" has no price in fsn1; priced there: hel1, nbg1',
      "tenants[0].workers[0].failureDomain: primary IPv4 has no price in fsn1; priced there: hel1, nbg1",
      'management.serverType: server type "cx23" has no price in fsn1; priced there: hel1, nbg1',
      'management.apiLoadBalancerType: load-balancer type "lb11" has no price in fsn1; priced there: hel1, nbg1',
      "management.location: primary IPv4 has no price in fsn1; priced there: hel1, nbg1",
    ]);
  });

  it("load balancers and primary IPv4 by their config paths", () => {
    const table = { ...testPriceTable(), loadBalancerTypes: {}, primaryIpv4: null };
    const paths = unpricedProblems(stack("dev"), table).map((problem) => `${problem.path}: ${problem.message}`);
    expect(paths).toEqual([
      "tenants[0].regions[0]: the price table has no price for primary IPv4 addresses; refresh it: npm run prices -- --refresh",
      'tenants[0].apiLoadBalancerType: "lb11" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: none, the table prices no such type, or refresh the table: npm run prices -- --refresh',
      "tenants[0].workers[0].failureDomain: the price table has no price for primary IPv4 addresses; refresh it: npm run prices -- --refresh",
      'management.apiLoadBalancerType: "lb11" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: none, the table prices no such type, or refresh the table: npm run prices -- --refresh',
      "management.location: the price table has no price for primary IPv4 addresses; refresh it: npm run prices -- --refresh",
    ]);
  });
});
