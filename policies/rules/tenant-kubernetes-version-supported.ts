import { catalog } from "../../infra/model/catalog";
import { describeConstraints, intersectRanges, workloadKubernetesConstraints } from "../../infra/model/compatibility";
import { describeRange, isMinorInRange, parseKubernetesVersion } from "../../infra/model/kubernetes-version";
import { resourceRule } from "../lib/define";
import { clusterView, resourceTypes } from "../lib/fleet-resources";

/** A tenant runs a Kubernetes minor the pinned CAPI and CAPH both support. */
export const tenantKubernetesVersionSupported = resourceRule({
  name: "tenant-kubernetes-version-supported",
  description: "A tenant Cluster's Kubernetes version lies in the workload range the pinned Cluster API and CAPH support together.",
  enforcementLevel: "mandatory",
  remediationSteps: `Set tenants[].kubernetesVersion to one of ${catalog.tenantKubernetesVersions.join(", ")}.`,
  resourceTypes: [resourceTypes.cluster],
  validate: (props, _config, report) => {
    const cluster = clusterView(props);
    const constraints = workloadKubernetesConstraints();
    const range = intersectRanges(constraints);
    const version = parseKubernetesVersion(cluster.version);
    if (!version) {
      report(`${cluster.description}: spec.topology.version ${JSON.stringify(cluster.version)} is not a Kubernetes version (vMAJOR.MINOR.PATCH); set tenants[].kubernetesVersion to one of ${catalog.tenantKubernetesVersions.join(", ")}.`);
      return;
    }
    if (!range || !isMinorInRange(version, range)) {
      report(
        `${cluster.description}: spec.topology.version ${cluster.version} is outside ${range ? describeRange(range) : "every range"}, ` +
          `what ${describeConstraints(constraints)} support together; set tenants[].kubernetesVersion to one of ${catalog.tenantKubernetesVersions.join(", ")}.`,
      );
    }
  },
});
