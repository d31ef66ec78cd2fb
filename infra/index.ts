// Composition root of the capi-fleet Pulumi program: validate the whole stack config
// and the tenants' upgrade paths first (nothing is registered when either is wrong),
// then build the fleet, or, in a shard stack, its tenants on the management stack's cluster.
import * as pulumi from "@pulumi/pulumi";
import { loadStackConfig } from "./config";
import type { FleetConfig, ShardConfig } from "./model/stack/validate-fleet-config";
import { planTenantUpgradesOrStop, readDeployedState } from "./deployed-state";
import { resourceHooksAvailable } from "../components/helm-release/interrupted-release";
import { createFleet } from "./fleet";
import { etcdSnapshotDropinDrift, etcdSnapshotK3sConfig } from "./model/management/etcd-snapshots";
import { ownershipProblems, peerTenantVersions, qualifiedStackName } from "./model/config/shards";
import { FleetConfigError } from "./model/config/stack-config";
import { createShard, readManagementStack } from "./shard";
import { readShardTenants } from "./shard-tenants";
import { stackOutputs } from "./model/contract/outputs";

export = async () => {
  const stack = loadStackConfig();
  return stack.role === "shard" ? shard(stack.config) : fleet(stack.config);
};

const qualified = (name: string): string => qualifiedStackName(name, pulumi.getOrganization(), pulumi.getProject());

async function fleet(config: FleetConfig) {
  const deployed = await readDeployedState();
  const upgrades = planTenantUpgradesOrStop(config, deployed.versions, deployed.immutables, deployed.managementK3sVersion, deployed.managementServerTypes);
  // A management stack with shards: the whole fleet's tenants, from each shard's last outputs.
  const self = qualified(config.stack);
  const fleetTenants = config.shards.length > 0 ? await readShardTenants(self, config, config.shards.map(qualified)) : undefined;
  if (fleetTenants) {
    const problems = ownershipProblems(self, config.tenants, new Map(Object.entries(fleetTenants)));
    if (problems.length > 0) throw new pulumi.RunError(new FleetConfigError(config.stack, problems).message);
  }
  const peers = fleetTenants ? peerTenantVersions(self, new Map(Object.entries(fleetTenants))) : undefined;
  const outputs = createFleet(config, `${pulumi.getProject()}-${config.stack}`, upgrades, deployed.managementK3sVersion, peers, await resourceHooksAvailable());
  const management = config.management;
  const drift = etcdSnapshotDropinDrift(
    deployed.etcdSnapshotConfig,
    deployed.managementServers,
    management.mode === "hetzner" ? etcdSnapshotK3sConfig(management.backups) : undefined,
  );
  if (drift) void pulumi.log.warn(`Config for stack "${config.stack}": management.backups: ${drift}`);
  // The servers' network, PKI, k3s and backups exist only when the fleet built the cluster: an
  // existing-mode stack leaves them out, where the engine would warn for each undefined output on
  // every run ("Undefined value (…) will not show as a stack output"; the first real `up` showed it).
  const builtCluster =
    management.mode === "hetzner"
      ? {
          [stackOutputs.managementNetworkId]: outputs.managementNetworkId,
          [stackOutputs.managementAdminCertificateNotAfter]: outputs.managementAdminCertificateNotAfter,
          [stackOutputs.managementEtcdSnapshotConfig]: outputs.managementEtcdSnapshotConfig,
          [stackOutputs.managementEtcdSnapshotStore]: outputs.managementEtcdSnapshotStore,
          [stackOutputs.managementK3sVersion]: outputs.managementK3sVersion,
          [stackOutputs.managementServerTypes]: outputs.managementCluster.serverTypes,
        }
      : {};
  return {
    [stackOutputs.managementApiEndpoint]: outputs.managementApiEndpoint,
    [stackOutputs.managementKubeconfig]: outputs.managementKubeconfig,
    [stackOutputs.managementServers]: outputs.managementServers,
    ...builtCluster,
    [stackOutputs.carenExtensionNames]: outputs.carenExtensionNames,
    [stackOutputs.tenantVersions]: outputs.tenantVersions,
    [stackOutputs.tenantImmutables]: outputs.tenantImmutables,
    [stackOutputs.tenantKubeconfigs]: outputs.tenantKubeconfigs,
    // Only a management stack with shards publishes what they read (the small case stays as it was).
    ...(fleetTenants ? { [stackOutputs.fleetPlatform]: outputs.fleetPlatform, [stackOutputs.fleetTenants]: fleetTenants } : {}),
  };
}

async function shard(config: ShardConfig) {
  const deployed = await readDeployedState();
  const upgrades = planTenantUpgradesOrStop(config, deployed.versions, deployed.immutables);
  const self = qualified(config.stack);
  const management = await readManagementStack(config.stack, qualified(config.managementStack));
  return createShard(config, self, management, upgrades, await resourceHooksAvailable()).outputs;
}
