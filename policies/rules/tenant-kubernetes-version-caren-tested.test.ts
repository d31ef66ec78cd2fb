import { describe, expect, it } from "vitest";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { tenantKubernetesVersionCarenTested as rule } from "./tenant-kubernetes-version-caren-tested";

const baseline = baselineFleet();

describe("tenant-kubernetes-version-caren-tested", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("advises against a minor CAREN does not test (1.36)", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-edge").props, "spec", "topology").version = "v1.36.1";
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([
      expect.objectContaining({ policy: "tenant-kubernetes-version-caren-tested", level: "advisory" }),
    ]);
    expect(violations[0]!.message).toContain('tenant "edge" (Cluster tenant-edge/edge): Kubernetes 1.36 is not among the minors CAREN v0.50.0 is tested on (1.33, 1.34, 1.35)');
  });

  it("accepts another patch of a tested minor", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "cluster-edge").props, "spec", "topology").version = "v1.33.2";
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
