import { resourceRule } from "../lib/define";
import { clusterView, parseGoBool, resourceTypes } from "../lib/fleet-resources";
import { loadBalancerGcAnnotation } from "../../infra/model/facts/caren";

/** CAREN parses the opt-out with strconv.ParseBool; anything else fails its delete hook. */
export const lbGcAnnotationBoolean = resourceRule({
  name: "lb-gc-annotation-boolean",
  description: `The ${loadBalancerGcAnnotation} annotation, when present, parses as a Go boolean; otherwise CAREN's BeforeClusterDelete hook fails and the Cluster cannot be deleted.`,
  enforcementLevel: "mandatory",
  remediationSteps: `Use "true" or "false" (or drop the annotation and use loadBalancerGarbageCollection).`,
  resourceTypes: [resourceTypes.cluster],
  validate: (props, _config, report) => {
    const cluster = clusterView(props);
    const value = cluster.annotations[loadBalancerGcAnnotation];
    if (value !== undefined && parseGoBool(value) === undefined) {
      report(
        `${cluster.description}: annotation ${loadBalancerGcAnnotation}: ${JSON.stringify(value)} is not a boolean for CAREN (strconv.ParseBool), so its delete hook would fail and the Cluster could never be deleted; use "true" or "false".`,
      );
    }
  },
});
