import { describe, expect, it } from "vitest";
import { catalog } from "./catalog";
import {
  deployedVersionsFrom,
  isUpgradeProblem,
  planTenantUpgrade,
  tenantVersionsOutput,
  workerRolloutsLowerBound,
  type TenantUpgrade,
} from "./tenant-upgrades";
import { formatUpgradeCampaign } from "./upgrade-report";

const [oldest, middle, newest] = catalog.tenantKubernetesVersions;

function plan(deployed: string | undefined, target: string): TenantUpgrade {
  const result = planTenantUpgrade("t", deployed, target);
  if (isUpgradeProblem(result)) throw new Error(result.reason);
  return result;
}

describe("planTenantUpgrade", () => {
  it.each([
    ["a new cluster is created at its target", undefined, newest, [], []],
    ["an unchanged cluster does nothing", middle, middle, [], []],
    ["one minor: one control-plane step, one worker rollout", oldest, middle, [middle], [middle]],
    ["two minors: the control plane walks both, the workers roll once", oldest, newest, [middle, newest], [newest]],
  ])("%s", (_case, deployed, target, controlPlane, workers) => {
    const result = plan(deployed, target);
    expect(result.controlPlaneSteps).toEqual(controlPlane);
    expect(result.workerSteps).toEqual(workers);
  });

  it("orders a two-minor campaign as CAPI runs it", () => {
    expect(plan(oldest, newest).campaign).toEqual([
      { component: "control-plane", version: middle },
      { component: "control-plane", version: newest },
      { component: "workers", version: newest },
    ]);
    expect(workerRolloutsLowerBound(plan(oldest, newest))).toBe(1);
    expect(plan(oldest, newest).minorsCrossed).toBe(2);
  });

  it("refuses a downgrade with CAPI's reason", () => {
    const result = planTenantUpgrade("t", newest, oldest);
    expect(isUpgradeProblem(result) && result.reason).toContain(`cannot downgrade the control plane from ${newest} to ${oldest}`);
  });

  it("refuses an unchanged cluster at a version the ClusterClass no longer lists, as CAPI's Cluster webhook does", () => {
    // sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/cluster.go, ValidateClusterForClusterClass runs on every update.
    const unlisted = planTenantUpgrade("t", oldest, oldest, [middle, newest]);
    expect(isUpgradeProblem(unlisted) && unlisted.reason).toContain(`${oldest} is not listed`);
    expect(planTenantUpgrade("t", oldest, oldest, [oldest, middle])).toMatchObject({ controlPlaneSteps: [], workerSteps: [], campaign: [], minorsCrossed: 0 });
  });

  it("refuses a deployed version that is not a Kubernetes version", () => {
    const result = planTenantUpgrade("t", "latest", newest);
    expect(isUpgradeProblem(result) && result.reason).toContain("is not a Kubernetes version");
  });
});

describe("the tenantVersions output", () => {
  it("round-trips: the next run reads each tenant's target back as deployed", () => {
    const output = tenantVersionsOutput([{ ...plan(oldest, newest), tenant: "a" }, { ...plan(undefined, middle), tenant: "b" }]);
    expect(output).toEqual({
      a: { deployed: oldest, target: newest, controlPlaneSteps: [middle, newest], workerSteps: [newest] },
      b: { deployed: null, target: middle, controlPlaneSteps: [], workerSteps: [] },
    });
    expect(deployedVersionsFrom(JSON.parse(JSON.stringify(output)))).toEqual({ versions: new Map([["a", newest], ["b", middle]]), ignored: [] });
  });

  it("skips malformed entries and says which", () => {
    expect(deployedVersionsFrom({ a: { target: "latest" }, b: "x", c: { target: oldest }, d: null, e: 3, f: [oldest] })).toEqual({
      versions: new Map([["c", oldest]]),
      ignored: ["a", "b", "d", "e", "f"],
    });
  });

  it("reads no output (a new stack) as nothing deployed and nothing ignored", () => {
    expect(deployedVersionsFrom(undefined)).toEqual({ versions: new Map(), ignored: [] });
    expect(deployedVersionsFrom(null)).toEqual({ versions: new Map(), ignored: [] });
  });

  it("reports an output that is not a mapping as a whole, not entry by entry", () => {
    for (const output of [[{ target: oldest }], "tenants", 3]) {
      const { versions, ignored } = deployedVersionsFrom(output);
      expect(versions.size, JSON.stringify(output)).toBe(0);
      expect(ignored, JSON.stringify(output)).toHaveLength(1);
      expect(ignored[0], JSON.stringify(output)).not.toMatch(/^\d+$/);
      expect(ignored[0]!.length, JSON.stringify(output)).toBeGreaterThan(0);
    }
  });
});

describe("formatUpgradeCampaign", () => {
  it("prints from → to, the steps and the worker rollouts compared with one per minor", () => {
    const text = formatUpgradeCampaign("prod", catalog.tenantKubernetesVersions, [
      { ...plan(oldest, newest), tenant: "analytics" },
      { ...plan(undefined, middle), tenant: "payments" },
      { ...plan(middle, middle), tenant: "edge" },
    ]);
    expect(text).toContain(`analytics: ${oldest} → ${newest}`);
    expect(text).toContain(`control plane: ${middle} → ${newest} (2 steps, never skipping a minor)`);
    expect(text).toContain(`workers:       ${newest} (1 rollout; lower bound 1; one per minor would be 2)`);
    expect(text).toContain(`order:         control plane ${middle}, control plane ${newest}, workers ${newest}`);
    expect(text).toContain(`payments: not deployed yet → created at ${middle}`);
    expect(text).toContain(`edge: ${middle}, unchanged`);
    expect(text).toContain("every plan is possible");
  });

  it("marks an impossible plan and names the tenant", () => {
    const text = formatUpgradeCampaign("prod", catalog.tenantKubernetesVersions, [planTenantUpgrade("payments", newest, oldest)]);
    expect(text).toContain(`payments: ${newest} → ${oldest}: IMPOSSIBLE`);
    expect(text).toContain("cannot be upgraded as configured: payments");
  });
});
