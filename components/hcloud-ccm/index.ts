import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/versions/catalog";
import { hcloudCcmSecretName, hcloudCcmValues } from "../../infra/model/platform/hcloud-ccm-values";
import { mirroredChart, type Mirrors } from "../../infra/model/platform/mirrors";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** Arguments of {@link HcloudCloudControllerManager}. */
export interface HcloudCloudControllerManagerArgs {
  /** hcloud API token of the management cluster's project (a Pulumi secret). */
  hcloudToken: pulumi.Input<string>;
  /** ID of the private network the nodes are attached to. */
  networkId: pulumi.Input<string>;
  /** Network zone of that network; LoadBalancer Services get their load balancers there. */
  networkZone: string;
  /** Where the chart comes from instead of its public repository (`mirrors`). */
  mirrors?: Mirrors;
  /** How its Helm release is cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * The Hetzner Cloud controller manager on the management cluster. k3s runs with its
 * built-in cloud controller disabled and `cloud-provider=external`, so every node keeps
 * the `node.cloudprovider.kubernetes.io/uninitialized` taint, and nothing else schedules,
 * until this runs: install it first. It also gives nodes their private InternalIP and
 * serves LoadBalancer Services.
 */
export class HcloudCloudControllerManager extends pulumi.ComponentResource {
  /** The Helm release; dependents wait on it. */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: HcloudCloudControllerManagerArgs, opts?: pulumi.ComponentResourceOptions) {
    // Component args are recorded as inputs; the token must not be among them.
    super(componentTypes.hcloudCloudControllerManager, name, {}, opts);
    const secret = new k8s.core.v1.Secret(
      `${name}-token`,
      {
        metadata: { name: hcloudCcmSecretName, namespace: platformNamespaces.kubeSystem },
        stringData: { token: pulumi.secret(args.hcloudToken), network: args.networkId },
      },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
    this.release = pinnedRelease(
      `${name}-release`,
      { pin: mirroredChart(catalog.hcloudCloudControllerManager.chart, args.mirrors), namespace: platformNamespaces.kubeSystem, values: hcloudCcmValues({ loadBalancerNetworkZone: args.networkZone }), recovery: args.releaseRecovery },
      { parent: this, dependsOn: [secret] },
    );
    this.registerOutputs({});
  }
}
