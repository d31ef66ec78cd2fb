import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture } from "../testing/harness";
import { clusterWaitsForCaren as rule } from "./cluster-waits-for-caren";

const baseline = baselineFleet();
const clusterUrn = (name: string) => `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::${name}`;

describe("cluster-waits-for-caren", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("reports a Cluster that does not depend on CAREN's readiness gate", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "cluster-edge").dependsOn = [];
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ policy: "cluster-waits-for-caren", level: "mandatory", urn: clusterUrn("cluster-edge") });
    expect(violations[0]!.message).toContain(`tenant "edge" (Cluster tenant-edge/edge) does not wait for CAREN's readiness gate`);
    expect(violations[0]!.message).toContain("pass Caren.ready as carenReady");
  });

  it("reports a Cluster that depends only on CAREN's release, not on the gate", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "cluster-edge").dependsOn = ["caren-release"];
    expect((await evaluate([rule], fleet)).map((violation) => violation.urn)).toEqual([clusterUrn("cluster-edge")]);
  });

  it("accepts a Cluster that waits for the gate transitively (Cluster → ClusterClass → gate)", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "cluster-edge").dependsOn = ["cluster-class"];
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("reports every Cluster, naming the missing gate, when the stack has no readiness gate", async () => {
    const fleet = cloneFixtures(baseline).filter((resource) => resource.name !== "caren-ready");
    for (const resource of fleet) resource.dependsOn = resource.dependsOn?.filter((name) => name !== "caren-ready");
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.urn)).toEqual(["payments", "analytics", "edge"].map((tenant) => clusterUrn(`cluster-${tenant}`)));
    for (const violation of violations) {
      expect(violation).toMatchObject({ policy: "cluster-waits-for-caren", level: "mandatory" });
      expect(violation.message).toContain(`the stack has no CAREN readiness gate (${resourceTypes.extensionConfigPatch} cluster-api-runtime-extensions-nutanix)`);
      expect(violation.message).toContain("install CAREN through the Caren component");
    }
    expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments)`);
  });

  it("does not count another extension's ExtensionConfig as CAREN's gate", async () => {
    const fleet = cloneFixtures(baseline);
    fixture(fleet, "caren-ready").props.metadata = { name: "some-other-extension" };
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(3);
    expect(violations[0]!.message).toContain("the stack has no CAREN readiness gate");
  });
});
