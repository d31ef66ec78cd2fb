import ipaddr from "ipaddr.js";

// An hcloud Firewall's inbound rules evaluated as Hetzner evaluates them
// (docs.hetzner.com/cloud/firewalls/faq, "How do the Firewalls work?": the rules list what may
// reach the server, with an implicit deny at the end; a tcp/udp rule carries a port or an "a-b"
// range, an icmp rule none). Addresses are matched with ipaddr.js, not with the model's cidr.ts.

export type FirewallRule = { direction: string; protocol: string; port?: string; sourceIps: readonly string[] };
export type Packet = { protocol: "tcp" | "udp" | "icmp"; port?: number; source: string };

/** A port spec as Hetzner reads it; undefined when the rule is invalid for the protocol. */
function portRange(rule: FirewallRule): [number, number] | "none" | undefined {
  if (rule.protocol === "icmp") return rule.port === undefined ? "none" : undefined;
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(rule.port ?? "");
  if (!match) return undefined;
  const [from, to] = [Number(match[1]), Number(match[2] ?? match[1])];
  return from >= 1 && from <= to && to <= 65535 ? [from, to] : undefined;
}

/** Whether a packet gets through; throws on a rule Hetzner's API would refuse. */
export function admits(rules: readonly FirewallRule[], packet: Packet): boolean {
  const source = ipaddr.parse(packet.source);
  return rules.some((rule) => {
    const range = portRange(rule);
    if (range === undefined) throw new Error(`hcloud refuses rule ${JSON.stringify(rule)}`);
    if (rule.direction !== "in" || rule.protocol !== packet.protocol) return false;
    if (range !== "none" && (packet.port === undefined || packet.port < range[0] || packet.port > range[1])) return false;
    return rule.sourceIps.some((cidr) => {
      const [network, prefixLength] = ipaddr.parseCIDR(cidr);
      return network.kind() === source.kind() && source.match(network, prefixLength);
    });
  });
}

/**
 * What k3s servers need from each other (docs.k3s.io, installation/requirements, "Inbound Rules
 * for K3s Nodes": 6443/tcp supervisor and API, 2379-2380/tcp embedded etcd, 8472/udp flannel
 * VXLAN, 10250/tcp kubelet), with SSH.
 */
export const k3sNodePorts: readonly Omit<Packet, "source">[] = [
  { protocol: "tcp", port: 22 },
  { protocol: "tcp", port: 6443 },
  { protocol: "tcp", port: 2379 },
  { protocol: "tcp", port: 2380 },
  { protocol: "tcp", port: 10250 },
  { protocol: "udp", port: 8472 },
];
