import semver from "semver";
import { stackRule } from "../lib/define";
import { clustersIn, peerTenantVersions } from "../lib/fleet-resources";

/**
 * Tenants far behind the newest one pile up upgrade work and skew risk. In a sharded fleet the
 * newest tenant may be in another stack: its version comes from that stack's last update
 * (`peerTenantVersions`), and each stack reports only its own tenants.
 */
export const fleetVersionDrift = stackRule<{ maxMinorsBehind: number }>({
  name: "fleet-version-drift",
  description: "No tenant is more than N minors (config maxMinorsBehind) behind the newest tenant of the fleet.",
  enforcementLevel: "advisory",
  remediationSteps: "Plan an upgrade for the lagging tenant (`npm run plan`), or raise maxMinorsBehind in the stack's policy config.",
  config: { maxMinorsBehind: { type: "integer", minimum: 0, default: 2 } },
  validate: (resources, config, report) => {
    const clusters = clustersIn(resources).filter(({ cluster }) => semver.valid(cluster.version));
    const peers = [...peerTenantVersions(resources).values()].filter((version) => semver.valid(version));
    const newest = Math.max(...clusters.map(({ cluster }) => semver.minor(cluster.version)), ...peers.map((version) => semver.minor(version)));
    for (const { resource, cluster } of clusters) {
      const behind = newest - semver.minor(cluster.version);
      if (behind > config.maxMinorsBehind) {
        report(`${cluster.description}: ${cluster.version} is ${behind} minors behind the newest tenant (at most ${config.maxMinorsBehind}); plan its upgrade.`, resource.urn);
      }
    }
  },
});
