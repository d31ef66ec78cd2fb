import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { settle } from "../tests/fleet-run";
import { installRecordingMocks, valueOf, type Registration } from "../tests/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../tests/stack-files";
import { loadStackConfig } from "./config";
import { planTenantUpgradesOrStop } from "./deployed-state";
import { createShard, managementKubeconfigOutputName, readManagementStack } from "./shard";
import { readShardTenants } from "./shard-tenants";
import { fleetPlatformOutputName, fleetTenantsOutputName, managementReferenceType, tenantsPerStack, type FleetPlatform, type FleetTenant } from "./model/config/shards";
import { configKeys, FleetConfigError, parseFleetConfig, parseShardConfig } from "./model/config/validate-fleet-config";

// A shard stack: tenants only, on the management stack's cluster (docs/architecture.md, Scaling out).

const prod = readStackConfig("prod");
const prodTenants = JSON.parse(prod.values[configKeys.tenants]!) as { name: string; namespace?: string; apps?: unknown }[];
const edge = prodTenants.find((tenant) => tenant.name === "edge")!;

/** A shard stack's config values: `tenants` with a token each. */
function shardValues(tenants: readonly object[], extra: Record<string, string> = {}): { values: Record<string, string>; secretKeys: string[] } {
  return {
    values: {
      [configKeys.managementStack]: "prod",
      [configKeys.tenants]: JSON.stringify(tenants),
      [configKeys.tenantHcloudTokens]: JSON.stringify(Object.fromEntries(tenants.map((tenant) => [(tenant as { name: string }).name, fakeHcloudToken(`t`)]))),
      ...extra,
    },
    secretKeys: [configKeys.tenantHcloudTokens],
  };
}

const parse = (config: { values: Record<string, string>; secretKeys: string[] }, stack = "prod-shard-a") =>
  parseShardConfig({ stack, values: config.values, secretKeys: new Set(config.secretKeys), allowPlaceholderSecrets: true });

const problemsOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof FleetConfigError) return error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    throw error;
  }
  return [];
};

/** `count` copies of edge under other names (each in its own namespace). */
const copiesOfEdge = (count: number) => Array.from({ length: count }, (_, index) => ({ ...edge, name: `edge-${index}`, namespace: `edge-${index}` }));

describe("a shard stack's config", () => {
  it("holds tenants and the management stack's name, nothing of the management cluster", () => {
    const config = parse(shardValues([edge]));
    expect(config.managementStack).toBe("prod");
    expect(config.tenants.map((tenant) => tenant.name)).toEqual(["edge"]);
    const withManagement = shardValues([edge], { [configKeys.management]: prod.values[configKeys.management]!, [configKeys.gitops]: "{}", [configKeys.shards]: "[]" });
    expect(problemsOf(() => parse(withManagement))).toEqual([
      expect.stringMatching(/^management: is not allowed in a shard stack \(managementStack is set\)/),
      expect.stringMatching(/^gitops: is not allowed in a shard stack/),
      expect.stringMatching(/^shards: is not allowed in a shard stack/),
    ]);
  });

  it("names a bad managementStack, and needs tenants", () => {
    expect(problemsOf(() => parse({ ...shardValues([]), values: { ...shardValues([]).values, [configKeys.managementStack]: "a b" } }))).toEqual([
      'managementStack: "a b" is not a stack name; allowed: stack, project/stack or organization/project/stack',
      expect.stringMatching(/^tenants: a shard stack needs at least one tenant/),
    ]);
    expect(problemsOf(() => parse(shardValues([edge]), "prod"))).toEqual([expect.stringMatching(/^managementStack: "prod" names this stack itself/)]);
  });

  it("is not read as a stack with a management cluster", () => {
    expect(problemsOf(() => parseFleetConfig({ stack: "prod-shard-a", values: shardValues([edge]).values, secretKeys: new Set(), allowPlaceholderSecrets: true }))).toEqual([
      expect.stringMatching(/^managementStack: makes this a shard stack/),
    ]);
  });
});

describe("the limit of tenants per stack", () => {
  it(`warns above ${tenantsPerStack.recommended} tenants and refuses above ${tenantsPerStack.maximum}, in shard stacks and in a stack with the management cluster`, () => {
    expect(parse(shardValues(copiesOfEdge(tenantsPerStack.recommended))).warnings.filter((warning) => warning.path === "tenants")).toEqual([]);
    expect(parse(shardValues(copiesOfEdge(tenantsPerStack.recommended + 1))).warnings.filter((warning) => warning.path === "tenants")).toEqual([
      { path: "tenants", message: expect.stringContaining(`above the documented limit of ${tenantsPerStack.recommended}`) },
    ]);
    expect(problemsOf(() => parse(shardValues(copiesOfEdge(tenantsPerStack.maximum + 1))))).toEqual([expect.stringMatching(new RegExp(`^tenants: ${tenantsPerStack.maximum + 1} tenants in one stack; allowed: at most ${tenantsPerStack.maximum}`))]);
    const tenants = copiesOfEdge(tenantsPerStack.recommended + 1);
    const fleet = parseFleetConfig({
      stack: "prod",
      values: {
        ...prod.values,
        [configKeys.tenants]: JSON.stringify(tenants),
        [configKeys.tenantHcloudTokens]: JSON.stringify(Object.fromEntries(tenants.map((tenant) => [tenant.name, fakeHcloudToken("t")]))),
        [configKeys.tenantRegistryCredentials]: "{}",
      },
      secretKeys: new Set(prod.secretKeys),
      allowPlaceholderSecrets: true,
    });
    expect(fleet.warnings.filter((warning) => warning.path === "tenants")).toHaveLength(1);
  });

  it("follows the stack's own tenantsPerStack (a bigger runner): no warning up to it, a refusal above it, and a clear error for a bad value", () => {
    const many = copiesOfEdge(tenantsPerStack.maximum + 1);
    const own = (limit: string) => shardValues(many, { [configKeys.tenantsPerStack]: limit });
    expect(parse(own(String(tenantsPerStack.maximum + 1))).warnings.filter((warning) => warning.path === "tenants")).toEqual([]);
    expect(problemsOf(() => parse(own(String(tenantsPerStack.maximum))))).toEqual([expect.stringMatching(/^tenants: \d+ tenants in one stack; allowed: at most \d+ \(this stack's tenantsPerStack\)/)]);
    expect(problemsOf(() => parse(own("0")))).toEqual(["tenantsPerStack: 0 is not allowed; allowed: a whole number of tenants, at least 1", expect.stringMatching(/^tenants: /)]);
  });
});

const platform: FleetPlatform = {
  fleetName: "capi-fleet-prod",
  deletionProtection: true,
  adminCidrs: ["203.0.113.0/24"],
  gitops: false,
  declared: [{ urn: "urn:pulumi:prod::capi-fleet::capi-fleet:tenants:HetznerClusterClass$kubernetes:cluster.x-k8s.io/v1beta2:ClusterClass::hetzner-cluster-class", props: { metadata: { name: "hetzner-caren" } } }],
};

/** Runs the shard program under the mocks, the management stack's outputs being `published`. */
async function runShard(config: { values: Record<string, string>; secretKeys: string[] }, published: Record<string, unknown>): Promise<Registration[]> {
  const registrations = await installRecordingMocks("capi-fleet", "prod-shard-a", true, published);
  pulumi.runtime.setAllConfig(config.values, config.secretKeys);
  const loaded = loadStackConfig();
  if (loaded.role !== "shard") throw new Error("not a shard");
  const management = await readManagementStack("prod-shard-a", "organization/capi-fleet/prod");
  const shard = createShard(loaded.config, "organization/capi-fleet/prod-shard-a", management, planTenantUpgradesOrStop(loaded.config, new Map()));
  expect(await pulumi.isSecret(shard.outputs.tenantKubeconfigs!)).toBe(true);
  await valueOf(shard.outputs.tenantVersions!);
  await settle(registrations);
  return registrations;
}

const published = (tenants: Record<string, FleetTenant> = {}) => ({
  [fleetPlatformOutputName]: platform,
  [fleetTenantsOutputName]: tenants,
  [managementKubeconfigOutputName]: "# stand-in kubeconfig\n",
});

describe("the shard program", () => {
  it("registers its tenants on the management cluster through a provider of its own, after the shard's marker, with the management stack's settings", async () => {
    // With an sshKeyName, the tenant's firewall opens SSH to the management stack's adminCidrs.
    const registrations = await runShard(shardValues([{ ...edge, sshKeyName: "ops" }]), published());
    expect(registrations.filter((r) => r.type.startsWith("capi-fleet:management:") || r.type.startsWith("capi-fleet:platform:"))).toEqual([]);
    const provider = registrations.find((r) => r.type === "pulumi:providers:kubernetes")!;
    expect(provider.secretInputs).toContain("kubeconfig");
    expect(provider.inputs.clusterIdentifier).toBe("capi-fleet-prod-management");
    const reference = registrations.find((r) => r.type === managementReferenceType)!;
    expect(reference.outputs).toMatchObject({ imported: platform.declared, peerTenantVersions: {} });
    const marker = registrations.find((r) => r.type === "kubernetes:core/v1:ConfigMap" && r.parent === reference.urn)!;
    expect(marker.inputs.metadata).toMatchObject({ name: "capi-fleet-shard-prod-shard-a", namespace: "capi-fleet-system" });
    const cluster = registrations.find((r) => r.type === "kubernetes:cluster.x-k8s.io/v1beta2:Cluster")!;
    expect(cluster.dependencies).toContain(marker.urn);
    expect(cluster.protect).toBe(true);
    const firewall = registrations.find((r) => r.type === "hcloud:index/firewall:Firewall")!;
    expect(JSON.stringify(firewall.inputs.rules)).toContain("203.0.113.0/24");
  });

  it("refuses a tenant another stack declares, and apps without the management stack's gitops, before registering anything but the reads", async () => {
    const other = { stack: "organization/capi-fleet/prod-shard-b", namespace: "elsewhere", version: "v1.33.10" };
    await expect(runShard(shardValues([edge]), published({ edge: other }))).rejects.toThrow(/tenants\[0\]\.name: "edge" is a tenant of stack organization\/capi-fleet\/prod-shard-b/);
    await expect(runShard(shardValues([{ ...edge, apps: { path: "apps/edge" } }]), published())).rejects.toThrow(/tenants\[0\]\.apps: needs gitops in the management stack/);
  });

  it("stops, naming managementStack, when the management stack has not published fleetPlatform", async () => {
    await expect(runShard(shardValues([edge]), {})).rejects.toThrow(/managementStack: stack organization\/capi-fleet\/prod: the stack has no fleetPlatform output/);
  });

  it("hands the pack the other stacks' tenant versions", async () => {
    const registrations = await runShard(shardValues([edge]), published({ analytics: { stack: "organization/capi-fleet/prod-shard-b", namespace: "analytics", version: "v1.35.3" } }));
    expect(registrations.find((r) => r.type === managementReferenceType)!.outputs).toMatchObject({ peerTenantVersions: { analytics: "v1.35.3" } });
  });
});

describe("a management stack with shards", () => {
  const withShards = (shards: unknown) =>
    parseFleetConfig({ stack: "prod", values: { ...prod.values, [configKeys.shards]: JSON.stringify(shards) }, secretKeys: new Set(prod.secretKeys), allowPlaceholderSecrets: true });

  it("lists its shards by stack name, each once", () => {
    expect(withShards(["prod-shard-a", "capi-fleet/prod-shard-b", "org/capi-fleet/prod-shard-c"]).shards).toEqual(["prod-shard-a", "capi-fleet/prod-shard-b", "org/capi-fleet/prod-shard-c"]);
    expect(parseFleetConfig({ stack: "prod", values: prod.values, secretKeys: new Set(prod.secretKeys), allowPlaceholderSecrets: true }).shards).toEqual([]);
    expect(problemsOf(() => withShards("prod-shard-a"))).toEqual(['shards: expected a list of stack names, got "prod-shard-a"']);
    expect(problemsOf(() => withShards(["a b", 3, "prod-shard-a", "prod-shard-a"]))).toEqual([
      'shards[0]: "a b" is not a stack name; allowed: stack, project/stack or organization/project/stack',
      "shards[1]: 3 is not a stack name; allowed: stack, project/stack or organization/project/stack",
      'shards[3]: "prod-shard-a" is listed twice',
    ]);
  });

  it("reads which tenants each shard declares from its last outputs, with their namespaces and versions", async () => {
    await installRecordingMocks("capi-fleet", "prod", true, {
      tenantVersions: { analytics: { deployed: "v1.35.3", target: "v1.35.3", controlPlaneSteps: [], workerSteps: [] } },
      tenantImmutables: { analytics: { namespace: "team-analytics", nodesCidr: "10.0.0.0/16", nodesSubnetCidr: "10.0.0.0/24", podsCidr: "10.244.0.0/16", servicesCidr: "10.96.0.0/12", firstRegion: "fsn1", kubeProxyReplacement: false } },
    });
    const fleet = await readShardTenants("org/capi-fleet/prod", { stack: "prod", tenants: [{ name: "payments", namespace: "payments" }] as never }, ["org/capi-fleet/prod-shard-b"]);
    expect(fleet).toEqual({
      payments: { stack: "org/capi-fleet/prod", namespace: "payments" },
      analytics: { stack: "org/capi-fleet/prod-shard-b", namespace: "team-analytics", version: "v1.35.3" },
    });
  });
});
