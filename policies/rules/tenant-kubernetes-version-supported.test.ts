import { describe, expect, it } from "vitest";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { tenantKubernetesVersionSupported as rule } from "./tenant-kubernetes-version-supported";

const baseline = baselineFleet();

function withVersion(version: string) {
  const fleet = cloneFixtures(baseline);
  at(fixture(fleet, "cluster-payments").props, "spec", "topology").version = version;
  return fleet;
}

describe("tenant-kubernetes-version-supported", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each(["v1.31.14", "v1.37.0", "v2.0.0"])("refuses %s, outside CAPI ∩ CAPH", async (version) => {
    const violations = await evaluate([rule], withVersion(version));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ policy: "tenant-kubernetes-version-supported", level: "mandatory" });
    expect(violations[0]!.message).toContain(`tenant "payments" (Cluster tenant-payments/payments): spec.topology.version ${version} is outside 1.32–1.36`);
    expect(violations[0]!.message).toContain("Cluster API v1.12.10 1.29–1.36, CAPH v1.1.8 1.32–1.36");
    expect(violations[0]!.message).toContain("set tenants[].kubernetesVersion to one of v1.33.10, v1.34.6, v1.35.3");
  });

  it.each(["1.34.6", "v1.34", "latest"])("refuses %s, not a version", async (version) => {
    const [violation] = await evaluate([rule], withVersion(version));
    expect(violation?.message).toContain(`spec.topology.version ${JSON.stringify(version)} is not a Kubernetes version`);
  });

  it("accepts the range edges even where other rules object (1.32 and 1.36)", async () => {
    expect(await evaluate([rule], withVersion("v1.32.9"))).toEqual([]);
    expect(await evaluate([rule], withVersion("v1.36.1"))).toEqual([]);
  });
});
