import { catalog } from "../../infra/model/catalog";
import { carenTestedMinors } from "../../infra/model/compatibility";
import { minorOf, parseKubernetesVersion } from "../../infra/model/kubernetes-version";
import { resourceRule } from "../lib/define";
import { clusterView, resourceTypes } from "../lib/fleet-resources";

/** CAREN's end-to-end tests cover the tenant's minor. */
export const tenantKubernetesVersionCarenTested = resourceRule({
  name: "tenant-kubernetes-version-caren-tested",
  description: "A tenant Cluster runs a Kubernetes minor CAREN's end-to-end suite covers (other minors may work, untested).",
  enforcementLevel: "advisory",
  remediationSteps: `Prefer one of ${catalog.caren.testedKubernetes.join(", ")} for tenants[].kubernetesVersion.`,
  resourceTypes: [resourceTypes.cluster],
  validate: (props, _config, report) => {
    const cluster = clusterView(props);
    const version = parseKubernetesVersion(cluster.version);
    const tested = carenTestedMinors();
    if (version && !tested.includes(minorOf(version))) {
      report(
        `${cluster.description}: Kubernetes ${minorOf(version)} is not among the minors CAREN ${catalog.caren.chart.version} is tested on (${tested.join(", ")}); ` +
          `prefer one of ${catalog.caren.testedKubernetes.join(", ")} for tenants[].kubernetesVersion.`,
      );
    }
  },
});
