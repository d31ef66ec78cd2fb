import type { PolicyResource } from "@pulumi/policy";
import { stackRule } from "../lib/define";
import { clustersIn, ofType, resourceTypes } from "../lib/fleet-resources";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** A delete-only command that runs the drain script. */
function isDrain(resource: PolicyResource): boolean {
  const { create, update, delete: onDelete } = resource.props as { create?: unknown; update?: unknown; delete?: unknown };
  return typeof onDelete === "string" && onDelete.includes(scriptEntryPoints.drainLoadBalancers) && create === undefined && update === undefined;
}

/**
 * CAREN skips its LB GC once CAPI marks the Cluster Deleting, so the program drains
 * LoadBalancer Services first; Pulumi deletes dependents first, so the drain must depend on
 * the Cluster.
 */
export const lbDrainBeforeClusterDelete = stackRule({
  name: "lb-drain-before-cluster-delete",
  description: "Every tenant Cluster has a delete-only load-balancer drain command that depends on it (so the drain runs before the Cluster is deleted).",
  enforcementLevel: "mandatory",
  remediationSteps: "Declare tenants through the TenantCluster component, which adds the drain; do not remove its dependency on the Cluster.",
  validate: (resources, _config, report) => {
    const drains = ofType(resources, resourceTypes.localCommand).filter(isDrain);
    for (const { resource, cluster } of clustersIn(resources)) {
      if (!drains.some((drain) => drain.dependencies.some((dependency) => dependency.urn === resource.urn))) {
        report(
          `${cluster.description} has no load-balancer drain depending on it (a delete-only command running ${scriptEntryPoints.drainLoadBalancers}); ` +
            "deleting it could leave Hetzner load balancers behind. Declare the tenant through the TenantCluster component.",
          resource.urn,
        );
      }
    }
  },
});
