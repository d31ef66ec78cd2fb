import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { parseK3sVersion } from "../../infra/model/versions/kubernetes-version";
import { baselineFleet, deployedOutputs } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture } from "../testing/harness";
import { managementK3sUpgradePath as rule } from "./management-k3s-upgrade-path";

const baseline = baselineFleet();
const target = parseK3sVersion(catalog.k3s.version)!;

/** A k3s release relative to the catalog's (the baseline's target): minors and patch moved, revision set. */
function release(minorDelta: number, patch = target.patch, revision = 1): string {
  return `v${target.major}.${target.minor + minorDelta}.${patch}+k3s${revision}`;
}

/** The baseline with the management servers deployed at this release. */
function deployed(version: string) {
  const fleet = cloneFixtures(baseline);
  fixture(fleet, "deployed-state").outputs = deployedOutputs({}, version);
  return fleet;
}

const k3sUpgradesUrn = "urn:pulumi:test::capi-fleet::capi-fleet:management:K3sUpgrades::k3s-upgrades";

describe("management-k3s-upgrade-path", () => {
  it("passes the baseline (a new stack: nothing deployed)", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("passes no change, a patch upgrade and a one-minor upgrade", async () => {
    expect(await evaluate([rule], deployed(catalog.k3s.version))).toEqual([]);
    expect(await evaluate([rule], deployed(release(0, 0)))).toEqual([]);
    expect(await evaluate([rule], deployed(release(-1, 0)))).toEqual([]);
  });

  it("refuses a skip of two minors, naming the minor to set first", async () => {
    const violations = await evaluate([rule], deployed(release(-2, 0)));
    expect(violations).toEqual([expect.objectContaining({ policy: "management-k3s-upgrade-path", level: "mandatory", urn: k3sUpgradesUrn })]);
    expect(violations[0]!.message).toContain(`management.k3sVersion: ${release(-2, 0)} → ${catalog.k3s.version} skips 1 minor`);
    expect(violations[0]!.message).toContain(`set v${target.major}.${target.minor - 1}.x first`);
  });

  it("refuses a downgrade: a lower minor, a lower patch, a lower k3s revision", async () => {
    for (const from of [release(1, 0), release(0, target.patch + 1), release(0, target.patch, 2)]) {
      const violations = await evaluate([rule], deployed(from));
      expect(violations, from).toEqual([expect.objectContaining({ policy: "management-k3s-upgrade-path", urn: k3sUpgradesUrn })]);
      expect(violations[0]!.message).toContain(`would downgrade the servers from the deployed ${from}`);
    }
  });

  it("judges the K3sUpgrades component's target, not the ManagementCluster's inputs", async () => {
    const fleet = deployed(release(-1, 0));
    fixture(fleet, "k3s-upgrades").outputs = { k3sVersion: release(1, 0) };
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining(`skips 1 minor`)]);
  });

  it("has nothing to judge without a K3sUpgrades component (existing mode)", async () => {
    const fleet = deployed(release(-3, 0)).filter((resource) => resource.name !== "k3s-upgrades");
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
