import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { tenantLabels } from "../../infra/model/tenant/tenant-cluster";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture, type FixtureResource } from "../testing/harness";
import { tenantHasHcloudCcm as rule } from "./tenant-has-hcloud-ccm";

const baseline = baselineFleet();
const ccmChart = catalog.hcloudCloudControllerManager.chart.chart;

/** The baseline after one change to it. */
function mutated(change: (fleet: FixtureResource[]) => void): FixtureResource[] {
  const fleet = cloneFixtures(baseline);
  change(fleet);
  return fleet;
}

describe("tenant-has-hcloud-ccm", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each([
    ["the CCM proxy is removed", (fleet: FixtureResource[]) => fleet.splice(fleet.indexOf(fixture(fleet, "ccm-payments")), 1)],
    ["the proxy selects another tenant", (fleet: FixtureResource[]) => (at(fixture(fleet, "ccm-payments").props, "spec", "clusterSelector", "matchLabels")[tenantLabels.tenant] = "analytics")],
    ["the proxy selects the CCM label with another value", (fleet: FixtureResource[]) => (at(fixture(fleet, "ccm-payments").props, "spec", "clusterSelector", "matchLabels")[tenantLabels.hcloudCcm] = "false")],
    ["the proxy moved to another namespace", (fleet: FixtureResource[]) => (at(fixture(fleet, "ccm-payments").props, "metadata").namespace = "tenant-analytics")],
    ["the proxy lost its namespace (default)", (fleet: FixtureResource[]) => delete at(fixture(fleet, "ccm-payments").props, "metadata").namespace],
    ["the proxy installs another chart", (fleet: FixtureResource[]) => (at(fixture(fleet, "ccm-payments").props, "spec").chartName = catalog.hcloudCsi.chart.chart)],
    ["the Cluster lost its CCM label", (fleet: FixtureResource[]) => Reflect.deleteProperty(at(fixture(fleet, "cluster-payments").props, "metadata", "labels"), tenantLabels.hcloudCcm)],
    ["the proxy selects by an expression that does not match", (fleet: FixtureResource[]) => (at(fixture(fleet, "ccm-payments").props, "spec").clusterSelector = { matchExpressions: [{ key: tenantLabels.tenant, operator: "NotIn", values: ["payments"] }] })],
  ])("reports the Cluster when %s", async (_label, change) => {
    const violations = await evaluate([rule], mutated(change));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({
      policy: "tenant-has-hcloud-ccm",
      level: "mandatory",
      urn: `urn:pulumi:test::capi-fleet::${resourceTypes.cluster}::cluster-payments`,
    });
    expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments) receives no hcloud CCM`);
    expect(violations[0]!.message).toContain(`no HelmChartProxy for ${ccmChart} in namespace tenant-payments selects its labels`);
    expect(violations[0]!.message).toContain("Keep the TenantCluster's CCM proxy and the Cluster's labels");
  });

  it("reads a missing namespace as Kubernetes' default on the proxy and on the Cluster alike", async () => {
    const fleet = mutated((resources) => {
      delete at(fixture(resources, "ccm-payments").props, "metadata").namespace;
      delete at(fixture(resources, "cluster-payments").props, "metadata").namespace;
    });
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("accepts a proxy that selects the Cluster by matchExpressions", async () => {
    const fleet = mutated((resources) => {
      at(fixture(resources, "ccm-payments").props, "spec").clusterSelector = {
        matchExpressions: [
          { key: tenantLabels.tenant, operator: "In", values: ["payments", "other"] },
          { key: tenantLabels.hcloudCcm, operator: "Exists" },
        ],
      };
    });
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
