import { describe, expect, it } from "vitest";
import { isUpgradeProblem, planTenantUpgrade, type TenantUpgrade } from "./tenant-upgrades";
import { formatUpgradeCampaign } from "./upgrade-report";

// What `npm run plan` prints, read back: the numbers must be the plan's (CAPI's chained upgrade:
// a control-plane step per minor, a worker rollout every 3rd minor and at the target;
// sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/upgrade_plan.go).

const list = ["v1.30.2", "v1.31.4", "v1.32.1", "v1.33.0", "v1.33.5", "v1.34.3"];

function plan(tenant: string, deployed: string | undefined, target: string): TenantUpgrade {
  const result = planTenantUpgrade(tenant, deployed, target, list);
  if (isUpgradeProblem(result)) throw new Error(result.reason);
  return result;
}

/** The numbers of one tenant's block: control-plane steps, worker rollouts, lower bound, one-per-minor count. */
function numbersOf(text: string, tenant: string) {
  const block = text.split("\n\n").find((part) => part.startsWith(`${tenant}: `)) ?? "";
  const number = (pattern: RegExp) => Number(pattern.exec(block)?.[1] ?? Number.NaN);
  return {
    controlPlaneSteps: number(/\((\d+) steps?, /),
    rollouts: number(/\((\d+) rollouts?;/),
    lowerBound: number(/lower bound (\d+)/),
    onePerMinor: number(/one per minor would be (\d+)/),
    block,
  };
}

describe("formatUpgradeCampaign", () => {
  it("prints each tenant's counts as its plan has them, in the singular and plural", () => {
    const far = plan("far", "v1.30.2", "v1.34.3"); // 4 minors: workers at 1.33 and at the target
    const patch = plan("patch", "v1.33.0", "v1.33.5"); // no minor crossed, still one rollout
    const text = formatUpgradeCampaign("prod", list, [far, patch]);
    expect(far.workerSteps).toHaveLength(2);
    expect(numbersOf(text, "far")).toMatchObject({ controlPlaneSteps: 4, rollouts: 2, lowerBound: 2, onePerMinor: 4 });
    expect(numbersOf(text, "far").block).toMatch(/\(4 steps, .*\(2 rollouts;/s);
    expect(numbersOf(text, "patch")).toMatchObject({ controlPlaneSteps: 1, rollouts: 1, lowerBound: 1, onePerMinor: 1 });
    expect(numbersOf(text, "patch").block).toMatch(/\(1 step, .*\(1 rollout;/s);
  });

  it("lists the steps in order and the campaign as CAPI runs it", () => {
    const far = plan("far", "v1.30.2", "v1.34.3");
    const { block } = numbersOf(formatUpgradeCampaign("prod", list, [far]), "far");
    const [, controlPlane = "", workers = "", order = ""] = block.split("\n").map((line) => line.replace(/^\s*[a-z ]+:\s+/, "").replace(/ \(.*$/, ""));
    expect(controlPlane.split(" → ")).toEqual(far.controlPlaneSteps);
    expect(workers.split(" → ")).toEqual(far.workerSteps);
    expect(order.split(", ")).toEqual(far.campaign.map((step) => `${step.component === "workers" ? "workers" : "control plane"} ${step.version}`));
    expect(order.split(", ").filter((step) => step.startsWith("workers "))).toHaveLength(far.workerSteps.length);
  });

  it("names the ClusterClass versions, and every tenant that cannot be upgraded, counted against all", () => {
    const text = formatUpgradeCampaign("prod", list, [
      planTenantUpgrade("a", "v1.34.3", "v1.30.2", list),
      plan("b", "v1.30.2", "v1.31.4"),
      planTenantUpgrade("c", "v1.31.4", "v1.35.0", list),
    ]);
    expect(text.split("\n")[0]).toContain(list.join(", "));
    expect(text.split("\n").at(-1)).toMatch(/^2 of 3 tenant\(s\) .*: a, c\.$/);
    expect(text.split("\n").filter((line) => line.endsWith(": IMPOSSIBLE")).map((line) => line.split(":")[0])).toEqual(["a", "c"]);
    // Each impossible upgrade is followed by why, as the planner says it.
    const lines = text.split("\n");
    const why = planTenantUpgrade("c", "v1.31.4", "v1.35.0", list);
    expect(lines[lines.findIndex((line) => line.startsWith("c: ")) + 1]?.trim()).toBe("reason" in why ? why.reason : "");
  });

  it("counts every tenant when all plans are possible", () => {
    const text = formatUpgradeCampaign("prod", list, [plan("a", undefined, "v1.31.4"), plan("b", "v1.31.4", "v1.31.4")]);
    expect(text.split("\n").at(-1)).toMatch(/^2 tenant\(s\)/);
    expect(text).not.toContain("IMPOSSIBLE");
    // Nothing to walk for a new or an unchanged tenant: one line each, no steps.
    for (const tenant of ["a", "b"]) expect(numbersOf(text, tenant).block.split("\n"), tenant).toHaveLength(1);
    expect(text).not.toMatch(/control plane:|workers:/);
  });
});
