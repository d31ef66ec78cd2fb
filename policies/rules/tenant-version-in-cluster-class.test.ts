import { describe, expect, it } from "vitest";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { tenantVersionInClusterClass as rule } from "./tenant-version-in-cluster-class";

const baseline = baselineFleet();
const clusterUrn = "urn:pulumi:test::capi-fleet::kubernetes:cluster.x-k8s.io/v1beta2:Cluster::cluster-analytics";

describe("tenant-version-in-cluster-class", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("refuses a version the class does not list, on that Cluster", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-analytics").props, "spec", "topology").version = "v1.35.2";
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([expect.objectContaining({ policy: "tenant-version-in-cluster-class", level: "mandatory", urn: clusterUrn })]);
    expect(violations[0]!.message).toContain(
      'tenant "analytics" (Cluster tenant-analytics/analytics): spec.topology.version v1.35.2 is not in ClusterClass capi-fleet-system/hetzner-caren spec.kubernetesVersions (v1.33.10, v1.34.6, v1.35.3)',
    );
    expect(violations[0]!.message).toContain("set tenants[].kubernetesVersion to a listed version");
  });

  it("refuses a class without kubernetesVersions", async () => {
    const fleet = cloneFixtures(baseline);
    delete at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions;
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(3);
    expect(violations[0]!.message).toContain("lists no spec.kubernetesVersions, so chained upgrades are off");
  });

  it("refuses a classRef to a class the stack does not declare", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-edge").props, "spec", "topology", "classRef").name = "hetzner-caren-typo";
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.message).toContain("its ClusterClass capi-fleet-system/hetzner-caren-typo is not declared in this stack");
  });
});
