import ipaddr from "ipaddr.js";
import { kubernetesApiPort } from "../../infra/model/firewall-rules";
import { resourceRule } from "../lib/define";
import { resourceTypes } from "../lib/fleet-resources";

const adminPorts = [22, kubernetesApiPort];

/** True when a firewall rule's `port` ("22", "1-65535", "any", or none: every port) covers the port. */
export function portCovers(rulePort: string | undefined, port: number): boolean {
  if (rulePort === undefined || rulePort === "any") return true;
  const [low = NaN, high = low] = rulePort.split("-").map(Number);
  return low <= port && port <= high;
}

/**
 * The sources that admit the whole internet: any spelling of 0.0.0.0/0 or ::/0 (also
 * "0::0/0", "::ffff:0.0.0.0/96"), or IPv4 ranges that together cover every address
 * (0.0.0.0/1 plus 128.0.0.0/1). Unparsable entries are left to Hetzner's API to refuse.
 */
export function everyoneIn(sources: readonly string[]): string[] {
  const open: string[] = [];
  let ipv4Addresses = 0;
  for (const source of sources) {
    if (!ipaddr.isValidCIDR(source)) continue;
    const [address, prefix] = ipaddr.parseCIDR(source);
    if (prefix === 0) {
      open.push(source);
    } else if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix <= 96) {
      open.push(source);
    } else if (address.kind() === "ipv4") {
      ipv4Addresses += 2 ** (32 - prefix);
    }
  }
  if (open.length === 0 && ipv4Addresses >= 2 ** 32) {
    open.push(`${sources.filter((source) => ipaddr.isValidCIDR(source) && ipaddr.parseCIDR(source)[0].kind() === "ipv4").join(" + ")} (together all of IPv4)`);
  }
  return open;
}

/**
 * SSH and the Kubernetes API are reachable from admin networks only, on the management servers
 * and on the tenants' (whose firewalls open SSH from the same `management.adminCidrs`).
 */
export const managementAdminPortsClosed = resourceRule({
  name: "management-admin-ports-closed",
  description: `No hcloud firewall of the fleet (management or tenant) opens SSH (22) or the Kubernetes API (${kubernetesApiPort}) to 0.0.0.0/0 or ::/0 (in any spelling).`,
  enforcementLevel: "mandatory",
  remediationSteps: "List your office/VPN egress ranges in management.adminCidrs instead of the whole internet.",
  resourceTypes: [resourceTypes.hcloudFirewall],
  validate: (props, _config, report) => {
    const rules = Array.isArray(props.rules) ? (props.rules as { direction?: string; protocol?: string; port?: string; sourceIps?: string[] }[]) : [];
    for (const rule of rules) {
      if (rule.direction !== "in" || rule.protocol !== "tcp") continue;
      const open = everyoneIn(rule.sourceIps ?? []);
      const ports = adminPorts.filter((port) => portCovers(rule.port, port));
      if (open.length > 0 && ports.length > 0) {
        report(`Firewall ${JSON.stringify(props.name ?? "")} opens port ${ports.join(" and ")} to ${open.join(", ")}; set management.adminCidrs to your admin networks only.`);
      }
    }
  },
});
