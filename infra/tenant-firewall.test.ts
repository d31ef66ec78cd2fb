import * as pulumi from "@pulumi/pulumi";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { everyoneIn, managementAdminPortsClosed } from "../policies/rules/management-admin-ports-closed";
import { evaluate } from "../policies/testing/harness";
import { byType, one, runStack, waitsFor } from "../tests/support/fleet-run";
import { engineViewOfRegistrations } from "../tests/support/policy-resources";
import type { Registration } from "../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../tests/support/stack-files";
import { tenantServerLabelSelector } from "./model/tenant/tenant-firewall";

// Each tenant's firewall under mocks: in the tenant's own Hetzner project (its provider and
// token), applied to exactly the servers CAPH labels as that tenant's, before the Cluster.

const firewallType = "hcloud:index/firewall:Firewall";
const providerType = "pulumi:providers:hcloud";
const clusterType = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster";

const prodTenants = (JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as { name: string }[]).map((t) => t.name);

interface Rule {
  port?: string;
  protocol: string;
  sourceIps: string[];
}

describe("the prod tenants' firewalls", () => {
  let registrations: Registration[];

  beforeAll(async () => {
    ({ registrations } = await runStack("prod"));
  });

  it("registers one firewall per tenant besides the management one", () => {
    const tenantFirewalls = byType(registrations, firewallType).filter((r) => r.urn.includes("capi-fleet:tenants:TenantCluster$"));
    expect(tenantFirewalls.map((r) => r.name).sort()).toEqual(prodTenants.map((name) => `tenant-${name}-firewall`).sort());
    expect(byType(registrations, firewallType)).toHaveLength(prodTenants.length + 1);
  });

  it.each(prodTenants)("%s: the firewall uses the tenant's own provider and token, not the management one", (tenant) => {
    const firewall = one(registrations, firewallType, `tenant-${tenant}-firewall`);
    const provider = one(registrations, providerType, `tenant-${tenant}-hcloud`);
    const management = one(registrations, providerType, "management-hcloud");
    expect(firewall.provider.split("::").slice(0, -1).join("::")).toBe(provider.urn);
    expect(firewall.provider.startsWith(`${management.urn}::`)).toBe(false);
    expect(provider.inputs.token).toBe(fakeHcloudToken(`capi-fleet:tenantHcloudTokens.${tenant}`));
    expect(provider.secretInputs).toContain("token");
  });

  it.each(prodTenants)("%s: applies to the servers CAPH labels as the tenant Cluster's, and exists before the Cluster", (tenant) => {
    const firewall = one(registrations, firewallType, `tenant-${tenant}-firewall`);
    const cluster = one(registrations, clusterType, `tenant-${tenant}`);
    const clusterName = (cluster.inputs.metadata as { name: string }).name;
    expect(firewall.inputs.applyTos).toEqual([{ labelSelector: tenantServerLabelSelector(clusterName) }]);
    expect(waitsFor(registrations, cluster, firewall)).toBe(true);
  });

  it("the selectors are all different: none matches another tenant's servers", () => {
    const selectors = prodTenants.map((tenant) => (one(registrations, firewallType, `tenant-${tenant}-firewall`).inputs.applyTos as { labelSelector: string }[])[0]!.labelSelector);
    expect(new Set(selectors).size).toBe(prodTenants.length);
  });

  it("opens nothing to the whole Internet and SSH to nobody (no tenant has an SSH key)", () => {
    for (const tenant of prodTenants) {
      const rules = one(registrations, firewallType, `tenant-${tenant}-firewall`).inputs.rules as Rule[];
      expect(rules.flatMap((rule) => everyoneIn(rule.sourceIps))).toEqual([]);
      expect(rules.filter((rule) => rule.port === "22")).toEqual([]);
    }
  });

  it("would notice a Cluster that does not wait for the firewall (negative control)", () => {
    const firewall = one(registrations, firewallType, "tenant-payments-firewall");
    const cluster = one(registrations, clusterType, "tenant-payments");
    expect(waitsFor(registrations, { ...cluster, dependencies: [] }, firewall)).toBe(false);
    expect(tenantServerLabelSelector("payments")).not.toBe(tenantServerLabelSelector("analytics"));
  });
});

describe("SSH to tenant servers and the admin-ports policy", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** dev with an SSH key on its tenant and the given admin networks. */
  const devWith = (adminCidrs: string[]) => (values: Record<string, string>) => {
    const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
    values["capi-fleet:management"] = JSON.stringify({ ...management, adminCidrs, allowAdminFromAnywhere: true });
    const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[];
    values["capi-fleet:tenants"] = JSON.stringify(tenants.map((tenant) => ({ ...tenant, sshKeyName: "ops" })));
  };

  it("dev: warns that the tenant has no SSH key, naming the key path", async () => {
    const warn = vi.spyOn(pulumi.log, "warn");
    await runStack("dev");
    expect(warn.mock.calls.map(([message]) => message)).toContainEqual(expect.stringMatching(/^tenants\[0\]\.sshKeyName is not set: tenant "dev-a"/));
  });

  it("with a key, SSH is open to the admin networks and the pack's rule passes the tenant firewall", async () => {
    const warn = vi.spyOn(pulumi.log, "warn");
    const { registrations } = await runStack("dev", devWith(["198.51.100.0/24"]));
    const rules = one(registrations, firewallType, "tenant-dev-a-firewall").inputs.rules as Rule[];
    expect(rules.filter((rule) => rule.port === "22").map((rule) => rule.sourceIps)).toEqual([["198.51.100.0/24"]]);
    expect(warn.mock.calls.map(([message]) => message)).not.toContainEqual(expect.stringContaining("sshKeyName is not set"));
    expect(await evaluate([managementAdminPortsClosed], engineViewOfRegistrations(registrations))).toEqual([]);
  });

  it("admin networks open to everyone trip the rule on the tenant firewall too (negative control)", async () => {
    const { registrations } = await runStack("dev", devWith(["0.0.0.0/0"]));
    const violations = await evaluate([managementAdminPortsClosed], engineViewOfRegistrations(registrations));
    expect(violations.map((violation) => violation.message).filter((message) => message.includes('"dev-a-nodes"'))).toEqual([
      expect.stringContaining('Firewall "dev-a-nodes" opens port 22 to 0.0.0.0/0'),
    ]);
  });
});
