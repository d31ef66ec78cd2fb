import { describe, expect, it } from "vitest";
import { baselineFleet, deployedOutputs } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture, type FixtureResource } from "../testing/harness";
import { tenantNotRemoved as rule } from "./tenant-not-removed";

/** The baseline with these tenants running, as the last update left them. */
function deployed(versions: Record<string, string>): FixtureResource[] {
  const fleet = cloneFixtures(baselineFleet());
  fixture(fleet, "deployed-state").outputs = deployedOutputs(versions);
  return fleet;
}

/** The fleet without a tenant's component and everything under it (as when its config entry goes). */
function without(fleet: FixtureResource[], tenant: string): FixtureResource[] {
  const component = `tenant-${tenant}`;
  return fleet.filter((resource) => resource.name !== component && resource.parent !== component);
}

describe("tenant-not-removed", () => {
  it("passes the baseline: every running tenant is still declared", async () => {
    expect(await evaluate([rule], deployed({ payments: "v1.34.6", analytics: "v1.35.3", edge: "v1.33.10" }))).toEqual([]);
  });

  it("reports a running tenant whose Cluster is gone (deleted, or renamed)", async () => {
    const violations = await evaluate([rule], without(deployed({ payments: "v1.34.6", edge: "v1.33.10" }), "edge"));
    expect(violations).toEqual([expect.objectContaining({ policy: "tenant-not-removed", level: "mandatory", urn: "" })]);
    expect(violations[0]!.message).toContain('tenant "edge" runs Kubernetes v1.33.10, but the program no longer declares its Cluster');
    // The remedy names the config key that allows the deletion.
    expect(violations[0]!.message).toMatch(/Restore the tenant, or list "edge" in replaceableTenants to delete it\.$/);
  });

  it("allows the deletion of a tenant listed as replaceable, and only that one", async () => {
    const fleet = without(without(deployed({ payments: "v1.34.6", edge: "v1.33.10" }), "edge"), "payments");
    const violations = await evaluate([rule], fleet, { "tenant-not-removed": { replaceableTenants: ["edge"] } });
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining('tenant "payments"')]);
  });

  it("says nothing of a new stack, where nothing runs yet", async () => {
    expect(await evaluate([rule], without(cloneFixtures(baselineFleet()), "edge"))).toEqual([]);
  });
});
