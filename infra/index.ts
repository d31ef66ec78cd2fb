// Composition root of the capi-fleet Pulumi program: validate the whole stack config
// and the tenants' upgrade paths first (nothing is registered when either is wrong),
// then build the fleet.
import * as pulumi from "@pulumi/pulumi";
import { loadFleetConfig } from "./config";
import { planTenantUpgradesOrStop, readDeployedState, tenantImmutablesOutputName, tenantVersionsOutputName } from "./deployed-state";
import { createFleet } from "./fleet";

export = async () => {
  const config = loadFleetConfig();
  const deployed = await readDeployedState();
  const upgrades = planTenantUpgradesOrStop(config, deployed.versions, deployed.immutables);
  const outputs = createFleet(config, `${pulumi.getProject()}-${config.stack}`, upgrades);
  return {
    managementApiEndpoint: outputs.managementApiEndpoint,
    managementKubeconfig: outputs.managementKubeconfig,
    managementServers: outputs.managementServers,
    managementNetworkId: outputs.managementNetworkId,
    managementAdminCertificateNotAfter: outputs.managementAdminCertificateNotAfter,
    carenExtensionNames: outputs.carenExtensionNames,
    [tenantVersionsOutputName]: outputs.tenantVersions,
    [tenantImmutablesOutputName]: outputs.tenantImmutables,
    tenantKubeconfigs: outputs.tenantKubeconfigs,
  };
};
