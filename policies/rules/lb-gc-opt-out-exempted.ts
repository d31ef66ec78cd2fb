import { resourceRule } from "../lib/define";
import { clusterView, isExempt, parseGoBool, resourceTypes } from "../lib/fleet-resources";
import { loadBalancerGcAnnotation } from "../../infra/model/facts/caren";

/**
 * CAREN deletes a tenant's LoadBalancer Services before its Cluster goes away;
 * opting out leaves paid Hetzner load balancers behind, so it needs an explicit exemption.
 */
export const lbGcOptOutExempted = resourceRule<{ exemptClusters: string[] }>({
  name: "lb-gc-opt-out-exempted",
  description: `A tenant Cluster keeps CAREN's load-balancer garbage collection unless the policy config exempts it (annotation ${loadBalancerGcAnnotation}: "false").`,
  enforcementLevel: "mandatory",
  remediationSteps: `Remove loadBalancerGarbageCollection: false from the tenant, or add the tenant (or "namespace/cluster") to exemptClusters in policies/config/<stack>.json.`,
  config: { exemptClusters: { type: "array", items: { type: "string" }, default: [] } },
  resourceTypes: [resourceTypes.cluster],
  validate: (props, config, report) => {
    const cluster = clusterView(props);
    const value = cluster.annotations[loadBalancerGcAnnotation];
    if (value !== undefined && parseGoBool(value) === false && !isExempt(config.exemptClusters, cluster)) {
      report(
        `${cluster.description} opts out of CAREN's load-balancer GC (${loadBalancerGcAnnotation}: ${JSON.stringify(value)}): its Hetzner load balancers would outlive it. ` +
          `Set loadBalancerGarbageCollection: true on the tenant, or exempt it in lb-gc-opt-out-exempted.exemptClusters in policies/config/<stack>.json.`,
      );
    }
  },
});
