import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { lbGcAnnotationBoolean as rule } from "./lb-gc-annotation-boolean";
import { loadBalancerGcAnnotation } from "../../infra/model/facts/caren";

const baseline = baselineFleet();

/** The baseline with the analytics Cluster's LB-GC annotation set to `value`. */
function withAnnotation(value: string) {
  const fleet = cloneFixtures(baseline);
  at(fixture(fleet, "cluster-analytics").props, "metadata", "annotations")[loadBalancerGcAnnotation] = value;
  return fleet;
}

describe("lb-gc-annotation-boolean", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each(["maybe", "", "no", "yes", "FaLse", " false"])("reports the value %j, which ParseBool refuses", async (value) => {
    const violations = await evaluate([rule], withAnnotation(value));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({
      policy: "lb-gc-annotation-boolean",
      level: "mandatory",
      urn: `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::cluster-analytics`,
    });
    expect(violations[0]!.message).toContain(`tenant "analytics" (Cluster tenant-analytics/analytics): annotation ${loadBalancerGcAnnotation}: ${JSON.stringify(value)} is not a boolean`);
    expect(violations[0]!.message).toContain('use "true" or "false"');
  });

  it.each(["False", "false", "0", "true", "T", "1"])("accepts %j, which ParseBool parses", async (value) => {
    expect(await evaluate([rule], withAnnotation(value))).toEqual([]);
  });
});
