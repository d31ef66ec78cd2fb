import semver from "semver";
import { catalog } from "../../infra/model/versions/catalog";
import { computeUpgradePlan, UpgradePlanError } from "../../infra/model/versions/upgrade-plan";
import { stackRule } from "../lib/define";
import { classOf, clustersIn, deployedTenantVersions, installedVersions, tenantOf } from "../lib/fleet-resources";

/** True for a version semver reads (undefined is none). */
const isVersion = (version: string | undefined): version is string => semver.valid(version) !== null;

/**
 * From what runs (the stack's last `tenantVersions` output) to the target, never
 * down, and across several minors only when CAPI can chain the upgrade.
 */
export const tenantUpgradePath = stackRule({
  name: "tenant-upgrade-path",
  description:
    "A tenant is never downgraded, and an upgrade across more than one minor needs chained upgrades: CAPI ≥ the first release with them and every intermediate minor in the ClusterClass spec.kubernetesVersions.",
  enforcementLevel: "mandatory",
  remediationSteps: "Keep tenants[].kubernetesVersion at or above the deployed version; run `npm run plan -- --stack <stack>` to see the path CAPI will take.",
  validate: (resources, _config, report) => {
    const deployed = deployedTenantVersions(resources);
    const clusterApi = installedVersions(resources).clusterApi;
    for (const { resource, cluster } of clustersIn(resources)) {
      const from = deployed.get(tenantOf(cluster));
      // A new tenant, or not a version (config validation refuses those). An unchanged version goes on: CAPI plans nothing for it.
      if (!isVersion(from) || !isVersion(cluster.version)) continue;
      const minorsCrossed = semver.minor(cluster.version) - semver.minor(from);
      const capi = semver.coerce(clusterApi); // null when no core provider declares a version
      if (minorsCrossed > 1 && capi && semver.lt(capi, catalog.clusterApi.chainedUpgradesSince)) {
        report(
          `${cluster.description}: ${from} → ${cluster.version} crosses ${minorsCrossed} minors, but Cluster API ${clusterApi} has no chained upgrades (since ${catalog.clusterApi.chainedUpgradesSince}); ` +
            "raise tenants[].kubernetesVersion one minor per update.",
          resource.urn,
        );
        continue;
      }
      try {
        computeUpgradePlan({
          controlPlaneVersion: from,
          workersVersion: from,
          desiredVersion: cluster.version,
          kubernetesVersions: classOf(resources, cluster)?.kubernetesVersions,
        });
      } catch (error) {
        if (!(error instanceof UpgradePlanError)) throw error;
        report(`${cluster.description}: cannot go from the deployed ${from} to ${cluster.version}: ${error.message}; set tenants[].kubernetesVersion to ${from} or a reachable newer version.`, resource.urn);
      }
    }
  },
});
