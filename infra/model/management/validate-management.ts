// The management cluster's cross-field rules (admin ranges, network, init server, backups) and
// its secrets by mode: the hcloud token for `hetzner`, the kubeconfig for `existing`.
import { cidrContains, cidrsOverlap, familiesCoveredEntirely, isPrivateIpv4, mustParseCidr } from "../config/cidr";
import { k3sClusterNetworks, type ExistingManagementSettings, type FleetSettings, type HetznerManagementSettings } from "../config/fleet-config";
import type { SecretValue } from "../config/secret";
import { hcloudTokenProblem, type EtcdS3Credentials, type SecretReader } from "../config/secret-reader";
import { configKeys, keyPath, type ConfigProblem } from "../config/stack-config";
import { formatValue } from "../config/text";
import { catalog } from "../versions/catalog";
import { kubeconfigServer } from "./kubeconfig";

export type HetznerManagement = HetznerManagementSettings & {
  /** Token of the management cluster's Hetzner project (`hcloud:token`). */
  readonly hcloudToken: SecretValue;
  /** Object Storage credentials for the etcd snapshots (`etcdS3Credentials`), when `backups` is set. */
  readonly etcdS3Credentials?: EtcdS3Credentials;
};

export type ExistingManagement = ExistingManagementSettings & {
  readonly kubeconfig: SecretValue;
  /** API server URL of the kubeconfig's current context (not secret). */
  readonly apiServerUrl: string;
};

export function readManagement(
  settings: FleetSettings["management"],
  secrets: SecretReader,
  hasTenants: boolean,
): HetznerManagement | ExistingManagement | undefined {
  if (settings.mode === "hetzner") {
    const hcloudToken = secrets.read(configKeys.hcloudToken, "hcloud:token", hcloudTokenProblem);
    secrets.rejectUnused(configKeys.managementKubeconfig, keyPath(configKeys.managementKubeconfig), "management.mode: existing");
    if (!settings.backups) {
      secrets.rejectUnused(configKeys.etcdS3Credentials, "etcdS3Credentials", "management.backups");
      return hcloudToken && { ...settings, hcloudToken };
    }
    const etcdS3Credentials = secrets.etcdS3Credentials();
    return hcloudToken && etcdS3Credentials && { ...settings, hcloudToken, etcdS3Credentials };
  }
  secrets.rejectUnused(configKeys.hcloudToken, "hcloud:token", "management.mode: hetzner");
  secrets.rejectUnused(configKeys.etcdS3Credentials, "etcdS3Credentials", "management.mode: hetzner and management.backups");
  // Stryker disable next-line StringLiteral: equivalent, read only after a valid kubeconfig has set it
  let apiServerUrl = "";
  const kubeconfig = secrets.read(configKeys.managementKubeconfig, keyPath(configKeys.managementKubeconfig), (text) => {
    const found = kubeconfigServer(text);
    if ("problem" in found) {
      return found.problem;
    }
    apiServerUrl = found.server;
    if (hasTenants && found.credentials !== "inline") {
      // The tenants' kubeconfig and load-balancer drain scripts call the API themselves.
      return (
        "authenticates its current user with something other than inline credentials (exec plugin, auth provider or files); " +
        "tenants need client-certificate-data and client-key-data, or a token, in the kubeconfig itself (for example a ServiceAccount token kubeconfig)"
      );
    }
    return undefined;
  });
  return kubeconfig && { ...settings, kubeconfig, apiServerUrl };
}

export function managementProblems(settings: FleetSettings): ConfigProblem[] {
  const management = settings.management;
  if (management.mode !== "hetzner") {
    return [];
  }
  const problems: ConfigProblem[] = [];
  const everywhere = familiesCoveredEntirely(management.adminCidrs.map(mustParseCidr));
  if (everywhere.length > 0 && !management.allowAdminFromAnywhere) {
    problems.push({
      path: "management.adminCidrs",
      message:
        `${formatValue(management.adminCidrs)} opens SSH and the Kubernetes API on the servers to every ${everywhere.map((family) => (family === "ipv4" ? "IPv4" : "IPv6")).join(" and ")} address; ` +
        "allowed: the ranges you administer from (office, VPN, CI egress); for a throwaway dev stack, set management.allowAdminFromAnywhere: true",
    });
  }
  const network = mustParseCidr(management.network.cidr);
  const subnet = mustParseCidr(management.network.subnetCidr);
  if (!isPrivateIpv4(network)) {
    problems.push({
      path: "management.network.cidr",
      message: `${formatValue(network.text)} is not a private range; allowed: inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (hcloud networks are RFC 1918 only)`,
    });
  }
  for (const [role, text] of Object.entries(k3sClusterNetworks)) {
    if (cidrsOverlap(network, mustParseCidr(text))) {
      problems.push({
        path: "management.network.cidr",
        message: `${formatValue(network.text)} overlaps the k3s ${role} network ${text}; pick a range outside ${Object.values(k3sClusterNetworks).join(" and ")}`,
      });
    }
  }
  if (!cidrContains(network, subnet)) {
    problems.push({
      path: "management.network.subnetCidr",
      message: `${formatValue(subnet.text)} is not inside management.network.cidr ${network.text}`,
    });
  } else if (subnet.prefixLength > 28) {
    problems.push({
      path: "management.network.subnetCidr",
      message: `${formatValue(subnet.text)} is too small; allowed: /28 or larger (the servers and the load balancer take host addresses 10–13)`,
    });
  }
  if (management.initServer > management.servers) {
    problems.push({
      path: "management.initServer",
      message: `${management.initServer} is not one of the ${management.servers} server(s); allowed: 1 to ${management.servers}`,
    });
  }
  const objectStorage: readonly string[] = catalog.hcloud.objectStorageLocations;
  if (management.backups && management.backups.location === undefined && !objectStorage.includes(management.location)) {
    problems.push({
      path: "management.backups.location",
      message: `is required: management.location ${management.location} has no Hetzner Object Storage; allowed: ${objectStorage.join(", ")}`,
    });
  }
  return problems;
}
