import * as pulumi from "@pulumi/pulumi";
import { deployedStateType, deployedVersionsOutputName } from "../../infra/model/policy-facts";
import type { TenantUpgrade } from "../../infra/model/tenant-upgrades";

/** Arguments of {@link DeployedState}. */
export interface DeployedStateArgs {
  /** The tenants' plans; each knows the version its Cluster ran after the last update. */
  upgrades: readonly TenantUpgrade[];
}

/**
 * Publishes what each tenant runs, as the program read it from the stack's last outputs, for
 * the policy pack: the engine never shows stack rules the StackReference the program reads it
 * with (infra/model/policy-facts.ts). Creates nothing.
 */
export class DeployedState extends pulumi.ComponentResource {
  constructor(name: string, args: DeployedStateArgs, opts?: pulumi.ComponentResourceOptions) {
    super(deployedStateType, name, {}, opts);
    const versions = Object.fromEntries(args.upgrades.flatMap((upgrade) => (upgrade.deployed === undefined ? [] : [[upgrade.tenant, upgrade.deployed]])));
    this.registerOutputs({ [deployedVersionsOutputName]: versions });
  }
}
