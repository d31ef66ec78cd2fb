import { describe, expect, it } from "vitest";
import { baselineFleet, shardFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { fleetVersionDrift as rule } from "./fleet-version-drift";

const baseline = baselineFleet();

describe("fleet-version-drift", () => {
  it("passes the baseline (edge is 2 minors behind analytics: the default limit)", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("advises when a tenant falls further behind", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-analytics").props, "spec", "topology").version = "v1.36.1";
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([
      expect.objectContaining({
        policy: "fleet-version-drift",
        level: "advisory",
        urn: "urn:pulumi:test::capi-fleet::kubernetes:cluster.x-k8s.io/v1beta2:Cluster::cluster-edge",
      }),
    ]);
    expect(violations[0]!.message).toContain('tenant "edge" (Cluster tenant-edge/edge): v1.33.10 is 3 minors behind the newest tenant (at most 2)');
  });

  it("leaves out a tenant whose version is not known yet (a preview's unknown output), not failing on it", async () => {
    const fleet = cloneFixtures(baseline);
    delete at(fixture(fleet, "cluster-analytics").props, "spec", "topology").version;
    at(fixture(fleet, "cluster-edge").props, "spec", "topology").version = "v1.30.0";
    const violations = await evaluate([rule], fleet);
    // Measured against the newest known tenant (payments), not against the unknown one.
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringMatching(/v1\.30\.0 is \d+ minors behind the newest tenant/)]);
  });

  it("reads maxMinorsBehind from the config", async () => {
    const violations = await evaluate([rule], baseline, { "fleet-version-drift": { maxMinorsBehind: 1 } });
    expect(violations).toHaveLength(1);
    expect(violations[0]!.message).toContain("v1.33.10 is 2 minors behind the newest tenant (at most 1)");
  });

  it("in a sharded fleet: measures against the newest tenant of every stack, and reports only this stack's tenants", async () => {
    // analytics (v1.35) runs in another stack: this shard holds payments (v1.34) and edge (v1.33).
    const fleet = shardFleet({ analytics: "v1.35.3", newer: "v1.36.1", unknown: "latest" }).filter((resource) => !resource.name.endsWith("analytics"));
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining('tenant "edge" (Cluster tenant-edge/edge): v1.33.10 is 3 minors behind the newest tenant (at most 2)')]);
    expect(await evaluate([rule], shardFleet({ analytics: "v1.35.3" }).filter((resource) => !resource.name.endsWith("analytics")))).toEqual([]);
  });
});
