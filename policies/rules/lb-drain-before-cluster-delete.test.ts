import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture, type FixtureResource } from "../testing/harness";
import { lbDrainBeforeClusterDelete as rule } from "./lb-drain-before-cluster-delete";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

const baseline = baselineFleet();
const clusterUrn = (name: string) => `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::${name}`;

/** Evaluates the rule and checks it reported exactly the payments Cluster. */
async function expectPaymentsReported(fleet: FixtureResource[]) {
  const violations = await evaluate([rule], fleet);
  expect(violations).toHaveLength(1);
  expect(violations[0]).toMatchObject({ policy: "lb-drain-before-cluster-delete", level: "mandatory", urn: clusterUrn("cluster-payments") });
  expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments) has no load-balancer drain depending on it`);
  expect(violations[0]!.message).toContain(scriptEntryPoints.drainLoadBalancers);
  expect(violations[0]!.message).toContain("TenantCluster component");
}

describe("lb-drain-before-cluster-delete", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("reports a Cluster whose drain was removed", async () => {
    const fleet = cloneFixtures(baseline).filter((resource) => resource.name !== "drain-payments");
    await expectPaymentsReported(fleet);
  });

  it("reports a Cluster whose drain does not depend on it", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "drain-payments").dependsOn = [];
    await expectPaymentsReported(fleet);
  });

  it.each(["create", "update"])("does not count a command that also runs on %s as a drain", async (field) => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "drain-payments").props[field] = "echo hello";
    await expectPaymentsReported(fleet);
  });

  it("does not count a delete command that runs another script as a drain", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "drain-payments").props.delete = "node scripts/something-else.mjs";
    await expectPaymentsReported(fleet);
  });

  it("does not count a drain of another type as a drain", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "drain-payments").type = "command:remote:Command";
    await expectPaymentsReported(fleet);
  });

  it("reports only the Cluster left without a drain when a drain depends on another tenant's Cluster", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "drain-payments").dependsOn = ["cluster-analytics"];
    await expectPaymentsReported(fleet);
  });
});
