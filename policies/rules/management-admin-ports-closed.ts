import ipaddr from "ipaddr.js";
import { kubernetesApiPort } from "../../infra/model/management/firewall-rules";
import { resourceRule } from "../lib/define";
import { resourceTypes } from "../lib/fleet-resources";

const adminPorts = [22, kubernetesApiPort];

/** True when a firewall rule's `port` ("22", "1-65535", "any", or none: every port) covers the port. */
export function portCovers(rulePort: string | undefined, port: number): boolean {
  if (rulePort === undefined || rulePort === "any") return true;
  const [low = NaN, high = low] = rulePort.split("-").map(Number);
  return low <= port && port <= high;
}

/** The first and last address of a CIDR as integers (BigInt: IPv6 has 128 bits); host bits are ignored, as in a network address. */
function addressRange(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): [bigint, bigint] {
  const value = address.toByteArray().reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n);
  const size = 1n << BigInt((address.kind() === "ipv4" ? 32 : 128) - prefix);
  const first = value - (value % size);
  return [first, first + size - 1n];
}

/** True when the ranges together hold every address from `first` to `last`. */
function covers(ranges: readonly [bigint, bigint][], first: bigint, last: bigint): boolean {
  let next = first; // the lowest address not covered yet
  for (const [low, high] of [...ranges].sort((a, b) => Number(a[0] - b[0]))) {
    if (low > next) break;
    // Stryker disable next-line EqualityOperator: equivalent, when equal the assignment leaves next as it is
    if (high + 1n > next) next = high + 1n;
  }
  return next > last;
}

/** The address spaces that are "everyone": all of IPv4, all of IPv6, and IPv4 mapped into IPv6 (::ffff:0:0/96). */
const everyone = [
  { kind: "ipv4", label: "IPv4", first: 0n, last: 2n ** 32n - 1n },
  { kind: "ipv6", label: "IPv6", first: 0n, last: 2n ** 128n - 1n },
  { kind: "ipv6", label: "IPv4 mapped into IPv6", first: 0xffffn << 32n, last: (0xffffn << 32n) + 2n ** 32n - 1n },
] as const;

/**
 * The sources that admit the whole internet: any spelling of 0.0.0.0/0 or ::/0 (also "0::0/0",
 * and "::ffff:0.0.0.0/96", all of IPv4 mapped into IPv6), or ranges that together cover one of
 * those (0.0.0.0/1 plus 128.0.0.0/1; overlapping ranges count once). Unparsable entries are left
 * to Hetzner's API to refuse.
 */
export function everyoneIn(sources: readonly string[]): string[] {
  const parsed = sources.filter((source) => ipaddr.isValidCIDR(source)).map((source) => {
    const [address, prefix] = ipaddr.parseCIDR(source);
    return { source, kind: address.kind(), range: addressRange(address, prefix) };
  });
  const open = new Set<string>(); // "::/0" is all of IPv6 and all of mapped IPv4: named once
  for (const space of everyone) {
    const members = parsed.filter(({ kind, range: [low, high] }) => kind === space.kind && low <= space.last && high >= space.first);
    const alone = members.filter(({ range }) => covers([range], space.first, space.last));
    for (const { source } of alone) open.add(source);
    if (alone.length === 0 && covers(members.map(({ range }) => range), space.first, space.last)) {
      open.add(`${members.map(({ source }) => source).join(" + ")} (together all of ${space.label})`);
    }
  }
  return [...open];
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
    if (!Array.isArray(props.rules)) return;
    for (const rule of props.rules as { direction?: string; protocol?: string; port?: string; sourceIps?: string[] }[]) {
      if (rule.direction !== "in" || rule.protocol !== "tcp" || rule.sourceIps === undefined) continue;
      const open = everyoneIn(rule.sourceIps);
      const ports = adminPorts.filter((port) => portCovers(rule.port, port));
      if (open.length > 0 && ports.length > 0) {
        report(`Firewall ${JSON.stringify(props.name ?? "")} opens port ${ports.join(" and ")} to ${open.join(", ")}; set management.adminCidrs to your admin networks only.`);
      }
    }
  },
});
