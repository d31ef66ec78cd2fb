import { stringify } from "yaml";
import { catalog } from "../versions/catalog";

/**
 * CAREN's helm-addons ConfigMap: where its lifecycle handlers look up the chart, version and
 * repository of each add-on they install, at the moment a hook runs
 * (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 * pkg/handlers/lifecycle/config/cm.go, `HelmChartGetter.For`: one YAML document per key, fields
 * `ChartName`, `ChartVersion`, `RepositoryURL`). The chart creates it from
 * `templates/helm-config.yaml` under the name in its `helmAddonsConfigMap` value, and passes
 * that name to the manager (`--helm-addons-configmap`, templates/deployment.yaml).
 *
 * CAREN has no per-entry override: the flag names one whole ConfigMap, and a missing key fails
 * the hook ("did not find key"). Pointing it at a ConfigMap of the fleet's own would mean
 * copying every entry CAREN's handlers may read. So the fleet sets only the `cilium` key of the
 * chart's ConfigMap, with a server-side-apply patch (components/caren).
 */

/**
 * The ConfigMap's name: the chart's default `helmAddonsConfigMap` (values.yaml), which the fleet
 * keeps (its chart values change only what differs from a default).
 */
export const carenHelmAddonsConfigMap = "default-helm-addons-config";

/** The ConfigMap key CAREN's Cilium handler reads (pkg/handlers/lifecycle/config/cm.go, `Cilium`). */
export const carenCiliumAddonKey = "cilium";

/** One entry of the ConfigMap, in CAREN's field names. */
export interface CarenHelmChartEntry {
  readonly ChartName: string;
  readonly ChartVersion: string;
  readonly RepositoryURL: string;
}

/** The fleet's Cilium (catalog) as CAREN's `cilium` entry. */
export function ciliumHelmAddonEntry(cilium: { readonly chart: string; readonly version: string; readonly repository: string } = catalog.cilium): CarenHelmChartEntry {
  return { ChartName: cilium.chart, ChartVersion: cilium.version, RepositoryURL: cilium.repository };
}

/** The entry as the ConfigMap holds it (a YAML document). */
export function helmAddonEntryText(entry: CarenHelmChartEntry): string {
  return stringify(entry);
}
