/** An hcloud firewall rule, as plain data so it can be tested and shown in diffs. */
export interface FirewallRuleSpec {
  readonly description: string;
  readonly direction: "in";
  readonly protocol: "tcp" | "udp" | "icmp";
  readonly port?: string;
  readonly sourceIps: readonly string[];
}

/** Kubernetes API port of k3s. */
export const kubernetesApiPort = 6443;

/**
 * Inbound rules of the management servers: SSH and the API only from the admin
 * networks, everything from the private network. Hetzner firewalls filter public
 * interfaces only, so the private rules document intent rather than open anything; and
 * they never apply to load balancers (the API LB is reachable from anywhere on 6443,
 * protected by client-certificate authentication).
 */
export function managementFirewallRules(adminCidrs: readonly string[], privateNetworkCidr: string): FirewallRuleSpec[] {
  const fromNetwork = [privateNetworkCidr];
  return [
    { description: "SSH from admin networks", direction: "in", protocol: "tcp", port: "22", sourceIps: adminCidrs },
    {
      description: "Kubernetes API from admin networks",
      direction: "in",
      protocol: "tcp",
      port: String(kubernetesApiPort),
      sourceIps: adminCidrs,
    },
    { description: "TCP inside the private network", direction: "in", protocol: "tcp", port: "1-65535", sourceIps: fromNetwork },
    { description: "UDP inside the private network", direction: "in", protocol: "udp", port: "1-65535", sourceIps: fromNetwork },
    { description: "ICMP inside the private network", direction: "in", protocol: "icmp", sourceIps: fromNetwork },
  ];
}
