import * as pulumi from "@pulumi/pulumi";
import type { FleetConfig } from "./model/stack/validate-fleet-config";
import { FleetConfigError, type ConfigProblem } from "./model/config/stack-config";
import { deployedImmutablesFrom, immutableChanges, type TenantImmutables } from "./model/tenant/tenant-immutables";
import { deployedVersionsFrom, isUpgradeProblem, planTenantUpgrade, type TenantUpgrade } from "./model/versions/tenant-upgrades";
import { deployedK3sVersionFrom, k3sUpgradeProblem } from "./model/management/k3s-upgrades";
import { deployedServerTypesFrom, serverTypeChangeProblem } from "./model/management/management-server-type";
import { stackOutputs } from "./model/contract/outputs";


/** What the last successful update of this stack deployed, per tenant. */
export interface DeployedState {
  /** The Kubernetes version each tenant's Cluster was set to. */
  readonly versions: Map<string, string>;
  /** The settings of each tenant that cannot change once its cluster exists (absent for tenants deployed before they were recorded). */
  readonly immutables: Map<string, TenantImmutables>;
  /** The k3s release the management servers' Plan was set to (undefined before the first update that recorded it). */
  readonly managementK3sVersion: string | undefined;
  /** Each management server's type, from its state in the last update (undefined before the first update that recorded it). */
  readonly managementServerTypes: ReadonlyMap<string, string> | undefined;
  /** The etcd snapshot drop-in and the servers of the last update, as exported (checked by etcdSnapshotDropinDrift). */
  readonly etcdSnapshotConfig: unknown;
  readonly managementServers: unknown;
}

/**
 * What this stack deployed last time, from its own last outputs (a StackReference to itself;
 * a new stack has none, so every tenant plans as a creation). Works offline: the outputs
 * come from the stack's backend, not from the clusters.
 */
export async function readDeployedState(): Promise<DeployedState> {
  const self = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
  const previous: Record<string, unknown> = {};
  try {
    const reference = new pulumi.StackReference("deployed-state", { name: self });
    for (const name of [stackOutputs.tenantVersions, stackOutputs.tenantImmutables, stackOutputs.managementK3sVersion, stackOutputs.managementEtcdSnapshotConfig, stackOutputs.managementServers, stackOutputs.managementServerTypes]) {
      const details = await reference.getOutputDetails(name);
      previous[name] = details.value ?? details.secretValue;
    }
  } catch (error) {
    throw new pulumi.RunError(
      `Could not read this stack's last outputs (${self}) to learn what each tenant runs: ${String(error)}`,
    );
  }
  const { versions, ignored } = deployedVersionsFrom(previous[stackOutputs.tenantVersions]);
  if (ignored.length > 0) {
    void pulumi.log.warn(`Ignoring malformed ${stackOutputs.tenantVersions} entries from the last update: ${ignored.join(", ")}; those tenants plan as new clusters.`);
  }
  const { immutables, ignored: ignoredImmutables } = deployedImmutablesFrom(previous[stackOutputs.tenantImmutables]);
  if (ignoredImmutables.length > 0) {
    void pulumi.log.warn(
      `Ignoring malformed ${stackOutputs.tenantImmutables} entries from the last update: ${ignoredImmutables.join(", ")}; changes to their network, first region and kube-proxy mode are not checked this time.`,
    );
  }
  const k3s = deployedK3sVersionFrom(previous[stackOutputs.managementK3sVersion]);
  if (k3s.ignored) {
    void pulumi.log.warn(`Ignoring the malformed ${stackOutputs.managementK3sVersion} output of the last update; the management k3s upgrade path is not checked this time.`);
  }
  const serverTypes = deployedServerTypesFrom(previous[stackOutputs.managementServerTypes]);
  if (serverTypes.ignored) {
    void pulumi.log.warn(`Ignoring the malformed ${stackOutputs.managementServerTypes} output of the last update; a management.serverType change is not checked this time.`);
  }
  return {
    versions,
    immutables,
    managementK3sVersion: k3s.version,
    managementServerTypes: serverTypes.serverTypes,
    etcdSnapshotConfig: previous[stackOutputs.managementEtcdSnapshotConfig],
    managementServers: previous.managementServers,
  };
}

/** The tenant versions this stack deployed last time (see {@link readDeployedState}). */
export async function readDeployedTenantVersions(): Promise<Map<string, string>> {
  return (await readDeployedState()).versions;
}

/**
 * Plans every tenant's upgrade from what runs, or stops the program (nothing registered)
 * naming each tenant whose target cannot be reached, e.g. a downgrade, and each setting that
 * differs from what was deployed although it cannot change (`deployedImmutables`); likewise a
 * `management.k3sVersion` the servers cannot reach from `deployedK3sVersion` in one step, and a
 * `management.serverType` other than the one the servers run (`deployedServerTypes`).
 */
export function planTenantUpgradesOrStop(
  /** A shard stack's config has no management cluster: only its tenants are planned. */
  config: Pick<FleetConfig, "stack" | "tenants"> & { management?: FleetConfig["management"] },
  deployed: ReadonlyMap<string, string>,
  deployedImmutables: ReadonlyMap<string, TenantImmutables> = new Map(),
  deployedK3sVersion?: string,
  deployedServerTypes?: ReadonlyMap<string, string>,
): TenantUpgrade[] {
  const problems: ConfigProblem[] = [...immutableChanges(config.tenants, deployedImmutables)];
  if (config.management?.mode === "hetzner") {
    const k3sProblem = k3sUpgradeProblem(deployedK3sVersion, config.management.k3sVersion);
    if (k3sProblem) problems.push({ path: "management.k3sVersion", message: k3sProblem });
    const serverTypeProblem = serverTypeChangeProblem(deployedServerTypes, config.management.serverType);
    if (serverTypeProblem) problems.push({ path: "management.serverType", message: serverTypeProblem });
  }
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
