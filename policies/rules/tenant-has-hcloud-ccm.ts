import { catalog } from "../../infra/model/versions/catalog";
import { stackRule } from "../lib/define";
import { clustersIn, ofType, resourceTypes, selectorMatches, type LabelSelector } from "../lib/fleet-resources";

/**
 * Without the hcloud CCM in the workload cluster no LoadBalancer Service gets (or
 * loses) a Hetzner load balancer, so neither CAREN's GC nor the drain can clean up.
 */
export const tenantHasHcloudCcm = stackRule({
  name: "tenant-has-hcloud-ccm",
  description: `Every tenant Cluster is selected by a HelmChartProxy for ${catalog.hcloudCloudControllerManager.chart.chart} in its namespace.`,
  enforcementLevel: "mandatory",
  remediationSteps: "Keep the tenant's CCM HelmChartProxy (TenantCluster adds it) and its capi-fleet.io labels on the Cluster.",
  validate: (resources, _config, report) => {
    const proxies = ofType(resources, resourceTypes.helmChartProxy).map((resource) => {
      const spec = (resource.props.spec ?? {}) as { chartName?: unknown; clusterSelector?: LabelSelector };
      const metadata = (resource.props.metadata ?? {}) as { namespace?: unknown };
      return { chartName: spec.chartName, selector: spec.clusterSelector ?? {}, namespace: metadata.namespace ?? "default" };
    });
    const ccm = proxies.filter((proxy) => proxy.chartName === catalog.hcloudCloudControllerManager.chart.chart);
    for (const { resource, cluster } of clustersIn(resources)) {
      if (!ccm.some((proxy) => proxy.namespace === cluster.namespace && selectorMatches(proxy.selector, cluster.labels))) {
        report(
          `${cluster.description} receives no hcloud CCM: no HelmChartProxy for ${catalog.hcloudCloudControllerManager.chart.chart} in namespace ${cluster.namespace} selects its labels, ` +
            "so its load balancers could never be created or garbage-collected. Keep the TenantCluster's CCM proxy and the Cluster's labels.",
          resource.urn,
        );
      }
    }
  },
});
