import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { carenCiliumVersionPatch, carenDiscoveredPatch, carenNamespace, carenRelease } from "../../infra/model/platform/caren";
import { carenExtensionNames, type CarenExtensionNames } from "../../infra/model/platform/caren-extensions";
import type { Mirrors } from "../../infra/model/platform/mirrors";
import type { DeclaredResource } from "../../infra/model/contract/policy-facts";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

// What the tests take from here; the model defines them.

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
    const { pin, values } = carenRelease(args.mirrors);
    this.extensionNames = carenExtensionNames(pin.version, pin.chart);

    const facts = new DeclaredFacts();
    const release = facts.add(
      pinnedRelease(`${name}-release`, { pin, namespace: carenNamespace, values, recovery: args.releaseRecovery }, { parent: this, dependsOn: upstreamOf(opts) }),
      { chart: pin.chart, version: pin.version },
    );

    // Before the readiness gate, so no tenant's hook runs while CAREN still has its own Cilium.
    const ciliumVersion = new k8s.core.v1.ConfigMapPatch(`${name}-cilium-version`, carenCiliumVersionPatch({ pin, values }, args.mirrors), { parent: this, dependsOn: [release] });

    // The chart owns the ExtensionConfig; the patch only makes Pulumi wait for CAPI's discovery.
    const readyInputs = carenDiscoveredPatch(this.extensionNames.extensionConfig, args.discoveryTimeoutSeconds);
    this.ready = facts.add(new k8s.apiextensions.CustomResourcePatch(`${name}-extension-config-discovered`, readyInputs, { parent: this, dependsOn: [release, ciliumVersion] }), readyInputs);

    this.extensionConfigName = pulumi.output(this.extensionNames.extensionConfig);
    this.version = pulumi.output(pin.version);
    this.declared = facts.all();
    this.registerOutputs({ extensionConfigName: this.extensionConfigName, version: this.version, ...facts.outputs() });
  }
}
