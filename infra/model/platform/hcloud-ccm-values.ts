/**
 * Values of the hcloud CCM chart, for the management cluster and for tenants alike.
 *
 * Hetzner's recipe for clusters whose CNI routes pods itself (hcloud-cloud-controller-manager
 * docs, "robot" guide): the controller knows the private network, so nodes keep their
 * private IP as InternalIP and load balancers reach them privately, but
 * `networking.enabled` stays off and the routes controller is disabled: k3s' flannel and
 * CAREN's Cilium both carry pod traffic in an overlay that needs no hcloud routes.
 *
 * Both clusters have a Secret `kube-system/hcloud` with keys `token` and `network`: the
 * fleet writes it on the management cluster, and CAPH writes it into each workload
 * cluster (it adds `token` and the network ID when the Secret is named `hcloud`).
 */

/** The Secret the chart reads by default (keys `token` and `network`). */
export const hcloudCcmSecretName = "hcloud";

/**
 * Where the controller creates the load balancer of a LoadBalancer Service. It refuses to
 * create one unless a location or a network zone is known, from its environment
 * (`HCLOUD_LOAD_BALANCERS_LOCATION` / `HCLOUD_LOAD_BALANCERS_NETWORK_ZONE`, at most one of
 * them) or from the Service's annotations `load-balancer.hetzner.cloud/location` /
 * `load-balancer.hetzner.cloud/network-zone`, which win over the environment
 * (hetznercloud/hcloud-cloud-controller-manager@v1.35.0: internal/config/load_balancer_envs.go,
 * internal/config/config.go, internal/hcops/load_balancer.go `Create`).
 */
export const hcloudLoadBalancerNetworkZoneEnv = "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE";

/** Options of {@link hcloudCcmValues}. */
export interface HcloudCcmValueOptions {
  /**
   * The network zone of the cluster's private network: load balancers are created there by
   * default (a load balancer can only join a network of its own zone).
   */
  readonly loadBalancerNetworkZone: string;
  /** Load balancers of LoadBalancer Services target the nodes' private IPs (tenants: their nodes sit on the private network). */
  readonly privateLoadBalancerTargets?: boolean;
}

/** The chart values. */
export function hcloudCcmValues(options: HcloudCcmValueOptions): Record<string, unknown> {
  return {
    // Stryker disable next-line ObjectLiteral: equivalent, `enabled: false` is the chart's default (chart/values.yaml)
    networking: { enabled: false },
    env: {
      HCLOUD_NETWORK: { valueFrom: { secretKeyRef: { name: hcloudCcmSecretName, key: "network" } } },
      HCLOUD_NETWORK_ROUTES_ENABLED: { value: "false" },
      [hcloudLoadBalancerNetworkZoneEnv]: { value: options.loadBalancerNetworkZone },
      ...(options.privateLoadBalancerTargets ? { HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP: { value: "true" } } : {}),
    },
  };
}
