import * as pulumi from "@pulumi/pulumi";
import type { FleetConfig } from "./config";
import { FleetConfigError, type ConfigProblem } from "./model/validate-fleet-config";
import { deployedVersionsFrom, isUpgradeProblem, planTenantUpgrade, tenantVersionsOutputName, type TenantUpgrade } from "./model/tenant-upgrades";

export { tenantVersionsOutputName } from "./model/tenant-upgrades";

/**
 * The tenant versions this stack deployed last time, from its own last outputs (a
 * StackReference to itself; a new stack has none, so every tenant plans as a creation).
 * Works offline: the outputs come from the stack's backend, not from the clusters.
 */
export async function readDeployedTenantVersions(): Promise<Map<string, string>> {
  const self = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
  let previous: unknown;
  try {
    const details = await new pulumi.StackReference("deployed-state", { name: self }).getOutputDetails(tenantVersionsOutputName);
    previous = details.value ?? details.secretValue;
  } catch (error) {
    throw new pulumi.RunError(
      `Could not read this stack's last outputs (${self}) to learn which Kubernetes version each tenant runs: ${String(error)}`,
    );
  }
  const { versions, ignored } = deployedVersionsFrom(previous);
  if (ignored.length > 0) {
    void pulumi.log.warn(`Ignoring malformed ${tenantVersionsOutputName} entries from the last update: ${ignored.join(", ")}; those tenants plan as new clusters.`);
  }
  return versions;
}

/**
 * Plans every tenant's upgrade from what runs, or stops the program (nothing registered)
 * naming each tenant whose target cannot be reached, e.g. a downgrade.
 */
export function planTenantUpgradesOrStop(config: FleetConfig, deployed: ReadonlyMap<string, string>): TenantUpgrade[] {
  const problems: ConfigProblem[] = [];
  const upgrades: TenantUpgrade[] = [];
  config.tenants.forEach((tenant, index) => {
    const result = planTenantUpgrade(tenant.name, deployed.get(tenant.name), tenant.kubernetesVersion);
    if (isUpgradeProblem(result)) {
      problems.push({
        path: `tenants[${index}].kubernetesVersion`,
        message: `${result.target} cannot be reached from the deployed ${result.deployed}: ${result.reason}`,
      });
    } else {
      upgrades.push(result);
    }
  });
  if (problems.length > 0) {
    throw new pulumi.RunError(new FleetConfigError(config.stack, problems).message);
  }
  return upgrades;
}
