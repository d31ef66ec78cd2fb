import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { settle } from "../tests/support/pulumi-mocks";
import { installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { readStackConfig } from "../tests/support/stack-files";
import { loadStackConfig } from "./config";
import { planTenantUpgradesOrStop } from "./deployed-state";
import { createShard, readManagementStack } from "./shard";
import { readShardTenants } from "./shard-tenants";
import { type FleetPlatform, type FleetTenant } from "./model/config/shards";
import { shardValues } from "../tests/support/fleet-config-fixtures";
import { configKeys } from "./model/config/stack-config";
import { stackOutputs } from "./model/contract/outputs";
import { componentTypes } from "./model/contract/component-types";

// A shard stack: tenants only, on the management stack's cluster (docs/architecture.md, Scaling out).

const prod = readStackConfig("prod");
const prodTenants = JSON.parse(prod.values[configKeys.tenants]!) as { name: string; namespace?: string; apps?: unknown }[];
const edge = prodTenants.find((tenant) => tenant.name === "edge")!;

const platform: FleetPlatform = {
  fleetName: "capi-fleet-prod",
  deletionProtection: true,
  adminCidrs: ["203.0.113.0/24"],
  gitops: false,
  mirrors: {},
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
  [stackOutputs.fleetPlatform]: platform,
  [stackOutputs.fleetTenants]: tenants,
  [stackOutputs.managementKubeconfig]: "# stand-in kubeconfig\n",
});

describe("the shard program", () => {
  it("registers its tenants on the management cluster through a provider of its own, after the shard's marker, with the management stack's settings", async () => {
    // With an sshKeyName, the tenant's firewall opens SSH to the management stack's adminCidrs.
    const registrations = await runShard(shardValues([{ ...edge, sshKeyName: "ops" }]), published());
    expect(registrations.filter((r) => r.type.startsWith("capi-fleet:management:") || r.type.startsWith("capi-fleet:platform:"))).toEqual([]);
    const provider = registrations.find((r) => r.type === "pulumi:providers:kubernetes")!;
    expect(provider.secretInputs).toContain("kubeconfig");
    expect(provider.inputs.clusterIdentifier).toBe("capi-fleet-prod-management");
    const reference = registrations.find((r) => r.type === componentTypes.managementReference)!;
    expect(reference.outputs).toMatchObject({ imported: platform.declared, peerTenantVersions: {} });
    const marker = registrations.find((r) => r.type === "kubernetes:core/v1:ConfigMap" && r.parent === reference.urn)!;
    expect(marker.inputs.metadata).toMatchObject({ name: "capi-fleet-shard-prod-shard-a", namespace: "capi-fleet-system" });
    const cluster = registrations.find((r) => r.type === "kubernetes:cluster.x-k8s.io/v1beta2:Cluster")!;
    expect(cluster.dependencies).toContain(marker.urn);
    expect(cluster.protect).toBe(true);
    const firewall = registrations.find((r) => r.type === "hcloud:index/firewall:Firewall")!;
    expect(JSON.stringify(firewall.inputs.rules)).toContain("203.0.113.0/24");
  });

  it("installs its tenants' add-on charts from the management stack's charts mirror", async () => {
    const mirror = "oci://registry.example.com/charts";
    const registrations = await runShard(shardValues([edge]), { ...published(), [stackOutputs.fleetPlatform]: { ...platform, mirrors: { charts: mirror } } });
    const proxies = registrations.filter((r) => r.type === "kubernetes:addons.cluster.x-k8s.io/v1alpha1:HelmChartProxy");
    expect(proxies.map((proxy) => proxy.name).sort()).toEqual(["tenant-edge-hcloud-ccm", "tenant-edge-hcloud-csi"]);
    for (const proxy of proxies) expect((proxy.inputs.spec as { repoURL: string }).repoURL, proxy.name).toBe(mirror);
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
    expect(registrations.find((r) => r.type === componentTypes.managementReference)!.outputs).toMatchObject({ peerTenantVersions: { analytics: "v1.35.3" } });
  });
});

describe("a management stack with shards", () => {
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
