import { maxWorkersMinorSkew } from "../../infra/model/versions/upgrade-plan";
import { stackRule } from "../lib/define";
import { classOf, clustersIn, deployedTenantVersions, tenantOf } from "../lib/fleet-resources";

/**
 * During a chained upgrade the workers may trail the control plane by at most 3 minors (the
 * kubelet skew policy, a constant in CAPI's planner). CAPI's own plan never lets them trail
 * further (its workers plan steps at most 3 minors, and the workers catch up whenever the control
 * plane reaches the next of those steps: the lag is min(minors crossed, 3), as the property test
 * beside this rule shows); a ClusterClass that hands planning to a
 * GenerateUpgradePlan extension gives up that guarantee, and the lag cannot be checked.
 */
export const tenantWorkerLag = stackRule({
  name: "tenant-worker-lag",
  description: `A tenant's upgrade is planned by CAPI, whose plan never lets the workers trail the control plane by more than ${maxWorkersMinorSkew} minors; a ClusterClass that hands planning to an extension is refused.`,
  enforcementLevel: "mandatory",
  remediationSteps: "Keep upgrade planning in CAPI (no generateUpgradePlanExtension on the ClusterClass).",
  validate: (resources, _config, report) => {
    const deployed = deployedTenantVersions(resources);
    for (const { resource, cluster } of clustersIn(resources)) {
      const from = deployed.get(tenantOf(cluster));
      // Only an upgrade in flight is planned.
      if (from === undefined || from === cluster.version) continue;
      const clusterClass = classOf(resources, cluster);
      if (clusterClass?.upgradePlanExtension) {
        report(
          `${cluster.description}: ClusterClass ${clusterClass.namespace}/${clusterClass.name} leaves upgrade planning to the extension ${clusterClass.upgradePlanExtension}, ` +
            `so the workers' lag on ${from} → ${cluster.version} cannot be checked; remove spec.upgrade.external.generateUpgradePlanExtension.`,
          resource.urn,
        );
      }
    }
  },
});
