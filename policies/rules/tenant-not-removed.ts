import { stackRule } from "../lib/define";
import { clustersIn, deployedTenantVersions, tenantOf } from "../lib/fleet-resources";

interface Config {
  replaceableTenants: string[];
}

/**
 * A tenant that runs (the DeployedState component names it) but whose Cluster the program no
 * longer declares is deleted by this update, with everything on it. Renaming a tenant looks
 * exactly like that: the new name is a new cluster, the old one goes. Deleting on purpose is an
 * explicit, reviewed exemption. (A new namespace for the same tenant is refused by the program
 * itself: infra/model/tenant/tenant-immutables.ts.)
 */
export const tenantNotRemoved = stackRule<Config>({
  name: "tenant-not-removed",
  description: "A tenant that runs is never deleted, or replaced by a rename, unless the policy config lists it as replaceable.",
  enforcementLevel: "mandatory",
  remediationSteps:
    'Put the tenant back under its old name; to delete it on purpose, list it in "replaceableTenants" of this rule in policies/config/<stack>.json for that one change.',
  config: {
    replaceableTenants: { type: "array", items: { type: "string" }, default: [] },
  },
  validate: (resources, config, report) => {
    const declared = new Set(clustersIn(resources).map(({ cluster }) => tenantOf(cluster)));
    for (const [tenant, version] of deployedTenantVersions(resources)) {
      if (!declared.has(tenant) && !config.replaceableTenants.includes(tenant)) {
        report(
          `tenant ${JSON.stringify(tenant)} runs Kubernetes ${version}, but the program no longer declares its Cluster: this update deletes the cluster and everything on it ` +
            `(a renamed tenant is a new cluster). Restore the tenant, or list ${JSON.stringify(tenant)} in replaceableTenants to delete it.`,
        );
      }
    }
  },
});
