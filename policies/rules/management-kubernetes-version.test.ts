import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture } from "../testing/harness";
import { managementKubernetesVersion as rule } from "./management-kubernetes-version";

const baseline = baselineFleet();

function withSettings(settings: Record<string, unknown>) {
  const fleet = cloneFixtures(baseline);
  fixture(fleet, "management").props.settings = settings;
  return fleet;
}

describe("management-kubernetes-version", () => {
  it("passes the baseline (hetzner mode, the catalog's k3s)", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("refuses a k3s minor outside the intersection", async () => {
    const violations = await evaluate([rule], withSettings({ mode: "hetzner", k3sVersion: "v1.33.5+k3s1" }));
    expect(violations).toEqual([expect.objectContaining({ policy: "management-kubernetes-version", level: "mandatory" })]);
    expect(violations[0]!.message).toContain("management.k3sVersion v1.33.5+k3s1 is outside 1.34–1.36");
    expect(violations[0]!.message).toContain("Cluster API v1.12.10 1.31–1.36");
    expect(violations[0]!.message).toMatch(/; run the management cluster on a minor in that range\.$/);
  });

  // The hcloud CCM supports 1.33–1.36 (hetznercloud/hcloud-cloud-controller-manager@v1.35.0:
  // docs/reference/version-policy.md), so in hetzner mode it no longer caps k3s at 1.35.
  it("accepts a 1.36 k3s in hetzner mode (the CCM supports 1.36) and refuses 1.37", async () => {
    expect(await evaluate([rule], withSettings({ mode: "hetzner", k3sVersion: "v1.36.1+k3s1" }))).toEqual([]);
    const [violation] = await evaluate([rule], withSettings({ mode: "hetzner", k3sVersion: "v1.37.0+k3s1" }));
    expect(violation?.message).toContain("management.k3sVersion v1.37.0+k3s1 is outside 1.34–1.36");
    expect(violation?.message).toContain(`hcloud-cloud-controller-manager ${catalog.hcloudCloudControllerManager.chart.version} 1.33–1.36`);
  });

  it("uses the existing-mode intersection (no hcloud CCM: 1.36 is fine, 1.30 is not)", async () => {
    expect(await evaluate([rule], withSettings({ mode: "existing", kubernetesVersion: "v1.36.1" }))).toEqual([]);
    const [violation] = await evaluate([rule], withSettings({ mode: "existing", kubernetesVersion: "v1.30.4" }));
    expect(violation?.message).toContain("management.kubernetesVersion v1.30.4 is outside 1.34–1.36");
    expect(violation?.message).not.toContain("hcloud-cloud-controller-manager");
  });

  it("refuses a version it cannot parse, in the form the mode expects", async () => {
    const [violation] = await evaluate([rule], withSettings({ mode: "hetzner", k3sVersion: "v1.34.6" }));
    expect(violation?.message).toContain('management.k3sVersion "v1.34.6" is not a k3s release (vX.Y.Z+k3sN)');
    const [existing] = await evaluate([rule], withSettings({ mode: "existing", kubernetesVersion: "1.35" }));
    expect(existing?.message).toContain('management.kubernetesVersion "1.35" is not a Kubernetes version (vX.Y.Z)');
    const [missing] = await evaluate([rule], withSettings({ mode: "existing" }));
    expect(missing?.message).toContain('management.kubernetesVersion "" is not a Kubernetes version');
  });
});
