// A management stack with shards reads which tenants each shard declares, from the shard's last
// outputs, and publishes the whole fleet's tenants (`fleetTenants`) for its shards and the pack.
import * as pulumi from "@pulumi/pulumi";
import type { FleetConfig } from "./model/stack/validate-fleet-config";
import { fleetTenantsOf, type FleetTenant } from "./model/config/shards";
import { deployedImmutablesFrom } from "./model/tenant/tenant-immutables";
import { deployedVersionsFrom } from "./model/versions/tenant-upgrades";
import { FleetConfigError } from "./model/config/stack-config";
import { stackOutputs } from "./model/contract/outputs";

/**
 * The fleet's tenants: this stack's (with the versions its last update deployed, none for new
 * ones) and each shard's from its last `tenantVersions` and `tenantImmutables` outputs. A shard
 * that was never updated has no outputs and contributes nothing yet.
 */
export async function readShardTenants(self: string, config: Pick<FleetConfig, "stack" | "tenants">, shards: readonly string[]): Promise<Record<string, FleetTenant>> {
  const stacks: { stack: string; tenants: Map<string, { namespace: string; version?: string }> }[] = [
    { stack: self, tenants: new Map(config.tenants.map((tenant) => [tenant.name, { namespace: tenant.namespace }])) },
  ];
  for (const [index, shard] of shards.entries()) {
    let versionsValue: unknown;
    let immutablesValue: unknown;
    try {
      const reference = new pulumi.StackReference(`shard-${index}`, { name: shard });
      versionsValue = (await reference.getOutputDetails(stackOutputs.tenantVersions)).value;
      immutablesValue = (await reference.getOutputDetails(stackOutputs.tenantImmutables)).value;
    } catch (error) {
      throw new pulumi.RunError(new FleetConfigError(config.stack, [{ path: `shards[${index}]`, message: `cannot read stack ${shard}: ${String(error)}` }]).message);
    }
    const { versions } = deployedVersionsFrom(versionsValue);
    const { immutables } = deployedImmutablesFrom(immutablesValue);
    const tenants = new Map<string, { namespace: string; version?: string }>();
    for (const name of new Set([...versions.keys(), ...immutables.keys()])) {
      const version = versions.get(name);
      tenants.set(name, { namespace: immutables.get(name)?.namespace ?? name, ...(version === undefined ? {} : { version }) });
    }
    stacks.push({ stack: shard, tenants });
  }
  return fleetTenantsOf(stacks);
}
