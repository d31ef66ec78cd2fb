import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prodTenants } from "../../../policies/testing/baseline";
import { tenantClusterManifest } from "../tenant/tenant-cluster";
import { clusterCostLines, costOf, formatChange, formatRange, managementCostLines, sumCosts, type CostLine } from "./fleet-cost";
import type { PriceTable } from "./price-table";

const tenant = (name: string) => {
  const found = prodTenants().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no prod tenant ${name}`);
  return found;
};

describe("what a tenant's Cluster makes Hetzner create", () => {
  it("payments (3 control-plane servers over fsn1 and nbg1, two fixed pools): the servers spread, an IPv4 each, the API load balancer in the first region", () => {
    const lines = clusterCostLines(tenantClusterManifest(tenant("payments")));
    expect(lines.map((line) => `${line.kind} ${line.type} ${line.location} ${line.count.min}-${line.count.max}`)).toEqual([
      "server cx33 fsn1 2-2",
      "primaryIpv4 ipv4 fsn1 2-2",
      "server cx33 nbg1 1-1",
      "primaryIpv4 ipv4 nbg1 1-1",
      "server cpx31 fsn1 3-3",
      "primaryIpv4 ipv4 fsn1 3-3",
      "server cpx31 nbg1 3-3",
      "primaryIpv4 ipv4 nbg1 3-3",
      "loadBalancer lb11 fsn1 1-1",
    ]);
  });

  it("analytics: an autoscaled pool is its autoscaler's minSize to maxSize (the Cluster has no replicas for it)", () => {
    const pool = clusterCostLines(tenantClusterManifest(tenant("analytics"))).filter((line) => line.type === "cax31" || (line.kind === "primaryIpv4" && line.count.max === 6));
    expect(pool.map((line) => [line.kind, line.type, line.count])).toEqual([
      ["server", "cax31", { min: 2, max: 6 }],
      ["primaryIpv4", "ipv4", { min: 2, max: 6 }],
    ]);
  });

  it("a Karpenter pool: CAPI's first server up to that one plus the servers under its CPU limit (the Cluster has no replicas or bounds for it)", () => {
    const analytics = tenant("analytics");
    const karpenter = { ...analytics, workers: analytics.workers.map((pool, index) => (index === 0 ? { ...pool, replicas: undefined, autoscaling: { provider: "karpenter" as const, cpuLimit: 20, expireAfter: "720h", consolidation: { policy: "WhenEmpty" as const, after: "30s" } } } : pool)) };
    const lines = clusterCostLines(tenantClusterManifest(karpenter));
    const at = lines.findIndex((line) => line.type === "cax31");
    const pool = lines.slice(at, at + 2);
    // 20 vCPUs hold two cax31 (8 each).
    expect(pool.map((line) => [line.kind, line.type, line.count])).toEqual([
      ["server", "cax31", { min: 1, max: 3 }],
      ["primaryIpv4", "ipv4", { min: 1, max: 3 }],
    ]);
  });

  it("the management cluster: its servers, their IPv4 addresses and its API load balancer", () => {
    expect(managementCostLines({ servers: 3, serverType: "cx33", location: "nbg1", apiLoadBalancerType: "lb11" })).toEqual([
      { kind: "server", type: "cx33", location: "nbg1", count: { min: 3, max: 3 } },
      { kind: "primaryIpv4", type: "ipv4", location: "nbg1", count: { min: 3, max: 3 } },
      { kind: "loadBalancer", type: "lb11", location: "nbg1", count: { min: 1, max: 1 } },
    ]);
  });
});

describe("a Cluster the lines cannot fully read", () => {
  type Manifest = ReturnType<typeof tenantClusterManifest>;
  const edit = (change: (topology: Record<string, unknown>) => void): Manifest => {
    const manifest = structuredClone(tenantClusterManifest(tenant("edge")));
    change(manifest.spec.topology as Record<string, unknown>);
    return manifest;
  };
  const summary = (manifest: unknown) => clusterCostLines(manifest).map((line) => `${line.kind} ${line.type} ${line.location} ${line.count.min}-${line.count.max}`);

  it.each([null, "cluster", [], {}, { spec: { topology: [] } }, { spec: { topology: { variables: "x", workers: [] } } }])("has nothing to price in %j", (manifest) => {
    expect(clusterCostLines(manifest)).toEqual([]);
  });

  it("prices a pool with its own type, else the Cluster's, and skips an empty pool", () => {
    const manifest = edit((topology) => {
      const [pool] = (topology.workers as { machineDeployments: Record<string, unknown>[] }).machineDeployments;
      const other = { ...structuredClone(pool!), name: "md-1", replicas: 2, variables: { overrides: [] } };
      const empty = { ...structuredClone(pool!), name: "md-2", replicas: 0 };
      (topology.workers as { machineDeployments: unknown[] }).machineDeployments.push(other, empty);
      ((pool!.variables as { overrides: { name: string; value: unknown }[] }).overrides.find((entry) => entry.name === "hcloudWorkerMachineType")!).value = "cpx31";
    });
    expect(summary(manifest)).toEqual([
      "server cx23 fsn1 1-1",
      "primaryIpv4 ipv4 fsn1 1-1",
      "server cpx31 fsn1 2-2",
      "primaryIpv4 ipv4 fsn1 2-2",
      "server cx23 fsn1 2-2",
      "primaryIpv4 ipv4 fsn1 2-2",
      "loadBalancer lb11 fsn1 1-1",
    ]);
  });

  it("reads the autoscaler's bounds only as whole numbers in strings (Kubernetes annotations), a pool without a failure domain in the first region, and no region that is not a name", () => {
    const pool = (topology: Record<string, unknown>) => (topology.workers as { machineDeployments: Record<string, unknown>[] }).machineDeployments[0]!;
    const withBounds = (min: unknown, max: unknown) =>
      edit((topology) => {
        const deployment = pool(topology);
        delete deployment.replicas;
        delete deployment.failureDomain;
        deployment.metadata = { annotations: { "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": min, "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": max } };
        (topology.variables as { name: string; value: unknown }[]).find((entry) => entry.name === "hcloudRegions")!.value = ["fsn1", 7];
      });
    expect(summary(withBounds("1", "12"))).toContain("server cx23 fsn1 1-12");
    expect(summary(withBounds("1", 12))).toContain("server cx23 fsn1 1-1");
    for (const bad of ["3x", "x3", "-3"]) expect(summary(withBounds("2", bad)), bad).toContain("server cx23 fsn1 2-2");
    expect(summary(withBounds(undefined, undefined)).filter((line) => line.startsWith("server"))).toEqual(["server cx23 fsn1 1-1"]);
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
  }).map(({ type, min, extra }): CostLine => ({ kind: "server", type, location: "fsn1", count: { min, max: min + extra } }));

  it("is the sum of its lines, min never above max, and an unpriced line adds nothing but its name", () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), (lines) => {
        const cost = costOf(lines, table);
        const price = (type: string) => (type === "a" ? 30_000 : type === "b" ? 174_900 : 0);
        const min = lines.reduce((sum, entry) => sum + price(entry.type) * entry.count.min, 0);
        const max = lines.reduce((sum, entry) => sum + price(entry.type) * entry.count.max, 0);
        const unpriced = lines.some((entry) => entry.type === "unpriced") ? ["unpriced in fsn1 (server)"] : [];
        // (sorted and once each: see the next test)
        return cost.monthly.min === min && cost.monthly.max === max && min <= max && JSON.stringify(cost.unpriced) === JSON.stringify(unpriced);
      }),
    );
  });

  it("names each unpriced thing once, sorted, alone and in a sum", () => {
    const lines: CostLine[] = [
      { kind: "server", type: "z1", location: "fsn1", count: { min: 1, max: 1 } },
      { kind: "server", type: "a1", location: "fsn1", count: { min: 1, max: 1 } },
      { kind: "server", type: "z1", location: "fsn1", count: { min: 2, max: 2 } },
    ];
    expect(costOf(lines, table).unpriced).toEqual(["a1 in fsn1 (server)", "z1 in fsn1 (server)"]);
    expect(sumCosts([costOf(lines.slice(0, 1), table), costOf(lines.slice(1), table)]).unpriced).toEqual(["a1 in fsn1 (server)", "z1 in fsn1 (server)"]);
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
