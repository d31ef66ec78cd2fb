import semver from "semver";
import { computeUpgradePlan, maxWorkersMinorSkew, upgradeCampaign, UpgradePlanError, type UpgradeStep } from "../../infra/model/upgrade-plan";
import { stackRule } from "../lib/define";
import { classOf, clustersIn, deployedTenantVersions, tenantOf } from "../lib/fleet-resources";

/**
 * The most minors the workers trail the control plane at any point of a campaign that
 * starts with both at `from`.
 */
export function maxWorkerLag(from: string, campaign: readonly UpgradeStep[]): number {
  let controlPlane = semver.minor(from);
  let workers = controlPlane;
  let lag = 0;
  for (const step of campaign) {
    if (step.component === "control-plane") controlPlane = semver.minor(step.version);
    else workers = semver.minor(step.version);
    lag = Math.max(lag, controlPlane - workers);
  }
  return lag;
}

/**
 * During a chained upgrade the workers may trail the control plane by at most 3
 * minors (the kubelet skew policy, a constant in CAPI's planner). Checked on the plan CAPI
 * will compute; a ClusterClass that hands planning to an extension cannot be checked.
 */
export const tenantWorkerLag = stackRule({
  name: "tenant-worker-lag",
  description: `During an upgrade, a tenant's workers never trail its control plane by more than ${maxWorkersMinorSkew} minors (checked on CAPI's plan).`,
  enforcementLevel: "mandatory",
  remediationSteps: "Upgrade in smaller steps, or keep upgrade planning in CAPI (no generateUpgradePlanExtension on the ClusterClass).",
  validate: (resources, _config, report) => {
    const deployed = deployedTenantVersions(resources);
    for (const { resource, cluster } of clustersIn(resources)) {
      const from = deployed.get(tenantOf(cluster));
      if (from === undefined || from === cluster.version || !semver.valid(from) || !semver.valid(cluster.version)) continue;
      const clusterClass = classOf(resources, cluster);
      if (clusterClass?.upgradePlanExtension) {
        report(
          `${cluster.description}: ClusterClass ${clusterClass.namespace}/${clusterClass.name} leaves upgrade planning to the extension ${clusterClass.upgradePlanExtension}, ` +
            `so the workers' lag on ${from} → ${cluster.version} cannot be checked; remove spec.upgrade.external.generateUpgradePlanExtension.`,
          resource.urn,
        );
        continue;
      }
      const versions = { controlPlaneVersion: from, workersVersion: from, desiredVersion: cluster.version };
      try {
        const campaign = upgradeCampaign(versions, computeUpgradePlan({ ...versions, kubernetesVersions: clusterClass?.kubernetesVersions }));
        const lag = maxWorkerLag(from, campaign);
        if (lag > maxWorkersMinorSkew) {
          report(`${cluster.description}: on ${from} → ${cluster.version} the workers would trail the control plane by ${lag} minors (at most ${maxWorkersMinorSkew}); upgrade in smaller steps.`, resource.urn);
        }
      } catch (error) {
        if (!(error instanceof UpgradePlanError)) throw error;
        // No plan at all: tenant-upgrade-path reports why.
      }
    }
  },
});
