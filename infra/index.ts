// Composition root of the capi-fleet Pulumi program: validate the whole stack config
// first (nothing is registered when it is wrong), then build the fleet.
import * as pulumi from "@pulumi/pulumi";
import { loadFleetConfig } from "./config";
import { createFleet } from "./fleet";

const config = loadFleetConfig();
const outputs = createFleet(config, `${pulumi.getProject()}-${config.stack}`);

export const managementApiEndpoint = outputs.managementApiEndpoint;
export const managementKubeconfig = outputs.managementKubeconfig;
export const managementServers = outputs.managementServers;
export const managementNetworkId = outputs.managementNetworkId;
export const managementAdminCertificateNotAfter = outputs.managementAdminCertificateNotAfter;
export const carenExtensionNames = outputs.carenExtensionNames;
