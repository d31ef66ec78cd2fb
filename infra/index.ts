// Composition root of the capi-fleet Pulumi program: validate the whole stack config
// and the tenants' upgrade paths first (nothing is registered when either is wrong),
// then build the fleet.
import * as pulumi from "@pulumi/pulumi";
import { loadFleetConfig } from "./config";
import {
  managementK3sVersionOutputName,
  managementServerTypesOutputName,
  planTenantUpgradesOrStop,
  readDeployedState,
  tenantImmutablesOutputName,
  tenantVersionsOutputName,
} from "./deployed-state";
import { createFleet } from "./fleet";
import { etcdSnapshotConfigOutputName, etcdSnapshotDropinDrift, etcdSnapshotK3sConfig } from "./model/etcd-snapshots";

export = async () => {
  const config = loadFleetConfig();
  const deployed = await readDeployedState();
  const upgrades = planTenantUpgradesOrStop(config, deployed.versions, deployed.immutables, deployed.managementK3sVersion, deployed.managementServerTypes);
  const outputs = createFleet(config, `${pulumi.getProject()}-${config.stack}`, upgrades, deployed.managementK3sVersion);
  const management = config.management;
  const drift = etcdSnapshotDropinDrift(
    deployed.etcdSnapshotConfig,
    deployed.managementServers,
    management.mode === "hetzner" ? etcdSnapshotK3sConfig(management.backups) : undefined,
  );
  if (drift) void pulumi.log.warn(`Config for stack "${config.stack}": management.backups: ${drift}`);
  return {
    managementApiEndpoint: outputs.managementApiEndpoint,
    managementKubeconfig: outputs.managementKubeconfig,
    managementServers: outputs.managementServers,
    managementNetworkId: outputs.managementNetworkId,
    managementAdminCertificateNotAfter: outputs.managementAdminCertificateNotAfter,
    [etcdSnapshotConfigOutputName]: outputs.managementEtcdSnapshotConfig,
    managementEtcdSnapshotStore: outputs.managementEtcdSnapshotStore,
    carenExtensionNames: outputs.carenExtensionNames,
    [tenantVersionsOutputName]: outputs.tenantVersions,
    [tenantImmutablesOutputName]: outputs.tenantImmutables,
    [managementK3sVersionOutputName]: outputs.managementK3sVersion,
    [managementServerTypesOutputName]: outputs.managementCluster.serverTypes,
    tenantKubeconfigs: outputs.tenantKubeconfigs,
  };
};
