import * as pulumi from "@pulumi/pulumi";
import type { TenantUpgrade } from "../../infra/model/versions/tenant-upgrades";
import { componentTypes } from "../../infra/model/contract/component-types";
import { componentOutputs, stackOutputs } from "../../infra/model/contract/outputs";

/** Arguments of {@link DeployedState}. */
export interface DeployedStateArgs {
  /** The tenants' plans; each knows the version its Cluster ran after the last update. */
  upgrades: readonly TenantUpgrade[];
  /** The k3s release the management servers' Plan was set to by the last update (undefined: none yet, or `existing` mode). */
  managementK3sVersion?: string;
  /** A management stack with shards: the versions of the shards' tenants after their last update. */
  peerTenantVersions?: Record<string, string>;
}

/**
 * Publishes what each tenant and the management servers run, as the program read it from the
 * stack's last outputs, for the policy pack: the engine never shows stack rules the
 * StackReference the program reads it with (infra/model/contract/policy-facts.ts). Creates nothing.
 */
export class DeployedState extends pulumi.ComponentResource {
  constructor(name: string, args: DeployedStateArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.deployedState, name, {}, opts);
    const versions = Object.fromEntries(args.upgrades.flatMap((upgrade) => (upgrade.deployed === undefined ? [] : [[upgrade.tenant, upgrade.deployed]])));
    this.registerOutputs({
      [stackOutputs.tenantVersions]: versions,
      ...(args.managementK3sVersion === undefined ? {} : { [stackOutputs.managementK3sVersion]: args.managementK3sVersion }),
      ...(args.peerTenantVersions === undefined ? {} : { [componentOutputs.peerTenantVersions]: args.peerTenantVersions }),
    });
  }
}
