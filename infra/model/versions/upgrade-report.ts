import { isUpgradeProblem, workerRolloutsLowerBound, type TenantUpgrade, type TenantUpgradeProblem } from "./tenant-upgrades";

/**
 * The text `npm run plan` prints: per tenant, from → to, the control-plane steps, the
 * worker steps, and how many worker rollouts that is compared with upgrading everything
 * one minor at a time.
 */
export function formatUpgradeCampaign(
  stack: string,
  kubernetesVersions: readonly string[],
  results: readonly (TenantUpgrade | TenantUpgradeProblem)[],
): string {
  const lines = [`Upgrade campaign for stack ${stack} (ClusterClass kubernetesVersions: ${kubernetesVersions.join(", ")})`, ""];
  for (const result of results) {
    lines.push(...describeTenant(result), "");
  }
  const problems = results.filter(isUpgradeProblem);
  lines.push(
    problems.length === 0
      ? `${results.length} tenant(s): every plan is possible.`
      : `${problems.length} of ${results.length} tenant(s) cannot be upgraded as configured: ${problems.map((p) => p.tenant).join(", ")}.`,
  );
  return lines.join("\n");
}

function describeTenant(result: TenantUpgrade | TenantUpgradeProblem): string[] {
  if (isUpgradeProblem(result)) {
    return [`${result.tenant}: ${result.deployed} → ${result.target}: IMPOSSIBLE`, `  ${result.reason}`];
  }
  if (result.deployed === undefined) {
    return [`${result.tenant}: not deployed yet → created at ${result.target} (nothing to upgrade)`];
  }
  if (result.deployed === result.target) {
    return [`${result.tenant}: ${result.target}, unchanged`];
  }
  const rollouts = result.workerSteps.length;
  const lowerBound = workerRolloutsLowerBound(result);
  const onePerMinor = Math.max(result.minorsCrossed, 1);
  return [
    `${result.tenant}: ${result.deployed} → ${result.target}`,
    `  control plane: ${result.controlPlaneSteps.join(" → ")} (${count(result.controlPlaneSteps.length, "step")}, never skipping a minor)`,
    `  workers:       ${result.workerSteps.join(" → ")} (${count(rollouts, "rollout")}; lower bound ${lowerBound}; one per minor would be ${onePerMinor})`,
    `  order:         ${result.campaign.map((step) => `${step.component === "control-plane" ? "control plane" : "workers"} ${step.version}`).join(", ")}`,
  ];
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
