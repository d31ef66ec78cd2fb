import * as hcloud from "@pulumi/hcloud";
import * as pulumi from "@pulumi/pulumi";
import { ManagementCluster } from "../components/management-cluster";
import type { FleetConfig } from "./config";

/** What the stack exports, plus the components for callers (and tests) that need them. */
export interface FleetOutputs {
  managementCluster: ManagementCluster;
  managementApiEndpoint: pulumi.Output<string>;
  managementKubeconfig: pulumi.Output<string>;
  managementServers: pulumi.Output<{ name: string; publicIpv4: string; privateIp: string }[]>;
  managementNetworkId: pulumi.Output<string | undefined>;
  managementAdminCertificateNotAfter: pulumi.Output<string | undefined>;
}

/**
 * Wires the fleet's components from a validated config. The order is the dependency
 * order; later issues add ClusterApi → Caren → Flux → tenants after the management cluster.
 */
export function createFleet(config: FleetConfig, fleetName: string): FleetOutputs {
  const management = config.management;
  const hcloudProvider =
    management.mode === "hetzner"
      ? new hcloud.Provider("management-hcloud", { token: pulumi.secret(management.hcloudToken.reveal()) })
      : undefined;
  const cluster = new ManagementCluster("management", {
    fleetName,
    settings: stripSecrets(management),
    hcloudProvider,
    existingCluster:
      management.mode === "existing"
        ? { kubeconfig: pulumi.secret(management.kubeconfig.reveal()), apiServerUrl: management.apiServerUrl }
        : undefined,
  });
  return {
    managementCluster: cluster,
    managementApiEndpoint: cluster.apiEndpoint,
    managementKubeconfig: cluster.kubeconfig,
    managementServers: cluster.serverAddresses,
    managementNetworkId: cluster.networkId,
    managementAdminCertificateNotAfter: cluster.adminCertificateNotAfter,
  };
}

/** Component args become resource inputs (visible to policies), so secrets never go in as settings. */
function stripSecrets(management: FleetConfig["management"]) {
  if (management.mode === "hetzner") {
    const { hcloudToken: _token, ...settings } = management;
    return settings;
  }
  const { kubeconfig: _kubeconfig, apiServerUrl: _url, ...settings } = management;
  return settings;
}
