import { describe, expect, it } from "vitest";
import { everyoneIn, portCovers } from "../../../policies/rules/management-admin-ports-closed";
import { carenExtensionNames } from "../platform/caren-extensions";
import { managementFirewallRules, type FirewallRuleSpec } from "../management/firewall-rules";
import { hetznerClusterClassManifests, hetznerClusterNameOf } from "../platform/hetzner-cluster-class";
import { admits } from "../../../tests/support/hcloud-firewall";
import { readStackConfig } from "../../../tests/support/stack-files";
import { caphServerOwnershipLabel, maxTenantNameLength, tenantFirewallRules, tenantNameLabelProblem, tenantServerLabelSelector, tenantSshKeyWarning } from "./tenant-firewall";
import { FleetConfigError } from "../config/stack-config";
import { parseFleetConfig } from "../stack/validate-fleet-config";

/** Ports a tenant node listens on that must not be public: API, kubelet, etcd, CAREN's containerd metrics. */
const nodePorts = { ssh: 22, api: 6443, kubelet: 10250, etcdClient: 2379, etcdPeer: 2380, containerdMetrics: 1338 };

/** Every (port, source) a rule list admits from outside the given private ranges. */
function publicExposure(rules: readonly FirewallRuleSpec[], privateRanges: readonly string[]): string[] {
  return rules.flatMap((rule) =>
    Object.entries(nodePorts)
      .filter(([, port]) => rule.protocol !== "icmp" && portCovers(rule.port, port))
      .flatMap(([name, port]) => rule.sourceIps.filter((source) => !privateRanges.includes(source)).map((source) => `${name} ${port}/${rule.protocol} from ${source}`)),
  );
}

/**
 * Hetzner's label selector for the `key=value` terms the fleet uses (comma = and); anything
 * else fails the test rather than matching by accident.
 */
function selects(selector: string, labels: Record<string, string>): boolean {
  return selector.split(",").every((term) => {
    const match = /^([^=!\s]+)=([^=\s]*)$/.exec(term.trim());
    if (!match) throw new Error(`unsupported selector term ${term}`);
    return labels[match[1]!] === match[2];
  });
}

/** The labels CAPH's `createLabels` puts on one server of a HetznerCluster. */
const caphServerLabels = (hetznerClusterName: string, machine: string, machineType: "control_plane" | "worker") => {
  const owned = caphServerOwnershipLabel(hetznerClusterName);
  return { [owned.key]: owned.value, "machine.caph-name": machine, machine_type: machineType };
};

/** Renders a CAPI naming template ({{ .cluster.name }}, {{ .random }}) as CAPI does, refusing anything else. */
function renderNamingTemplate(template: string, clusterName: string): string {
  const rendered = template.replaceAll("{{ .cluster.name }}", clusterName).replaceAll("{{ .random }}", "x7k2q");
  if (rendered.includes("{{")) throw new Error(`unsupported template ${template}`);
  return rendered;
}

describe("the tenant firewall's label selector", () => {
  const infrastructure = (hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() }).clusterClass.spec as { infrastructure: { naming?: { template?: string } } })
    .infrastructure;

  it("names the HetznerCluster after the Cluster, so CAPH's ownership label is known before it exists", () => {
    const template = infrastructure.naming?.template;
    expect(template).toBeDefined();
    expect(renderNamingTemplate(template!, "payments")).toBe(hetznerClusterNameOf("payments"));
  });

  it("selects every server CAPH creates for the tenant and none of another tenant's", () => {
    const selector = tenantServerLabelSelector("payments");
    const own = hetznerClusterNameOf("payments");
    expect(selects(selector, caphServerLabels(own, "payments-control-plane-abcde", "control_plane"))).toBe(true);
    expect(selects(selector, caphServerLabels(own, "payments-md-0-fghij", "worker"))).toBe(true);
    expect(selects(selector, caphServerLabels(hetznerClusterNameOf("analytics"), "analytics-md-0-klmno", "worker"))).toBe(false);
    // A name that starts like the tenant's is another cluster.
    expect(selects(selector, caphServerLabels(hetznerClusterNameOf("payments-2"), "payments-2-md-0-pqrst", "worker"))).toBe(false);
  });

  it("would miss the servers under CAPI's default naming, {{ .cluster.name }}-{{ .random }} (negative control)", () => {
    const defaultName = renderNamingTemplate("{{ .cluster.name }}-{{ .random }}", "payments");
    expect(selects(tenantServerLabelSelector("payments"), caphServerLabels(defaultName, "payments-md-0-fghij", "worker"))).toBe(false);
  });
});

describe("the tenant firewall's rules", () => {
  const nodesCidr = "10.10.0.0/16";
  const adminCidrs = ["203.0.113.0/28", "2001:db8:1::/48"];

  it("open no node port to the public, not even the API (CAPH's load balancer targets private IPs)", () => {
    for (const sshKeyName of [undefined, "ops"]) {
      const rules = tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName });
      expect(rules.flatMap((rule) => everyoneIn(rule.sourceIps))).toEqual([]);
      expect(publicExposure(rules, [nodesCidr, ...(sshKeyName ? adminCidrs : [])])).toEqual([]);
    }
  });

  it("admit SSH from the admin networks only when the servers get a key", () => {
    const ssh = (rules: FirewallRuleSpec[]) => rules.filter((rule) => rule.protocol === "tcp" && portCovers(rule.port, nodePorts.ssh) && rule.sourceIps.some((source) => source !== nodesCidr));
    expect(ssh(tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName: "ops" })).map((rule) => rule.sourceIps)).toEqual([adminCidrs]);
    expect(ssh(tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName: undefined }))).toEqual([]);
    expect(ssh(tenantFirewallRules({ nodesCidr, adminCidrs: [], sshKeyName: "ops" }))).toEqual([]);
  });

  it("hold no rule that admits no one", () => {
    for (const options of [
      { nodesCidr, adminCidrs: [], sshKeyName: "ops" },
      { nodesCidr, adminCidrs, sshKeyName: "ops" },
      { nodesCidr, adminCidrs, sshKeyName: undefined },
    ]) {
      expect(tenantFirewallRules(options).filter((rule) => rule.sourceIps.length === 0)).toEqual([]);
    }
  });

  it("keep the private network open between the nodes (Cilium, kubelet, etcd, the load balancers' targets)", () => {
    const rules = tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName: undefined });
    for (const protocol of ["tcp", "udp"] as const) {
      expect(rules.filter((rule) => rule.protocol === protocol && rule.port === "1-65535").map((rule) => rule.sourceIps)).toEqual([[nodesCidr]]);
    }
  });

  it("let a node reach every port a kubeadm node and Cilium listen on from the other nodes, and ping, but no stranger", () => {
    // kubernetes.io/docs/reference/networking/ports-and-protocols (API 6443, etcd 2379-2380, kubelet 10250,
    // scheduler 10259, controller-manager 10257); docs.cilium.io v1.19 operations/system_requirements,
    // "Firewall Rules" (VXLAN 8472/udp, Geneve 6081/udp, health 4240/tcp, Hubble 4244/tcp).
    const ports = [
      ...[6443, 2379, 2380, 10250, 10257, 10259, 4240, 4244].map((port) => ({ protocol: "tcp" as const, port })),
      ...[8472, 6081].map((port) => ({ protocol: "udp" as const, port })),
    ];
    for (const sshKeyName of [undefined, "ops"]) {
      const rules = tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName });
      expect(ports.filter((packet) => !admits(rules, { ...packet, source: "10.10.3.7" }))).toEqual([]);
      expect(admits(rules, { protocol: "icmp", source: "10.10.3.7" })).toBe(true);
      for (const source of ["10.11.0.1", "198.51.100.9", "203.0.113.5"]) {
        expect(ports.filter((packet) => admits(rules, { ...packet, source })), source).toEqual([]);
        expect(admits(rules, { protocol: "icmp", source }), source).toBe(false);
      }
      // SSH from an admin host exactly when the servers get a key.
      expect(admits(rules, { protocol: "tcp", port: 22, source: "203.0.113.5" })).toBe(sshKeyName !== undefined);
      expect(admits(rules, { protocol: "tcp", port: 22, source: "2001:db8:1::9" })).toBe(sshKeyName !== undefined);
    }
  });

  it("describe each rule differently, so the console and diffs tell them apart", () => {
    const descriptions = tenantFirewallRules({ nodesCidr, adminCidrs, sshKeyName: "ops" }).map((rule) => rule.description);
    expect(descriptions.every((description) => description.trim().length > 0)).toBe(true);
    expect(new Set(descriptions).size).toBe(descriptions.length);
  });

  it("the exposure check sees a public API and open admin ports (negative control)", () => {
    const open: FirewallRuleSpec[] = [{ description: "API", direction: "in", protocol: "tcp", port: "6443", sourceIps: ["0.0.0.0/0"] }];
    expect(publicExposure(open, [nodesCidr])).toEqual(["api 6443/tcp from 0.0.0.0/0"]);
    expect(publicExposure(managementFirewallRules(adminCidrs, nodesCidr), [nodesCidr])).toEqual(expect.arrayContaining(["api 6443/tcp from 203.0.113.0/28", "ssh 22/tcp from 203.0.113.0/28"]));
  });
});

describe("tenantSshKeyWarning", () => {
  it("warns, naming the key path, only for tenants without an SSH key", () => {
    expect(tenantSshKeyWarning({ name: "edge" }, 2)).toMatch(/^tenants\[2\]\.sshKeyName is not set: tenant "edge"/);
    expect(tenantSshKeyWarning({ name: "edge", sshKeyName: "ops" }, 2)).toBeUndefined();
    // It says what follows (SSH stays closed) and the way out.
    expect(tenantSshKeyWarning({ name: "edge" }, 2)).toMatch(/SSH closed; set sshKeyName to a key/);
  });
});

/** hcloud-go's label key pattern (hcloud/labels.go `keyRegexp`, v2.32.0 as vendored by CAPH v1.1.8), which Hetzner's API enforces. */
const hcloudLabelKey = /^([a-z0-9A-Z]((?:[-_.]|[a-z0-9A-Z]){0,253}[a-z0-9A-Z])?\/)?[a-z0-9A-Z]((?:[-_.]|[a-z0-9A-Z]|){0,61}[a-z0-9A-Z])?$/;

describe("tenant names and CAPH's ownership label", () => {
  const named = (length: number) => `t${"a".repeat(length - 1)}`;

  it("accepts exactly the names whose label key Hetzner accepts", () => {
    for (const length of [1, 20, maxTenantNameLength, maxTenantNameLength + 1, 63]) {
      const name = named(length);
      expect(tenantNameLabelProblem(name) === undefined, `${length} characters`).toBe(hcloudLabelKey.test(caphServerOwnershipLabel(hetznerClusterNameOf(name)).key));
    }
    expect(tenantNameLabelProblem(named(maxTenantNameLength))).toBeUndefined();
    expect(tenantNameLabelProblem(named(maxTenantNameLength + 1))).toMatch(/has 51 characters; allowed: at most 50, because CAPH labels/);
  });

  it("a name too long for the label is refused by validation, naming the key path", () => {
    const { values, secretKeys } = readStackConfig("dev");
    const long = named(maxTenantNameLength + 1);
    const tenants = (JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[]).map((tenant) => ({ ...tenant, name: long }));
    values["capi-fleet:tenants"] = JSON.stringify(tenants);
    values["capi-fleet:tenantHcloudTokens"] = JSON.stringify({ [long]: JSON.parse(values["capi-fleet:tenantHcloudTokens"]!)["dev-a"] as string });
    let problems: readonly { path: string; message: string }[] = [];
    try {
      parseFleetConfig({ stack: "dev", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
    } catch (error) {
      if (!(error instanceof FleetConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toEqual([{ path: "tenants[0].name", message: expect.stringContaining("allowed: at most 50") }]);
  });
});
