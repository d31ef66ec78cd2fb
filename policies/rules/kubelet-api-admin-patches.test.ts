import { describe, expect, it } from "vitest";
import { baselineFleet, shardFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { kubeletApiAdminPatches as rule } from "./kubelet-api-admin-patches";
import { componentOutputs } from "../../infra/model/contract/outputs";

const baseline = baselineFleet();

/** The imported props of a platform fixture in a shard stack (what the management stack declared). */
function imported(fleet: ReturnType<typeof shardFleet>, name: string): Record<string, unknown> {
  const entries = fixture(fleet, "management").outputs![componentOutputs.imported] as { urn: string; props: Record<string, unknown> }[];
  return entries.find((entry) => entry.urn.endsWith(`::${name}`))!.props;
}


function fleetWith(clusterApi: string, tenantVersion: string) {
  const fleet = cloneFixtures(baseline);
  at(fixture(fleet, "core-provider").props, "spec").version = clusterApi;
  at(fixture(fleet, "cluster-payments").props, "spec", "topology").version = tenantVersion;
  return fleet;
}

describe("kubelet-api-admin-patches", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each([
    ["v1.12.7", "v1.34.8", 1],
    ["v1.12.7", "v1.34.7", 0],
    ["v1.12.8", "v1.34.8", 0],
    ["v1.13.1", "v1.33.12", 1],
    ["v1.13.2", "v1.33.12", 0],
    ["v1.11.10", "v1.35.5", 1],
    ["v1.11.11", "v1.35.5", 0],
    ["v1.10.9", "v1.36.1", 1],
    ["v1.14.0", "v1.36.1", 0],
  ])("Cluster API %s with a tenant on %s: %i violation(s)", async (clusterApi, version, count) => {
    const violations = await evaluate([rule], fleetWith(clusterApi, version));
    expect(violations).toHaveLength(count);
    if (count > 0) {
      expect(violations[0]).toMatchObject({ policy: "kubelet-api-admin-patches", level: "mandatory" });
      expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments): Kubernetes ${version} needs the ClusterRole system:kubelet-api-admin, which Cluster API ${clusterApi} does not create`);
    }
  });

  it("also checks the ClusterClass list", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "core-provider").props, "spec").version = "v1.12.7";
    at(fixture(fleet, "cluster-class").props, "spec").kubernetesVersions = ["v1.33.10", "v1.34.8", "v1.34.9", "v1.35.3"];
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.message).toContain("ClusterClass capi-fleet-system/hetzner-caren: spec.kubernetesVersions v1.34.8, v1.34.9 need Cluster API ≥ v1.11.11 (1.11 line), v1.12.8 (1.12 line), v1.13.2 (1.13 line), found v1.12.7");
  });

  it("in a shard stack: judges the shard's tenants against the imported Cluster API, and leaves the imported class to the management stack", async () => {
    const fleet = shardFleet();
    at(imported(fleet, "core-provider"), "spec").version = "v1.12.7";
    at(imported(fleet, "cluster-class"), "spec").kubernetesVersions = ["v1.33.10", "v1.34.8", "v1.34.9", "v1.35.3"];
    at(fixture(fleet, "cluster-payments").props, "spec", "topology").version = "v1.34.8";
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining('tenant "payments" (Cluster tenant-payments/payments): Kubernetes v1.34.8 needs the ClusterRole system:kubelet-api-admin, which Cluster API v1.12.7 does not create')]);
  });
});
