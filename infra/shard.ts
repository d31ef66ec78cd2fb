// A shard stack (`managementStack` set): tenants only, on the management cluster and platform of
// another stack, read from that stack's outputs through a StackReference (docs/architecture.md,
// *Scaling out: shard stacks*).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { DeployedState } from "../components/deployed-state";
import { ManagementReference } from "../components/management-reference";
import type { TenantCluster } from "../components/tenant-cluster";
import type { ShardConfig } from "./model/stack/validate-fleet-config";
import { createTenants } from "./fleet";
import { fleetPlatformFrom, fleetTenantsFrom, ownershipProblems, peerTenantVersions, type FleetPlatform, type FleetTenant } from "./model/config/shards";
import { tenantImmutablesOutput } from "./model/tenant/tenant-immutables";
import { tenantVersionsOutput, type TenantUpgrade } from "./model/versions/tenant-upgrades";
import { configKeys, FleetConfigError, keyPath, type ConfigProblem } from "./model/config/stack-config";
import { stackOutputs } from "./model/contract/outputs";

/** What a shard reads from its management stack. */
export interface ManagementStack {
  readonly name: string;
  readonly kubeconfig: pulumi.Output<string>;
  readonly platform: FleetPlatform;
  readonly fleetTenants: ReadonlyMap<string, FleetTenant>;
}

/**
 * Reads the management stack's last outputs (offline: from the backend). Stops the program,
 * naming `managementStack`, when the stack cannot be read or has not published `fleetPlatform`
 * (it was never updated with a release that supports shards).
 */
export async function readManagementStack(stack: string, name: string): Promise<ManagementStack> {
  let platformValue: unknown;
  let tenantsValue: unknown;
  let reference: pulumi.StackReference;
  try {
    reference = new pulumi.StackReference("management-stack", { name });
    platformValue = (await reference.getOutputDetails(stackOutputs.fleetPlatform)).value;
    tenantsValue = (await reference.getOutputDetails(stackOutputs.fleetTenants)).value;
  } catch (error) {
    throw new pulumi.RunError(new FleetConfigError(stack, [{ path: keyPath(configKeys.managementStack), message: `cannot read stack ${name}: ${String(error)}` }]).message);
  }
  const platform = fleetPlatformFrom(platformValue);
  if ("problem" in platform) {
    throw new pulumi.RunError(new FleetConfigError(stack, [{ path: keyPath(configKeys.managementStack), message: `stack ${name}: ${platform.problem}` }]).message);
  }
  return {
    name,
    kubeconfig: pulumi.secret(reference.requireOutput(stackOutputs.managementKubeconfig).apply((value) => String(value))),
    platform: platform.platform,
    fleetTenants: fleetTenantsFrom(tenantsValue),
  };
}

/** Problems of a shard's tenants against its management stack (gitops for `apps`, tenants of other stacks). */
export function shardProblems(config: ShardConfig, self: string, management: Omit<ManagementStack, "kubeconfig">): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  config.tenants.forEach((tenant, index) => {
    if (tenant.apps && !management.platform.gitops) {
      problems.push({ path: `tenants[${index}].apps`, message: `needs gitops in the management stack ${management.name} (Flux syncs the apps from the fleet repository); set gitops there or remove apps` });
    }
  });
  return [...problems, ...ownershipProblems(self, config.tenants, management.fleetTenants)];
}

/** What a shard stack exports. */
export interface ShardOutputs {
  tenants: ReadonlyMap<string, TenantCluster>;
  outputs: Record<string, pulumi.Output<unknown>>;
}

/**
 * Builds a shard: a Kubernetes provider for the management cluster (its kubeconfig from the
 * management stack), the ManagementReference its tenants wait for, the tenants as in a whole
 * fleet, and the DeployedState the pack reads. `self` is this stack's qualified name.
 */
export function createShard(
  config: ShardConfig,
  self: string,
  management: ManagementStack,
  upgrades: readonly TenantUpgrade[],
  /** The engine runs resource hooks (resourceHooksAvailable): the tenants' Helm releases get the hooks that clear an interrupted `up`. */
  resourceHooks = false,
): ShardOutputs {
  const problems = shardProblems(config, self, management);
  if (problems.length > 0) throw new pulumi.RunError(new FleetConfigError(config.stack, problems).message);
  const platform = management.platform;
  // The same cluster identifier as the management stack's provider (components/management-cluster).
  const provider = new k8s.Provider("management-k8s", { kubeconfig: management.kubeconfig, clusterIdentifier: `${platform.fleetName}-management` });
  const reference = new ManagementReference(
    "management",
    { managementStack: management.name, shardStack: self, platform, peerTenantVersions: peerTenantVersions(self, management.fleetTenants), tenants: config.tenants },
    { providers: [provider] },
  );
  const tenants = createTenants(config.tenants, {
    provider,
    managementKubeconfig: management.kubeconfig,
    // The management stack's `up` awaited the class and CAREN's discovery before it
    // published fleetPlatform; the marker makes the tenants wait for the reference.
    clusterClass: reference,
    carenReady: reference,
    fluxInstance: platform.gitops ? reference : undefined,
    dependsOn: [reference],
    deletionProtection: platform.deletionProtection,
    adminCidrs: platform.adminCidrs,
    mirrors: platform.mirrors,
    ...(resourceHooks ? { releaseRecovery: { kubeconfig: management.kubeconfig } } : {}),
  });
  new DeployedState("deployed-tenant-versions", { upgrades });
  const kubeconfigs = Object.fromEntries([...tenants].map(([name, tenant]) => [name, tenant.kubeconfig]));
  return {
    tenants,
    outputs: {
      [stackOutputs.managementStack]: pulumi.output(management.name),
      [stackOutputs.tenantVersions]: pulumi.output(tenantVersionsOutput(upgrades)),
      [stackOutputs.tenantImmutables]: pulumi.output(tenantImmutablesOutput(config.tenants)),
      [stackOutputs.tenantKubeconfigs]: pulumi.secret(pulumi.all(kubeconfigs)),
    },
  };
}
