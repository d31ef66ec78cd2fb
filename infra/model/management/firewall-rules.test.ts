import { describe, expect, it } from "vitest";
import { admits, k3sNodePorts } from "../../../tests/support/hcloud-firewall";
import { kubernetesApiPort, managementFirewallRules } from "./firewall-rules";

// The management servers' inbound rules, evaluated as Hetzner evaluates them (tests/support/hcloud-firewall.ts),
// against who must reach which port of a k3s server. The program's prod rules are checked the same
// way in infra/management-firewall.test.ts; here with admin networks of both families.

const adminCidrs = ["203.0.113.0/28", "2001:db8:1::/48"];
const privateNetwork = "10.0.0.0/16";
const adminHosts = ["203.0.113.5", "2001:db8:1::7"];
const strangers = ["203.0.113.16", "198.51.100.9", "2001:db8:2::1", "10.1.0.1"];
const neighbour = "10.0.1.12";

const reachable = (source: string) =>
  k3sNodePorts.filter((packet) => admits(managementFirewallRules(adminCidrs, privateNetwork), { ...packet, source })).map((packet) => `${packet.port}/${packet.protocol}`);

describe("the management servers' firewall rules", () => {
  it("let the admin networks reach SSH and the Kubernetes API, and nothing else", () => {
    for (const source of adminHosts) expect(reachable(source), source).toEqual(["22/tcp", `${kubernetesApiPort}/tcp`]);
  });

  it("let no other address reach any port, nor ping", () => {
    const rules = managementFirewallRules(adminCidrs, privateNetwork);
    for (const source of strangers) {
      expect(reachable(source), source).toEqual([]);
      expect(admits(rules, { protocol: "icmp", source }), source).toBe(false);
    }
  });

  it("let the other servers reach every port k3s servers need from each other, every other port, and ping", () => {
    const rules = managementFirewallRules(adminCidrs, privateNetwork);
    expect(reachable(neighbour)).toEqual(k3sNodePorts.map((packet) => `${packet.port}/${packet.protocol}`));
    for (const port of [1, 51820, 65535]) {
      for (const protocol of ["tcp", "udp"] as const) expect(admits(rules, { protocol, port, source: neighbour }), `${port}/${protocol}`).toBe(true);
    }
    expect(admits(rules, { protocol: "icmp", source: neighbour })).toBe(true);
  });

  it("open nothing at all without admin networks but the private network", () => {
    const rules = managementFirewallRules([], privateNetwork);
    for (const source of adminHosts) expect(k3sNodePorts.filter((packet) => admits(rules, { ...packet, source }))).toEqual([]);
    expect(admits(rules, { protocol: "tcp", port: 22, source: neighbour })).toBe(true);
  });

  it("describe each rule differently, so the console and diffs tell them apart", () => {
    const descriptions = managementFirewallRules(adminCidrs, privateNetwork).map((rule) => rule.description);
    expect(descriptions.every((description) => description.trim().length > 0)).toBe(true);
    expect(new Set(descriptions).size).toBe(descriptions.length);
  });

  it("the evaluator refuses what Hetzner refuses and denies what no rule lists (negative control)", () => {
    expect(() => admits([{ direction: "in", protocol: "tcp", port: "", sourceIps: [privateNetwork] }], { protocol: "tcp", port: 22, source: neighbour })).toThrow(/refuses/);
    expect(admits([{ direction: "in", protocol: "tcp", port: "22", sourceIps: [privateNetwork] }], { protocol: "tcp", port: 23, source: neighbour })).toBe(false);
    expect(admits([{ direction: "in", protocol: "udp", port: "1-65535", sourceIps: [privateNetwork] }], { protocol: "tcp", port: 22, source: neighbour })).toBe(false);
    expect(admits([{ direction: "in", protocol: "tcp", port: "1-65535", sourceIps: ["10.0.0.0/16"] }], { protocol: "tcp", port: 22, source: "2001:db8::1" })).toBe(false);
  });
});

describe("management firewall rules", () => {
  const rules = managementFirewallRules(["203.0.113.0/24", "2001:db8::/32"], "10.0.0.0/16");

  it("opens SSH and the API only to the admin networks", () => {
    const publicPorts = rules.filter((rule) => !rule.sourceIps.includes("10.0.0.0/16"));
    expect(publicPorts.map((rule) => [rule.protocol, rule.port])).toEqual([
      ["tcp", "22"],
      ["tcp", "6443"],
    ]);
    for (const rule of publicPorts) {
      expect(rule.sourceIps).toEqual(["203.0.113.0/24", "2001:db8::/32"]);
    }
  });

  it("allows everything inside the private network and never 0.0.0.0/0", () => {
    expect(rules.filter((rule) => rule.sourceIps.includes("10.0.0.0/16")).map((rule) => rule.protocol)).toEqual(["tcp", "udp", "icmp"]);
    expect(rules.flatMap((rule) => rule.sourceIps)).not.toContain("0.0.0.0/0");
  });
});
