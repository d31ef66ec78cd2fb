import { parse } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { tenantLabels } from "../../infra/model/tenant/tenant-cluster";
import { resourceRule } from "../lib/define";
import { record, resourceTypes } from "../lib/fleet-resources";

/** `Retain` volumes outlive their cluster and keep costing money. */
export const csiReclaimPolicyDelete = resourceRule<{ exemptClusters: string[] }>({
  name: "csi-reclaim-policy-delete",
  description: `StorageClasses of the tenant hcloud CSI driver (${catalog.hcloudCsi.chart.chart}) use reclaimPolicy Delete unless the policy config exempts the tenant (Retain orphans volumes).`,
  enforcementLevel: "advisory",
  remediationSteps:
    'Set the tenant\'s storage.reclaimPolicy to Delete, or list the tenant (or "namespace/cluster") in exemptClusters in policies/config/<stack>.json and delete its volumes by hand after the cluster is gone.',
  config: { exemptClusters: { type: "array", items: { type: "string" }, default: [] } },
  resourceTypes: [resourceTypes.helmChartProxy],
  validate: (props, config, report) => {
    const spec = record(props.spec);
    if (spec.chartName !== catalog.hcloudCsi.chart.chart) return;
    const metadata = record(props.metadata);
    const namespace = typeof metadata.namespace === "string" ? metadata.namespace : "default";
    const selector = record(record(spec.clusterSelector).matchLabels);
    const tenantLabel = selector[tenantLabels.tenant];
    const tenant = typeof tenantLabel === "string" ? tenantLabel : undefined;
    // The same keys as lb-gc-opt-out-exempted: the tenant, or its Cluster as namespace/name.
    if (tenant !== undefined && (config.exemptClusters.includes(tenant) || config.exemptClusters.includes(`${namespace}/${tenant}`))) return;
    const name = typeof metadata.name === "string" ? metadata.name : "";
    const where = `HelmChartProxy ${namespace}/${name}${tenant ? ` (tenant ${JSON.stringify(tenant)})` : ""}`;
    let values: unknown;
    try {
      values = typeof spec.valuesTemplate === "string" ? parse(spec.valuesTemplate) : {};
    } catch (error) {
      report(`${where}: valuesTemplate is not YAML (${String(error)}), so its StorageClasses cannot be checked.`);
      return;
    }
    const storageClasses = record(values).storageClasses;
    if (storageClasses !== undefined && !Array.isArray(storageClasses)) {
      report(`${where}: valuesTemplate storageClasses is not a list, so its StorageClasses cannot be checked.`);
      return;
    }
    for (const storageClass of (storageClasses ?? []) as unknown[]) {
      const entry = record(storageClass);
      // The chart's default is Delete.
      const reclaimPolicy = typeof entry.reclaimPolicy === "string" ? entry.reclaimPolicy : "Delete";
      if (reclaimPolicy !== "Delete") {
        report(
          `${where}: StorageClass ${JSON.stringify(entry.name ?? "")} has reclaimPolicy ${reclaimPolicy}, so its volumes outlive the cluster and keep costing money; ` +
            "set storage.reclaimPolicy: Delete on the tenant, or exempt it in csi-reclaim-policy-delete.exemptClusters in policies/config/<stack>.json.",
        );
      }
    }
  },
});
