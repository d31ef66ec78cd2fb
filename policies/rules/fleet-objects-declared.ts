import { stackRule } from "../lib/define";
import { declaredKinds, isUndeclared } from "../lib/fleet-resources";

/**
 * The stack rules read the fleet's Kubernetes objects through what the fleet's components
 * declared for them (infra/model/contract/policy-facts.ts): the engine shows stack rules only outputs,
 * which are empty on a fresh stack. An object of a kind those rules read that no fleet component
 * declared would pass every stack rule unseen, so it is a violation of its own.
 */
export const fleetObjectsDeclared = stackRule({
  name: "fleet-objects-declared",
  description:
    "Every Cluster, ClusterClass, HelmChartProxy, Cluster API provider, ExtensionConfig patch, hcloud server and load balancer is declared by one of the fleet's components, so the stack rules can see it at preview.",
  enforcementLevel: "mandatory",
  remediationSteps: "Create the object through its component (TenantCluster, HetznerClusterClass, ClusterApi, Caren, ManagementCluster), which declares it to the policy pack.",
  validate: (resources, _config, report) => {
    for (const resource of resources.filter(isUndeclared)) {
      report(
        `${resource.type} ${resource.name} is not declared by any capi-fleet component, so the stack rules cannot see its fields ` +
          `(the engine hands them outputs, which are empty while its provider is unknown); they checked nothing of it. Kinds that must be declared: ${declaredKinds.join(", ")}.`,
        resource.urn,
      );
    }
  },
});
