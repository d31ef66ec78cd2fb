import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { lbGcOptOutExempted as rule } from "./lb-gc-opt-out-exempted";
import { loadBalancerGcAnnotation } from "../../infra/model/facts/caren";

const baseline = baselineFleet();
const clusterUrn = (name: string) => `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::${name}`;

/** The baseline with the payments Cluster's LB-GC annotation set to `value`. */
function withAnnotation(value: string) {
  const fleet = cloneFixtures(baseline);
  at(fixture(fleet, "cluster-payments").props, "metadata", "annotations")[loadBalancerGcAnnotation] = value;
  return fleet;
}

describe("lb-gc-opt-out-exempted", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each(["false", "0", "F", "f", "FALSE", "False"])("reports an opt-out spelled %j that is not exempted", async (value) => {
    const violations = await evaluate([rule], withAnnotation(value));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ policy: "lb-gc-opt-out-exempted", level: "mandatory", urn: clusterUrn("cluster-payments") });
    expect(violations[0]!.message).toContain('tenant "payments" (Cluster tenant-payments/payments) opts out');
    expect(violations[0]!.message).toContain(`${loadBalancerGcAnnotation}: ${JSON.stringify(value)}`);
    expect(violations[0]!.message).toContain("lb-gc-opt-out-exempted.exemptClusters");
  });

  it.each(["payments", "tenant-payments/payments"])("accepts the opt-out when exemptClusters lists %j", async (exemption) => {
    expect(await evaluate([rule], withAnnotation("false"), { "lb-gc-opt-out-exempted": { exemptClusters: [exemption] } })).toEqual([]);
  });

  it.each([["analytics"], ["tenant-analytics/payments"], ["payments/payments"]])("still reports when exemptClusters lists only %j", async (exemption) => {
    const violations = await evaluate([rule], withAnnotation("false"), { "lb-gc-opt-out-exempted": { exemptClusters: [exemption] } });
    expect(violations.map((violation) => violation.urn)).toEqual([clusterUrn("cluster-payments")]);
  });

  it.each(["true", "1", "T"])("accepts an annotation %j that keeps GC on", async (value) => {
    expect(await evaluate([rule], withAnnotation(value))).toEqual([]);
  });

  it("leaves values ParseBool refuses to lb-gc-annotation-boolean", async () => {
    expect(await evaluate([rule], withAnnotation("no"))).toEqual([]);
  });

  it("matches the Cluster API v1beta2 Cluster type token", () => {
    expect(resourceTypes.cluster).toBe("kubernetes:cluster.x-k8s.io/v1beta2:Cluster");
  });

  it.each([
    ["the Cluster type token", resourceTypes.cluster, 1],
    ["another apiVersion", "kubernetes:cluster.x-k8s.io/v1beta1:Cluster", 0],
    ["another kind spelling", "kubernetes:cluster.x-k8s.io/v1beta2:Clusters", 0],
  ])("matches resources by exact type string: %s", async (_label, type, expected) => {
    const fleet = withAnnotation("false");
    fixture(fleet, "cluster-payments").type = type;
    expect(await evaluate([rule], fleet)).toHaveLength(expected);
  });
});
