import { createHash } from "node:crypto";
import { catalog, type HelmChartPin } from "../versions/catalog";
import { carenCiliumAddonKey, carenHelmAddonsConfigMap, ciliumHelmAddonEntry, helmAddonEntryText } from "./caren-helm-addons";
import { apiVersions } from "./cluster-api-kinds";
import { mirroredChart, mirroredImage, type Mirrors } from "./mirrors";
import { platformNamespaces } from "./platform-namespaces";

/**
 * What the CAREN component (components/caren) installs, as plain data: the chart's release and
 * values, the patch that sets the fleet's Cilium in CAREN's helm-addons ConfigMap, and the patch
 * that makes Pulumi wait until CAPI has discovered CAREN's handlers.
 */

/** Namespace CAREN's docs install it in; its webhooks and Service live here. */
export const carenNamespace = platformNamespaces.caren;

/**
 * Chart values. Decisions, each on purpose:
 * - `deployDefaultClusterClasses: false`: CAREN's classes are for AWS/Docker/EKS/Nutanix;
 *   the fleet brings its own Hetzner class.
 * - `helmRepository.enabled: false`: no in-cluster chart mirror. The mirror needs a 2 Gi
 *   ReadWriteOnce volume from the default StorageClass; on k3s that is `local-path`, a
 *   directory on one node, which pins the mirror to that node and loses it with the node
 *   (the management cluster has no hcloud CSI). Without the mirror, CAAPH pulls the add-on
 *   charts (Cilium) from their upstream HTTPS repositories when a tenant is created or
 *   upgraded, so the management cluster needs egress to them.
 * - no `nameOverride`: it would rename the ExtensionConfig and break every handler name.
 */
export const carenValues = {
  deployDefaultClusterClasses: false,
  helmRepository: { enabled: false },
} as const;

/**
 * The patch that sets the fleet's Cilium (catalog) as the `cilium` entry of CAREN's helm-addons
 * ConfigMap, and nothing else of it (infra/model/platform/caren-helm-addons.ts says why a patch).
 * - `pulumi.com/patchForce`: the key belongs to Helm's field manager, so server-side apply
 *   would otherwise refuse it as a conflict.
 * - `capi-fleet.io/caren-release` (a digest of the release's chart pin and values) re-applies
 *   the patch after every change of the release: Helm's upgrade is a three-way merge against
 *   the live object and puts CAREN's own entry back (helm.sh docs, "Changes since Helm 2",
 *   "Improved Upgrade Strategy: 3-way Strategic Merge Patches").
 */
export function carenCiliumVersionPatch(release: { pin: HelmChartPin; values: unknown } = { pin: catalog.caren.chart, values: carenValues }, mirrors: Mirrors = {}) {
  const digest = createHash("sha256").update(JSON.stringify(release)).digest("hex").slice(0, 16);
  return {
    metadata: {
      name: carenHelmAddonsConfigMap,
      namespace: carenNamespace,
      annotations: { "pulumi.com/patchForce": "true", "capi-fleet.io/caren-release": digest },
    },
    data: { [carenCiliumAddonKey]: helmAddonEntryText(ciliumHelmAddonEntry(mirroredChart(catalog.cilium, mirrors))) },
  };
}

/** CAREN's chart and values: the catalog's, from the mirrors when the stack names them. */
export function carenRelease(mirrors: Mirrors = {}): { pin: HelmChartPin; values: Record<string, unknown> } {
  const pin = mirroredChart(catalog.caren.chart, mirrors);
  const values = mirrors.images ? { ...carenValues, image: { repository: mirroredImage(catalog.caren.image, mirrors) } } : carenValues;
  return { pin, values };
}

/** How long Pulumi waits, by default, for CAPI to discover CAREN's handlers. */
export const defaultDiscoveryTimeoutSeconds = 600;

/**
 * The patch of the ExtensionConfig the chart owns: it only adds the wait annotation, so Pulumi
 * blocks until CAPI's runtime controller has called CAREN's discovery endpoint (condition
 * `Discovered`; pulumi-kubernetes awaits Patch resources like any other: pkg/await/await.go Creation).
 */
export function carenDiscoveredPatch(extensionConfigName: string, timeoutSeconds: number = defaultDiscoveryTimeoutSeconds) {
  return {
    apiVersion: apiVersions.extensionConfig,
    kind: "ExtensionConfig",
    metadata: {
      name: extensionConfigName,
      annotations: {
        "pulumi.com/waitFor": "condition=Discovered",
        "pulumi.com/timeoutSeconds": String(timeoutSeconds),
      },
    },
  };
}
