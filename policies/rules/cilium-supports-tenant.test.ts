import { describe, expect, it } from "vitest";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { ciliumSupportsTenant as rule } from "./cilium-supports-tenant";

const baseline = baselineFleet();

describe("cilium-supports-tenant", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("refuses a tenant on a minor the shipped Cilium does not support", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-payments").props, "spec", "topology").version = "v1.36.1";
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([expect.objectContaining({ policy: "cilium-supports-tenant", level: "mandatory" })]);
    expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments): Cilium 1.19.4 (the fleet's, installed by CAREN v0.50.0) supports Kubernetes 1.32–1.35, not 1.36`);
    // The remedy: the tenant key to change.
    expect(violations[0]!.message).toMatch(/; keep tenants\[\]\.kubernetesVersion in that range\.$/);
  });

  it("does not apply when the tenant asks CAREN for no Cilium", async () => {
    const fleet = cloneFixtures(baseline);
    const topology = at(fixture(fleet, "cluster-payments").props, "spec", "topology");
    topology.version = "v1.36.1";
    topology.variables = (topology.variables as { name: string }[]).filter((variable) => variable.name !== "clusterConfig");
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
