import { catalog } from "../../infra/model/catalog";
import { carenCniProviders } from "../../infra/model/hetzner-cluster-class";
import { describeRange, isMinorInRange, minorOf, parseKubernetesVersion } from "../../infra/model/kubernetes-version";
import { resourceRule } from "../lib/define";
import { clusterView, resourceTypes } from "../lib/fleet-resources";

/** The Cilium CAREN ships supports the tenant's minor. */
export const ciliumSupportsTenant = resourceRule({
  name: "cilium-supports-tenant",
  description: `The Cilium CAREN ${catalog.caren.chart.version} installs (${catalog.cilium.version}) supports the tenant's Kubernetes minor (${describeRange(catalog.cilium.kubernetes)}).`,
  enforcementLevel: "mandatory",
  remediationSteps: "Keep the tenant on a minor Cilium supports, or move to a CAREN release that ships a newer Cilium.",
  resourceTypes: [resourceTypes.cluster],
  validate: (props, _config, report) => {
    const cluster = clusterView(props);
    const version = parseKubernetesVersion(cluster.version);
    if (cluster.cniProvider !== carenCniProviders[0] || !version) return;
    if (!isMinorInRange(version, catalog.cilium.kubernetes)) {
      report(
        `${cluster.description}: Cilium ${catalog.cilium.version} (shipped by CAREN ${catalog.caren.chart.version}) supports Kubernetes ${describeRange(catalog.cilium.kubernetes)}, not ${minorOf(version)}; ` +
          "keep tenants[].kubernetesVersion in that range.",
      );
    }
  },
});
