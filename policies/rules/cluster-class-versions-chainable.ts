import { validateKubernetesVersionsList } from "../../infra/model/upgrade-plan";
import { resourceRule } from "../lib/define";
import { clusterClassView, resourceTypes } from "../lib/fleet-resources";

/** The ClusterClass list CAPI chains upgrades through is strictly increasing without minor gaps. */
export const clusterClassVersionsChainable = resourceRule({
  name: "cluster-class-versions-chainable",
  description: "A ClusterClass spec.kubernetesVersions is strictly increasing with no minor gaps, as CAPI's webhook and upgrade planner need.",
  enforcementLevel: "mandatory",
  remediationSteps: "List one or more patches of every minor, oldest first, in catalog tenantKubernetesVersions.",
  resourceTypes: [resourceTypes.clusterClass],
  validate: (props, _config, report) => {
    const clusterClass = clusterClassView(props);
    const problem = validateKubernetesVersionsList(clusterClass.kubernetesVersions);
    if (problem) {
      report(`ClusterClass ${clusterClass.namespace}/${clusterClass.name}: ${problem} (fix catalog tenantKubernetesVersions).`);
    }
  },
});
