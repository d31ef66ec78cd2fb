import fc from "fast-check";
import { describe, expect, it } from "vitest";
import semver from "semver";
import { computeUpgradePlan, maxWorkersMinorSkew, upgradeCampaign, type UpgradeStep } from "../../infra/model/versions/upgrade-plan";
import { baselineFleet, deployedOutputs } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { tenantWorkerLag as rule } from "./tenant-worker-lag";

const baseline = baselineFleet();

/** The most minors the workers trail the control plane at any point of a campaign that starts with both at `from`. */
function maxWorkerLag(from: string, campaign: readonly UpgradeStep[]): number {
  let controlPlane = semver.minor(from);
  let workers = controlPlane;
  let lag = 0;
  for (const step of campaign) {
    if (step.component === "control-plane") controlPlane = semver.minor(step.version);
    else workers = semver.minor(step.version);
    lag = Math.max(lag, controlPlane - workers);
  }
  return lag;
}

describe("maxWorkerLag (the measure the property below uses)", () => {
  it.each([
    ["no steps", "v1.33.0", [], 0],
    ["CAPI's 1.29 → 1.33 campaign", "v1.29.0", ["cp v1.30.0", "cp v1.31.0", "cp v1.32.0", "w v1.32.0", "cp v1.33.0", "w v1.33.0"], 3],
    ["one minor", "v1.33.0", ["cp v1.34.0", "w v1.34.0"], 1],
    ["workers left behind four minors", "v1.29.0", ["cp v1.30.0", "cp v1.31.0", "cp v1.32.0", "cp v1.33.0", "w v1.33.0"], 4],
  ])("%s", (_name, from, steps, lag) => {
    const campaign = steps.map((step) => {
      const [component, version] = step.split(" ");
      return { component: component === "cp" ? ("control-plane" as const) : ("workers" as const), version: version! };
    });
    expect(maxWorkerLag(from, campaign)).toBe(lag);
  });
});

describe("the workers' lag on the plan CAPI computes", () => {
  // A tenant deployed at v1.<from>.x going to v1.<from+span>.y with every minor in between listed
  // by the class: the lag grows with the control plane's steps until CAPI moves the workers (every
  // 3 minors at most), so it is min(span, 3). This is why the rule only has to refuse planning by
  // an extension: a lag check on CAPI's own plan could never fire (it was removed as dead code).
  it("is min(minors crossed, 3) for any chained upgrade, at 1,000 runs", () => {
    const upgrade = fc.record({ from: fc.integer({ min: 20, max: 40 }), span: fc.integer({ min: 0, max: 12 }), fromPatch: fc.integer({ min: 0, max: 9 }), toPatch: fc.integer({ min: 10, max: 19 }) });
    fc.assert(
      fc.property(upgrade, ({ from, span, fromPatch, toPatch }) => {
        const kubernetesVersions = Array.from({ length: span + 1 }, (_, i) => `v1.${from + i}.${i === 0 ? fromPatch : toPatch}`);
        const versions = { controlPlaneVersion: kubernetesVersions[0]!, workersVersion: kubernetesVersions[0]!, desiredVersion: kubernetesVersions.at(-1)! };
        const campaign = upgradeCampaign(versions, computeUpgradePlan({ ...versions, kubernetesVersions }));
        expect(maxWorkerLag(versions.controlPlaneVersion, campaign)).toBe(Math.min(span, maxWorkersMinorSkew));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("tenant-worker-lag", () => {
  it("passes the baseline and a chained upgrade planned by CAPI", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "deployed-state").outputs = deployedOutputs({ analytics: "v1.33.10" });
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("leaves tenants alone that are new, unchanged, or whose class is not declared, even with an extension", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "deployed-state").outputs = deployedOutputs({ payments: "v1.34.6", analytics: "v1.33.10" });
    at(fixture(fleet, "cluster-class").props, "spec", "upgrade", "external").generateUpgradePlanExtension = "planner.example";
    at(fixture(fleet, "cluster-analytics").props, "spec", "topology", "classRef").name = "undeclared";
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("refuses an upgrade when an extension plans it (the lag cannot be checked)", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "deployed-state").outputs = deployedOutputs({ analytics: "v1.33.10" });
    at(fixture(fleet, "cluster-class").props, "spec", "upgrade", "external").generateUpgradePlanExtension = "planner.example";
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([expect.objectContaining({ policy: "tenant-worker-lag", level: "mandatory" })]);
    expect(violations[0]!.message).toContain('tenant "analytics" (Cluster tenant-analytics/analytics): ClusterClass capi-fleet-system/hetzner-caren leaves upgrade planning to the extension planner.example');
    expect(violations[0]!.message).toContain("remove spec.upgrade.external.generateUpgradePlanExtension");
  });
});
