import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { type FleetPlatform } from "../../infra/model/config/shards";
import { shardMarker } from "../../infra/model/management/management-reference";
import { DeclaredFacts } from "../policy-facts";
import { componentTypes } from "../../infra/model/contract/component-types";
import { componentOutputs } from "../../infra/model/contract/outputs";

/** Arguments of {@link ManagementReference}. */
export interface ManagementReferenceArgs {
  /** The management stack (fully qualified). */
  managementStack: string;
  /** This shard stack (fully qualified). */
  shardStack: string;
  /** What the management stack published for its shards (its `fleetPlatform` output). */
  platform: FleetPlatform;
  /** The Kubernetes versions of the tenants of the fleet's other stacks, from the management stack's `fleetTenants`. */
  peerTenantVersions: Record<string, string>;
  /** This shard's tenants (name and namespace), written into its marker. */
  tenants: readonly { name: string; namespace: string }[];
}

/**
 * A shard stack's handle on its management stack. Its one child, the shard's marker ConfigMap in
 * the management cluster (`capi-fleet-system/capi-fleet-shard-<stack>`: which stack declares which
 * tenants, for operators and `kubectl`), is what the shard's tenants depend on. Its outputs give
 * the policy pack what the management stack's components declared (`imported`) and the other
 * stacks' tenant versions, so the shard's stack rules judge its tenants against the fleet's
 * platform (policies/lib/fleet-resources.ts, declaredView).
 */
export class ManagementReference extends pulumi.ComponentResource {
  /** The shard's marker; depend on this component to wait for it. */
  public readonly marker: k8s.core.v1.ConfigMap;

  constructor(name: string, args: ManagementReferenceArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.managementReference, name, { managementStack: args.managementStack }, opts);
    const facts = new DeclaredFacts();
    const markerInputs = shardMarker(args);
    this.marker = facts.add(new k8s.core.v1.ConfigMap(`${name}-marker`, markerInputs, { parent: this }), markerInputs);
    this.registerOutputs({
      managementStack: args.managementStack,
      [componentOutputs.imported]: args.platform.declared,
      [componentOutputs.peerTenantVersions]: args.peerTenantVersions,
      ...facts.outputs(),
    });
  }
}
