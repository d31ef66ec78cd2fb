import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { carenExtensionNames, type CarenExtensionNames } from "../../infra/model/platform/caren-extensions";
import { carenCiliumAddonKey, carenHelmAddonsConfigMap, ciliumHelmAddonEntry, helmAddonEntryText } from "../../infra/model/platform/caren-helm-addons";
import { catalog, type HelmChartPin } from "../../infra/model/versions/catalog";
import { apiVersions } from "../../infra/model/platform/cluster-api-kinds";
import { mirroredChart, mirroredImage, type Mirrors } from "../../infra/model/platform/mirrors";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import type { DeclaredResource } from "../../infra/model/contract/policy-facts";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** Namespace CAREN's docs install it in; its webhooks and Service live here. */
export const carenNamespace = platformNamespaces.caren;

/** API version of the ExtensionConfig CAREN's chart creates (v1alpha1 before CAREN v0.44.1). */

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

/** Arguments of {@link Caren}. */
export interface CarenArgs {
  /**
   * How long Pulumi waits for CAPI to discover CAREN's handlers (ExtensionConfig
   * condition `Discovered`). Default 600.
   */
  discoveryTimeoutSeconds?: number;
  /** Where CAREN's chart and the fleet's Cilium chart come from instead of their public repositories (`mirrors`). */
  mirrors?: Mirrors;
  /** How its Helm release is cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * CAREN (Cluster API Runtime Extensions Nutanix) from its Helm repository, in
 * `caren-system`. Ready means: the chart's Deployment is available (Helm wait) and CAPI has
 * discovered the handlers of its ExtensionConfig. Tenant Clusters must depend on this
 * component: CAREN's webhooks reject topology Clusters while it is down.
 */
export class Caren extends pulumi.ComponentResource {
  /** Handler names for the ClusterClass, derived from the installed CAREN release. */
  public readonly extensionNames: CarenExtensionNames;
  /** Name of the ExtensionConfig (the chart name). */
  public readonly extensionConfigName: pulumi.Output<string>;
  /** Installed CAREN release. */
  public readonly version: pulumi.Output<string>;
  /** The resource that completes once CAPI has discovered the handlers; depend on it. */
  public readonly ready: pulumi.Resource;
  /** What it declared for the policy pack (its `declared` output). */
  public readonly declared: pulumi.Output<DeclaredResource[]>;

  constructor(name: string, args: CarenArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    // Component args become recorded inputs: never the kubeconfig inside releaseRecovery.
    const { releaseRecovery: _recovery, ...recorded } = args;
    super(componentTypes.caren, name, recorded, opts);
    const pin = mirroredChart(catalog.caren.chart, args.mirrors);
    const values = args.mirrors?.images ? { ...carenValues, image: { repository: mirroredImage(catalog.caren.image, args.mirrors) } } : carenValues;
    this.extensionNames = carenExtensionNames(pin.version, pin.chart);

    const facts = new DeclaredFacts();
    const release = facts.add(
      pinnedRelease(`${name}-release`, { pin, namespace: carenNamespace, values, recovery: args.releaseRecovery }, { parent: this, dependsOn: upstreamOf(opts) }),
      { chart: pin.chart, version: pin.version },
    );

    // Before the readiness gate, so no tenant's hook runs while CAREN still has its own Cilium.
    const ciliumVersion = new k8s.core.v1.ConfigMapPatch(`${name}-cilium-version`, carenCiliumVersionPatch({ pin, values }, args.mirrors), { parent: this, dependsOn: [release] });

    // The chart owns the ExtensionConfig; this patch only adds the wait annotation, so
    // Pulumi blocks until CAPI's runtime controller has called CAREN's discovery endpoint
    // (pulumi-kubernetes awaits Patch resources like any other: pkg/await/await.go Creation).
    const readyInputs = {
      apiVersion: apiVersions.extensionConfig,
      kind: "ExtensionConfig",
      metadata: {
        name: this.extensionNames.extensionConfig,
        annotations: {
          "pulumi.com/waitFor": "condition=Discovered",
          "pulumi.com/timeoutSeconds": String(args.discoveryTimeoutSeconds ?? 600),
        },
      },
    };
    this.ready = facts.add(new k8s.apiextensions.CustomResourcePatch(`${name}-extension-config-discovered`, readyInputs, { parent: this, dependsOn: [release, ciliumVersion] }), readyInputs);

    this.extensionConfigName = pulumi.output(this.extensionNames.extensionConfig);
    this.version = pulumi.output(pin.version);
    this.declared = facts.all();
    this.registerOutputs({ extensionConfigName: this.extensionConfigName, version: this.version, ...facts.outputs() });
  }
}
