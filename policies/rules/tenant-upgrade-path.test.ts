import { describe, expect, it, vi } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { baselineFleet, deployedOutputs } from "../testing/baseline";
import { resourceTypes } from "../lib/fleet-resources";
import { at, cloneFixtures, evaluate, fixture, type Violation } from "../testing/harness";
import { tenantUpgradePath as rule } from "./tenant-upgrade-path";

// The real planner, which a test can break: it throws only UpgradePlanError, so the rule's rethrow of anything else needs a bug to show.
const planner = vi.hoisted(() => ({ broken: false }));
vi.mock("../../infra/model/versions/upgrade-plan", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../infra/model/versions/upgrade-plan")>();
  return {
    ...original,
    computeUpgradePlan: (...args: Parameters<typeof original.computeUpgradePlan>) => {
      if (planner.broken) throw new TypeError("planner bug");
      return original.computeUpgradePlan(...args);
    },
  };
});

const baseline = baselineFleet();
const clusterUrn = (tenant: string) => `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::cluster-${tenant}`;

/** The only violation (fails the test when there are none or several). */
function only(violations: Violation[]): Violation {
  expect(violations).toHaveLength(1);
  return violations[0]!;
}

/** The baseline with these tenants deployed at these versions (prod targets: payments v1.34.6, analytics v1.35.3, edge v1.33.10). */
function deployed(versions: Record<string, string>) {
  const fleet = cloneFixtures(baseline);
  fixture(fleet, "deployed-state").outputs = deployedOutputs(versions);
  return fleet;
}

describe("tenant-upgrade-path", () => {
  it("passes the baseline (a new stack: nothing deployed)", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("passes unchanged tenants, a one-minor upgrade and a chained two-minor upgrade", async () => {
    expect(await evaluate([rule], deployed({ payments: "v1.34.6", edge: "v1.33.10", analytics: "v1.33.10" }))).toEqual([]);
  });

  it("refuses a downgrade against the deployed version", async () => {
    const violations = await evaluate([rule], deployed({ payments: "v1.35.3" }));
    expect(violations).toEqual([
      expect.objectContaining({
        policy: "tenant-upgrade-path",
        level: "mandatory",
        urn: "urn:pulumi:test::capi-fleet::kubernetes:cluster.x-k8s.io/v1beta2:Cluster::cluster-payments",
      }),
    ]);
    expect(violations[0]!.message).toContain('tenant "payments" (Cluster tenant-payments/payments): cannot go from the deployed v1.35.3 to v1.34.6: ');
    expect(violations[0]!.message).toContain("downgrade");
    expect(violations[0]!.message).toContain("set tenants[].kubernetesVersion to v1.35.3 or a reachable newer version");
  });

  it("refuses a two-minor jump when the class skips the minor in between", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions = ["v1.33.10", "v1.35.3"];
    const violation = only(await evaluate([rule], fleet));
    expect(violation).toMatchObject({ policy: "tenant-upgrade-path", level: "mandatory", urn: clusterUrn("analytics") });
    expect(violation.message).toContain('tenant "analytics" (Cluster tenant-analytics/analytics): cannot go from the deployed v1.33.10 to v1.35.3');
  });

  it("reports a two-minor jump on a Cluster API without chained upgrades once, for the Cluster API, even when the class also skips the minor", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    at(fixture(fleet, "core-provider").props, "spec").version = "v1.11.11";
    at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions = ["v1.33.10", "v1.35.3"];
    const violation = only(await evaluate([rule], fleet));
    expect(violation.urn).toBe(clusterUrn("analytics"));
    expect(violation.message).toContain("crosses 2 minors, but Cluster API v1.11.11 has no chained upgrades");
  });

  it("refuses a two-minor jump when the class lists no versions (CAPI then upgrades one minor only)", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    delete at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions;
    const violation = only(await evaluate([rule], fleet));
    expect(violation.urn).toBe(clusterUrn("analytics"));
    expect(violation.message).toContain("cannot go from the deployed v1.33.10 to v1.35.3");
  });

  it("refuses a two-minor jump on a Cluster API without chained upgrades", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    at(fixture(fleet, "core-provider").props, "spec").version = "v1.11.11";
    const violation = only(await evaluate([rule], fleet));
    expect(violation).toMatchObject({ policy: "tenant-upgrade-path", level: "mandatory", urn: clusterUrn("analytics") });
    expect(violation.message).toContain(`v1.33.10 → v1.35.3 crosses 2 minors, but Cluster API v1.11.11 has no chained upgrades (since ${catalog.clusterApi.chainedUpgradesSince})`);
    expect(violation.message).toContain("raise tenants[].kubernetesVersion one minor per update");
  });

  it("passes a one-minor upgrade on a Cluster API without chained upgrades, and a two-minor one on the first release with them", async () => {
    const oneMinor = deployed({ payments: "v1.33.10" });
    at(fixture(oneMinor, "core-provider").props, "spec").version = "v1.11.11";
    expect(await evaluate([rule], oneMinor)).toEqual([]);
    const firstChained = deployed({ analytics: "v1.33.10" });
    at(fixture(firstChained, "core-provider").props, "spec").version = catalog.clusterApi.chainedUpgradesSince;
    expect(await evaluate([rule], firstChained)).toEqual([]);
  });

  it("leaves values that are not versions to the checks that own them (deployed-state reader, config validation)", async () => {
    expect(await evaluate([rule], deployed({ payments: "garbage" }))).toEqual([]);
    const fleet = deployed({ payments: "v1.33.10" });
    at(fixture(fleet, "cluster-payments").props, "spec", "topology").version = "latest";
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("plans without a list when the Cluster's class is not declared (CAPI then upgrades one minor only)", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    at(fixture(fleet, "cluster-analytics").props, "spec", "topology", "classRef").name = "undeclared";
    expect((await evaluate([rule], fleet)).map((violation) => violation.message)).toEqual([expect.stringContaining("cannot go from the deployed v1.33.10 to v1.35.3")]);
  });

  it("judges the plan alone when no core provider declares the Cluster API version", async () => {
    const fleet = deployed({ analytics: "v1.33.10" });
    at(fixture(fleet, "core-provider").props, "spec").version = undefined;
    expect(await evaluate([rule], fleet)).toEqual([]);
    at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions = ["v1.33.10", "v1.35.3"];
    expect((await evaluate([rule], fleet)).map((violation) => violation.message)).toEqual([expect.stringContaining("cannot go from the deployed v1.33.10 to v1.35.3")]);
  });

  it("lets a planner failure that is not a refused plan surface as an error, not as a violation that blames the config", async () => {
    planner.broken = true;
    try {
      await expect(evaluate([rule], deployed({ payments: "v1.33.10" }))).rejects.toThrow("planner bug");
    } finally {
      planner.broken = false;
    }
  });
});
