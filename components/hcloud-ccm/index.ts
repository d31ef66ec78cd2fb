import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/catalog";
import { pinnedRelease } from "../helm-release";
import { upstreamOf } from "../upstream";

/** The Secret the upstream chart reads by default (keys `token` and `network`). */
export const hcloudSecretName = "hcloud";

/** Arguments of {@link HcloudCloudControllerManager}. */
export interface HcloudCloudControllerManagerArgs {
  /** hcloud API token of the management cluster's project (a Pulumi secret). */
  hcloudToken: pulumi.Input<string>;
  /** ID of the private network the nodes are attached to. */
  networkId: pulumi.Input<string>;
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
    super("capi-fleet:platform:HcloudCloudControllerManager", name, {}, opts);
    const secret = new k8s.core.v1.Secret(
      `${name}-token`,
      {
        metadata: { name: hcloudSecretName, namespace: "kube-system" },
        stringData: { token: pulumi.secret(args.hcloudToken), network: args.networkId },
      },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
    this.release = pinnedRelease(
      `${name}-release`,
      { pin: catalog.hcloudCloudControllerManager.chart, namespace: "kube-system", values: hcloudCcmValues() },
      { parent: this, dependsOn: [secret] },
    );
    this.registerOutputs({});
  }
}

/**
 * Chart values, following Hetzner's own recipe for clusters that route pods themselves
 * (hcloud-cloud-controller-manager docs, "robot" guide): the controller knows the private
 * network, so nodes keep their private node-ip as InternalIP and load balancers reach them
 * privately, but `networking.enabled` stays off and the routes controller is disabled,
 * because k3s' flannel overlay carries pod traffic and needs no hcloud routes.
 */
export function hcloudCcmValues(): Record<string, unknown> {
  return {
    networking: { enabled: false },
    env: {
      HCLOUD_NETWORK: { valueFrom: { secretKeyRef: { name: hcloudSecretName, key: "network" } } },
      HCLOUD_NETWORK_ROUTES_ENABLED: { value: "false" },
    },
  };
}
