import type { FirewallRuleSpec } from "../management/firewall-rules";
import { hetznerClusterNameOf } from "../platform/hetzner-cluster-class";
import { formatValue } from "../config/text";

/**
 * The hcloud Firewall of a tenant's nodes, as plain data.
 *
 * CAPH creates no firewall, so without one every port a node listens on (the API 6443, the
 * kubelet 10250, etcd 2379/2380, CAREN's containerd metrics listener on 0.0.0.0:1338) is open
 * on its public IPv4 and IPv6. Hetzner firewalls filter only the public interfaces, so the
 * rules below close the public side and leave the private network alone:
 *
 * - **The API** needs nothing public: the class enables CAPH's private network
 *   (`hcloudNetwork.enabled`), so every server has a private IP and CAPH adds it to the API
 *   load balancer with `UsePrivateIP: true` once the load balancer is attached to the network
 *   (syself/cluster-api-provider-hetzner@v1.1.8: pkg/services/hcloud/server/server.go
 *   `reconcileLoadBalancerAttachment`). The load balancer is reached on its own public address,
 *   which no firewall filters.
 * - **LoadBalancer Services** go the same way: the tenant's hcloud CCM targets private IPs
 *   (`HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP`, hcloud-ccm-values.ts).
 * - **Node to node** (Cilium, kubelet, etcd, pods reaching the `kubernetes` Service) uses the
 *   private addresses: control planes advertise theirs to kubeadm
 *   (shell/advertise-private-address.sh), and the rules for the nodes range document that intent.
 * - **SSH** only from the admin networks, and only when the servers get a key
 *   (`sshKeyName`): without one Hetzner sets a generated root password that CAPH discards,
 *   so nobody could log in with a key and the port would only offer password guessing.
 * - Nothing is open to the whole Internet; outbound traffic is not filtered (no `out` rules).
 */

/**
 * CAPH labels every hcloud server it creates `caph-cluster-<HetznerCluster name>: owned`
 * (besides `machine.caph-name` and `machine_type`): syself/cluster-api-provider-hetzner@v1.1.8
 * pkg/services/hcloud/server/server.go `createLabels`, with `NameHetznerProviderOwned` and
 * `ResourceLifecycleOwned` from api/v1beta1/tags.go. HCloudMachineSpec has no field for labels
 * of one's own, so this ownership label is the one handle on a cluster's servers.
 */
export const caphOwnedLabelPrefix = "caph-cluster-";
/** The value of CAPH's ownership label (`ResourceLifecycleOwned`). */
export const caphOwnedLabelValue = "owned";

/** The ownership label CAPH puts on the servers of the HetznerCluster `hetznerClusterName`. */
export function caphServerOwnershipLabel(hetznerClusterName: string): { key: string; value: string } {
  return { key: `${caphOwnedLabelPrefix}${hetznerClusterName}`, value: caphOwnedLabelValue };
}

/**
 * The longest name part of an hcloud label key (hetznercloud/hcloud-go v2.32.0, as vendored by
 * CAPH v1.1.8: hcloud/labels.go `keyRegexp`; Hetzner's API applies the same rule).
 */
export const hcloudLabelNameMaxLength = 63;

/** The longest tenant name whose ownership label Hetzner accepts. */
export const maxTenantNameLength = hcloudLabelNameMaxLength - caphOwnedLabelPrefix.length;

/**
 * Why a tenant name cannot work, or undefined: CAPH puts its ownership label on the cluster's
 * network, load balancer, placement groups and servers, and Hetzner refuses a label key whose
 * name is longer than 63 characters, so nothing of the cluster could be created.
 */
export function tenantNameLabelProblem(clusterName: string): string | undefined {
  const key = caphServerOwnershipLabel(hetznerClusterNameOf(clusterName)).key;
  return key.length <= hcloudLabelNameMaxLength
    ? undefined
    : `${formatValue(clusterName)} has ${clusterName.length} characters; allowed: at most ${maxTenantNameLength}, because CAPH labels the cluster's hcloud resources ${formatValue(key)} and hcloud label names have at most ${hcloudLabelNameMaxLength} characters`;
}

/**
 * The hcloud label selector of a tenant's servers: CAPH's ownership label of the tenant's
 * HetznerCluster, which the class names after the Cluster. It matches that cluster's servers
 * and no other cluster's, even in a shared project.
 */
export function tenantServerLabelSelector(clusterName: string): string {
  const label = caphServerOwnershipLabel(hetznerClusterNameOf(clusterName));
  return `${label.key}=${label.value}`;
}

/** What the tenant's firewall rules depend on. */
export interface TenantFirewallOptions {
  /** The tenant's private network (`network.nodesCidr`). */
  readonly nodesCidr: string;
  /** Sources allowed to reach SSH (`management.adminCidrs`; none in `existing` mode). */
  readonly adminCidrs: readonly string[];
  /** The tenant's SSH key name; without one SSH stays closed. */
  readonly sshKeyName: string | undefined;
}

/** Inbound rules of a tenant's nodes (see the module comment). */
export function tenantFirewallRules(options: TenantFirewallOptions): FirewallRuleSpec[] {
  const fromNodes = [options.nodesCidr];
  const ssh: FirewallRuleSpec[] =
    options.sshKeyName !== undefined && options.adminCidrs.length > 0
      ? [{ description: "SSH from admin networks", direction: "in", protocol: "tcp", port: "22", sourceIps: options.adminCidrs }]
      : [];
  return [
    ...ssh,
    { description: "TCP between the nodes (private network)", direction: "in", protocol: "tcp", port: "1-65535", sourceIps: fromNodes },
    { description: "UDP between the nodes (private network)", direction: "in", protocol: "udp", port: "1-65535", sourceIps: fromNodes },
    { description: "ICMP between the nodes (private network)", direction: "in", protocol: "icmp", sourceIps: fromNodes },
  ];
}

/** The warning for a tenant whose servers get no SSH key, or undefined. */
export function tenantSshKeyWarning(tenant: { name: string; sshKeyName?: string | undefined }, index: number): string | undefined {
  if (tenant.sshKeyName !== undefined) return undefined;
  return (
    `tenants[${index}].sshKeyName is not set: tenant "${tenant.name}"'s servers get a root password that Hetzner generates and CAPH discards, ` +
    `and their firewall keeps SSH closed; set sshKeyName to a key in the tenant's Hetzner project to be able to log in`
  );
}
