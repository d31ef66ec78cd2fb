import { catalog } from "../../infra/model/versions/catalog";
import { carenCniProviders } from "../../infra/model/platform/hetzner-cluster-class";
import { describeRange, isMinorInRange, minorOf, parseKubernetesVersion } from "../../infra/model/versions/kubernetes-version";
import { resourceRule } from "../lib/define";
import { clusterView, resourceTypes } from "../lib/fleet-resources";

/** The fleet's Cilium (the catalog's, which the program hands to CAREN) supports the tenant's minor. */
export const ciliumSupportsTenant = resourceRule({
  name: "cilium-supports-tenant",
  description: `The fleet's Cilium ${catalog.cilium.version}, which CAREN ${catalog.caren.chart.version} installs, supports the tenant's Kubernetes minor (${describeRange(catalog.cilium.kubernetes)}).`,
  enforcementLevel: "mandatory",
  remediationSteps: "Keep the tenant on a minor Cilium supports, or bump catalog.cilium (docs/operations.md, Upgrade Cilium across the fleet).",
  resourceTypes: [resourceTypes.cluster],
  validate: (props, _config, report) => {
    const cluster = clusterView(props);
    const version = parseKubernetesVersion(cluster.version);
    if (cluster.cniProvider !== carenCniProviders[0] || !version) return;
    if (!isMinorInRange(version, catalog.cilium.kubernetes)) {
      report(
        `${cluster.description}: Cilium ${catalog.cilium.version} (the fleet's, installed by CAREN ${catalog.caren.chart.version}) supports Kubernetes ${describeRange(catalog.cilium.kubernetes)}, not ${minorOf(version)}; ` +
          "keep tenants[].kubernetesVersion in that range.",
      );
    }
  },
});
