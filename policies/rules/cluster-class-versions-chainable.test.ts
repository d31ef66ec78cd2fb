import { describe, expect, it } from "vitest";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { clusterClassVersionsChainable as rule } from "./cluster-class-versions-chainable";

const baseline = baselineFleet();

function withVersions(versions: string[]) {
  const fleet = cloneFixtures(baseline);
  at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions = versions;
  return fleet;
}

describe("cluster-class-versions-chainable", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each([
    [["v1.33.10", "v1.35.3"], "spec.kubernetesVersions[1] (\"v1.35.3\"): expecting a version with minor 33 or 34, found version v1.35.3; add a 1.34 release in between"],
    [["v1.34.6", "v1.33.10"], "spec.kubernetesVersions[1] (\"v1.33.10\"): version must be greater than v1.34.6"],
    [["v1.33.10", "v1.33.10"], "version must be greater than v1.33.10; list versions oldest first, each once"],
    [[], "spec.kubernetesVersions must list at least one version"],
  ])("refuses %j", async (versions, message) => {
    const violations = await evaluate([rule], withVersions(versions));
    expect(violations).toEqual([expect.objectContaining({ policy: "cluster-class-versions-chainable", level: "mandatory" })]);
    expect(violations[0]!.message).toContain("ClusterClass capi-fleet-system/hetzner-caren: ");
    expect(violations[0]!.message).toContain(message);
  });

  it("accepts several patches of one minor", async () => {
    expect(await evaluate([rule], withVersions(["v1.33.9", "v1.33.10", "v1.34.6"]))).toEqual([]);
  });
});
