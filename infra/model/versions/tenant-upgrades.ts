import semver from "semver";
import { catalog } from "./catalog";
import { parseKubernetesVersion } from "./kubernetes-version";
import { computeUpgradePlan, minimumWorkerRollouts, upgradeCampaign, UpgradePlanError, type UpgradeStep } from "./upgrade-plan";

/**
 * Each tenant's upgrade campaign: from the version that runs (the stack's last outputs)
 * to the version the config asks for, as CAPI will walk it with the ClusterClass's
 * `kubernetesVersions`. Pure, so the program, `npm run plan` and the policy pack agree.
 */

/** What one tenant runs and where it is going. */
export interface TenantUpgrade {
  readonly tenant: string;
  /** Version the Cluster had after the last successful update; undefined before the first. */
  readonly deployed: string | undefined;
  readonly target: string;
  /** Control-plane versions in order (empty when nothing changes or on creation). */
  readonly controlPlaneSteps: readonly string[];
  /** Versions the workers roll to, in order. */
  readonly workerSteps: readonly string[];
  /** Control-plane and worker steps in the order CAPI runs them. */
  readonly campaign: readonly UpgradeStep[];
  /** How many minors the control plane crosses; upgrading everything one minor at a time would roll the workers this often. */
  readonly minorsCrossed: number;
}

/** A tenant whose requested version cannot be reached from what runs. */
export interface TenantUpgradeProblem {
  readonly tenant: string;
  readonly deployed: string;
  readonly target: string;
  readonly reason: string;
}

/** The shape of the stack output `tenantVersions`. */
export type TenantVersionsOutput = Record<
  string,
  { deployed: string | null; target: string; controlPlaneSteps: string[]; workerSteps: string[] }
>;

/**
 * Plans one tenant. On creation there is nothing to walk: CAPI creates the cluster at the
 * target. Assumes the previous upgrade has finished (workers at the deployed version);
 * CAPI's Cluster webhook refuses a new target until it has.
 */
export function planTenantUpgrade(
  tenant: string,
  deployed: string | undefined,
  target: string,
  kubernetesVersions: readonly string[] = catalog.tenantKubernetesVersions,
): TenantUpgrade | TenantUpgradeProblem {
  // An unchanged cluster is planned too: CAPI's Cluster webhook refuses every update of a Cluster
  // whose version the ClusterClass does not list, changed or not (sigs.k8s.io/cluster-api@v1.12.10:
  // internal/webhooks/cluster.go, ValidateClusterForClusterClass); the plan is then empty.
  if (deployed === undefined) {
    return { tenant, deployed, target, controlPlaneSteps: [], workerSteps: [], campaign: [], minorsCrossed: 0 };
  }
  if (!parseKubernetesVersion(deployed)) {
    return { tenant, deployed, target, reason: `the deployed version ${JSON.stringify(deployed)} recorded in the stack outputs is not a Kubernetes version` };
  }
  try {
    const versions = { controlPlaneVersion: deployed, workersVersion: deployed, desiredVersion: target };
    const plan = computeUpgradePlan({ ...versions, kubernetesVersions });
    return {
      tenant,
      deployed,
      target,
      controlPlaneSteps: plan.controlPlaneUpgrades,
      workerSteps: plan.workersUpgrades,
      campaign: upgradeCampaign(versions, plan),
      minorsCrossed: semver.minor(target) - semver.minor(deployed),
    };
  } catch (error) {
    if (error instanceof UpgradePlanError) {
      return { tenant, deployed, target, reason: error.message };
    }
    throw error;
  }
}

/** True for a problem rather than a plan. */
export function isUpgradeProblem(result: TenantUpgrade | TenantUpgradeProblem): result is TenantUpgradeProblem {
  return "reason" in result;
}

/** Lower bound of worker rollouts for a plan (CAPI's default plan meets it). */
export function workerRolloutsLowerBound(upgrade: TenantUpgrade): number {
  return upgrade.deployed === undefined ? 0 : minimumWorkerRollouts(upgrade.deployed, upgrade.target);
}

/** The `tenantVersions` stack output for a set of plans. */
export function tenantVersionsOutput(upgrades: readonly TenantUpgrade[]): TenantVersionsOutput {
  return Object.fromEntries(
    upgrades.map((upgrade) => [
      upgrade.tenant,
      {
        deployed: upgrade.deployed ?? null,
        target: upgrade.target,
        controlPlaneSteps: [...upgrade.controlPlaneSteps],
        workerSteps: [...upgrade.workerSteps],
      },
    ]),
  );
}

/**
 * The deployed versions in a previous `tenantVersions` output: each tenant's `target`,
 * which its Cluster was set to when that update succeeded. Malformed entries are skipped
 * (a tenant then plans like a new one) and reported.
 */
export function deployedVersionsFrom(output: unknown): { versions: Map<string, string>; ignored: string[] } {
  const versions = new Map<string, string>();
  const ignored: string[] = [];
  if (output === undefined || output === null) {
    return { versions, ignored };
  }
  if (typeof output !== "object" || Array.isArray(output)) {
    return { versions, ignored: ["(the whole output is not a mapping)"] };
  }
  for (const [tenant, entry] of Object.entries(output as Record<string, unknown>)) {
    // A primitive has no `target`; only null and undefined need the guard.
    const target = (entry as { target?: unknown } | null | undefined)?.target;
    if (typeof target === "string" && parseKubernetesVersion(target)) {
      versions.set(tenant, target);
    } else {
      ignored.push(tenant);
    }
  }
  return { versions, ignored };
}
