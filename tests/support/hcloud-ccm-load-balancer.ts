/**
 * How the hcloud cloud controller manager decides where to create the load balancer of a
 * LoadBalancer Service, ported from hetznercloud/hcloud-cloud-controller-manager@v1.35.0 (the
 * catalog's chart version; the Go module proxy refuses the module):
 * - chart/templates/deployment.yaml: every `env` value of the chart becomes a container
 *   environment variable of that name;
 * - internal/config/load_balancer_envs.go and internal/config/config.go (`Read`, `Validate`):
 *   the default location and network zone come from `HCLOUD_LOAD_BALANCERS_LOCATION` and
 *   `HCLOUD_LOAD_BALANCERS_NETWORK_ZONE`, and setting both is a start-up error;
 * - internal/annotation/load_balancer.go: the per-Service annotations `LBLocation` and
 *   `LBNetworkZone`;
 * - internal/hcops/load_balancer.go (`LoadBalancerOps.Create`): an annotation wins over the
 *   environment, an empty location annotation clears the default location, a location wins
 *   over a network zone, and with neither the controller refuses to create the load balancer.
 */

/** internal/config/load_balancer_envs.go */
const locationEnv = "HCLOUD_LOAD_BALANCERS_LOCATION";
const networkZoneEnv = "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE";
/** internal/annotation/load_balancer.go */
export const locationAnnotation = "load-balancer.hetzner.cloud/location";
export const networkZoneAnnotation = "load-balancer.hetzner.cloud/network-zone";

/** The container environment the chart renders from its `env` values; only literal values are known before the pod runs. */
export function chartEnvironment(values: { env?: Record<string, unknown> }): Map<string, string | undefined> {
  const env = new Map<string, string | undefined>();
  for (const [name, source] of Object.entries(values.env ?? {})) {
    const literal = source && typeof source === "object" ? (source as { value?: unknown }).value : undefined;
    env.set(name, typeof literal === "string" ? literal : undefined);
  }
  return env;
}

/** Where the load balancer goes, or the error the controller reports instead of creating it. */
export type Placement = { location: string } | { networkZone: string } | { error: string };

export function loadBalancerPlacement(env: ReadonlyMap<string, string | undefined>, serviceAnnotations: Readonly<Record<string, string>> = {}): Placement {
  const defaultLocation = env.get(locationEnv) ?? "";
  const defaultNetworkZone = env.get(networkZoneEnv) ?? "";
  if (defaultLocation !== "" && defaultNetworkZone !== "") {
    return { error: `invalid value for "${locationEnv}"/"${networkZoneEnv}", only one of them can be set` };
  }
  let location = defaultLocation === "" ? undefined : defaultLocation;
  const locationOverride = serviceAnnotations[locationAnnotation];
  if (locationOverride !== undefined) {
    location = locationOverride === "" ? undefined : locationOverride;
  }
  const networkZone = serviceAnnotations[networkZoneAnnotation] ?? defaultNetworkZone;
  if (location !== undefined) {
    return { location };
  }
  if (networkZone !== "") {
    return { networkZone };
  }
  return { error: `hcops/LoadBalancerOps.Create: neither ${locationAnnotation} nor ${networkZoneAnnotation} set` };
}
