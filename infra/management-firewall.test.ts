import { beforeAll, describe, expect, it } from "vitest";
import { one, runStack } from "../tests/support/fleet-run";
import { admits, type FirewallRule, type Packet } from "../tests/support/hcloud-firewall";
import { readStackConfig } from "../tests/support/stack-files";
import { managementFirewallRules } from "./model/management/firewall-rules";
import { parseFleetConfig } from "./model/stack/validate-fleet-config";

// The management servers' hcloud Firewall as the prod program registers it, evaluated as Hetzner
// evaluates inbound rules (tests/support/hcloud-firewall.ts; docs.hetzner.com/cloud/firewalls/faq, "How do the Firewalls work?":
// the rules list what may reach the server, with an implicit deny at the end; a tcp/udp rule
// carries a port or an "a-b" range, an icmp rule none), against what reaches the servers:
// - from the admin networks: SSH and the Kubernetes API, nothing else;
// - from any other address: nothing (the API load balancer reaches the servers privately);
// - from the private network: what k3s servers need from each other (docs.k3s.io,
//   installation/requirements, "Inbound Rules for K3s Nodes": 6443/tcp supervisor and API,
//   2379-2380/tcp embedded etcd, 8472/udp flannel VXLAN, 10250/tcp kubelet), and ICMP.

type Rule = FirewallRule;

const management = JSON.parse(readStackConfig("prod").values["capi-fleet:management"]!) as { adminCidrs: string[]; network: { cidr: string } };
/** A host inside each admin network, one outside all of them, and a server's private neighbour. */
const adminHosts = ["203.0.113.5", "2001:db8:1::7"];
const strangers = ["198.51.100.9", "2001:db8:ffff::1"];
const neighbour = "10.0.1.12";

const nodePorts: Packet[] = [
  { protocol: "tcp", port: 22, source: "" },
  { protocol: "tcp", port: 6443, source: "" },
  { protocol: "tcp", port: 2379, source: "" },
  { protocol: "tcp", port: 2380, source: "" },
  { protocol: "tcp", port: 10250, source: "" },
  { protocol: "udp", port: 8472, source: "" },
];

/**
 * The rules the program builds from the prod stack's validated config, built inside each test (so
 * mutation testing credits the test that catches a change); the first test checks that they are
 * the rules the program registers.
 */
function prodRules(): Rule[] {
  const { values, secretKeys } = readStackConfig("prod");
  const config = parseFleetConfig({ stack: "prod", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
  if (config.management.mode !== "hetzner") throw new Error("prod runs its own management cluster");
  return managementFirewallRules(config.management.adminCidrs, config.management.network.cidr).map((rule) => ({ ...rule, sourceIps: [...rule.sourceIps] }));
}

describe("the management firewall of prod", () => {
  let registered: Rule[];

  beforeAll(async () => {
    const { registrations } = await runStack("prod");
    registered = one(registrations, "hcloud:index/firewall:Firewall", "management-firewall").inputs.rules as Rule[];
  }, 120_000);

  it("is what the program registers for the management servers", () => {
    expect(registered).toEqual(prodRules());
  });

  it("is the stack's: the hosts the test uses lie where the stack says", () => {
    expect(adminHosts.every((host) => admits([{ direction: "in", protocol: "icmp", sourceIps: management.adminCidrs }], { protocol: "icmp", source: host }))).toBe(true);
    expect(admits([{ direction: "in", protocol: "icmp", sourceIps: [management.network.cidr] }], { protocol: "icmp", source: neighbour })).toBe(true);
  });

  it("lets the admin networks reach SSH and the Kubernetes API, and nothing else", () => {
    const rules = prodRules();
    for (const source of adminHosts) {
      const reachable = nodePorts.filter((packet) => admits(rules, { ...packet, source })).map((packet) => `${packet.port}/${packet.protocol}`);
      expect(reachable, source).toEqual(["22/tcp", "6443/tcp"]);
    }
  });

  it("lets no other public address reach any port", () => {
    const rules = prodRules();
    for (const source of strangers) {
      expect(nodePorts.filter((packet) => admits(rules, { ...packet, source })), source).toEqual([]);
      expect(admits(rules, { protocol: "icmp", source })).toBe(false);
    }
  });

  it("lets the other servers reach what k3s servers need from each other, and ICMP", () => {
    const rules = prodRules();
    expect(nodePorts.filter((packet) => !admits(rules, { ...packet, source: neighbour })).map((packet) => packet.port)).toEqual([]);
    expect(admits(rules, { protocol: "icmp", source: neighbour })).toBe(true);
  });

  it("negative control: the evaluator refuses what Hetzner refuses and denies what no rule lists", () => {
    expect(() => admits([{ direction: "in", protocol: "tcp", port: "", sourceIps: ["10.0.0.0/8"] }], { protocol: "tcp", port: 22, source: neighbour })).toThrow(/refuses/);
    expect(admits([{ direction: "in", protocol: "tcp", port: "22", sourceIps: ["10.0.0.0/8"] }], { protocol: "tcp", port: 23, source: neighbour })).toBe(false);
    expect(admits([{ direction: "in", protocol: "udp", port: "1-65535", sourceIps: ["10.0.0.0/8"] }], { protocol: "tcp", port: 22, source: neighbour })).toBe(false);
  });
});
