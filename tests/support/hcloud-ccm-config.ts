/**
 * What the hcloud cloud controller manager makes of the chart values the program sets: a
 * reading of the upstream source, not an execution (the chart and the binary cannot run here;
 * the Go module proxy refuses the module). Ported from hetznercloud/hcloud-cloud-controller-manager:
 * - chart/values.yaml: the default `env` (HCLOUD_TOKEN from Secret `hcloud` key `token`,
 *   NODE_NAME), `networking.enabled: false`, `monitoring.enabled: true`; Helm merges the release's
 *   values into these maps, the release's keys winning;
 * - chart/templates/deployment.yaml: every `env` entry becomes a container variable of that name;
 *   `networking.enabled` adds HCLOUD_NETWORK (from `networking.network`), `--allocate-node-cidrs`
 *   and hostNetwork; `monitoring.enabled: false` adds HCLOUD_METRICS_ENABLED=false;
 * - internal/config/config.go (`Read`, `getEnvBool`) and internal/config/load_balancer_envs.go:
 *   the variables the binary reads, booleans parsed with Go's strconv.ParseBool (a bad value is a
 *   start-up error), routes enabled by default once a network is set.
 */

type EnvSource = { value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } };
type ChartValues = { env?: Record<string, EnvSource>; networking?: { enabled?: boolean }; monitoring?: { enabled?: boolean } };

/** chart/values.yaml */
const chartDefaults = {
  env: {
    HCLOUD_TOKEN: { valueFrom: { secretKeyRef: { name: "hcloud", key: "token" } } },
    NODE_NAME: { valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
  } as Record<string, EnvSource>,
  networking: { enabled: false, network: { valueFrom: { secretKeyRef: { name: "hcloud", key: "network" } } } as EnvSource },
  monitoring: { enabled: true },
};

/** internal/config/config.go and load_balancer_envs.go: every variable `Read` looks at. */
export const variablesTheControllerReads = new Set([
  "HCLOUD_TOKEN", "HCLOUD_ENDPOINT", "HCLOUD_NETWORK", "HCLOUD_DEBUG",
  "ROBOT_ENABLED", "ROBOT_USER", "ROBOT_PASSWORD", "ROBOT_CACHE_TIMEOUT", "ROBOT_RATE_LIMIT_WAIT_TIME", "ROBOT_FORWARD_INTERNAL_IPS",
  "HCLOUD_INSTANCES_ZONE_LABEL_ENABLED", "HCLOUD_INSTANCES_ADDRESS_FAMILY", "HCLOUD_SERVER_CACHE_MODE", "HCLOUD_SERVER_CACHE_MAX_AGE",
  "HCLOUD_NETWORK_DISABLE_ATTACHED_CHECK", "HCLOUD_NETWORK_ROUTES_ENABLED", "HCLOUD_METRICS_ENABLED", "HCLOUD_METRICS_ADDRESS",
  "HCLOUD_LOAD_BALANCERS_ENABLED", "HCLOUD_LOAD_BALANCERS_LOCATION", "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE",
  "HCLOUD_LOAD_BALANCERS_DISABLE_PRIVATE_INGRESS", "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", "HCLOUD_LOAD_BALANCERS_DISABLE_IPV6",
  "HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE", "HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK", "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL",
  "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES", "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT", "HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE",
  "HCLOUD_LOAD_BALANCERS_TYPE", "HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL",
]);

/** The container's environment as deployment.yaml renders it from the merged values. */
export function renderedEnvironment(values: ChartValues): Map<string, EnvSource> {
  const env = new Map(Object.entries({ ...chartDefaults.env, ...(values.env ?? {}) }));
  if (values.networking?.enabled ?? chartDefaults.networking.enabled) env.set("HCLOUD_NETWORK", chartDefaults.networking.network);
  if (!(values.monitoring?.enabled ?? chartDefaults.monitoring.enabled)) env.set("HCLOUD_METRICS_ENABLED", { value: "false" });
  return env;
}

/**
 * What else deployment.yaml renders from `networking.enabled` (the same reading as above): the
 * controller allocates the nodes' pod CIDRs (`--allocate-node-cidrs`) and runs in the host network.
 */
export function renderedNetworking(values: ChartValues): { allocateNodeCidrs: boolean; hostNetwork: boolean } {
  const enabled = values.networking?.enabled ?? chartDefaults.networking.enabled;
  return { allocateNodeCidrs: enabled, hostNetwork: enabled };
}

/** What the kubelet starts the container with; a missing Secret key stops the container (CreateContainerConfigError). */
export function resolvedEnvironment(
  env: ReadonlyMap<string, EnvSource>,
  secretKey: (name: string, key: string) => string | undefined,
): { env: Map<string, string>; errors: string[] } {
  const resolved = new Map<string, string>();
  const errors: string[] = [];
  for (const [name, source] of env) {
    const ref = source.valueFrom?.secretKeyRef;
    if (ref) {
      const value = secretKey(ref.name, ref.key);
      if (value === undefined) errors.push(`couldn't find key ${ref.key} in Secret ${ref.name} (${name})`);
      else resolved.set(name, value);
    } else if (source.value !== undefined) {
      resolved.set(name, source.value);
    }
  }
  return { env: resolved, errors };
}

/** Go's strconv.ParseBool. */
function parseBool(name: string, text: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  throw new Error(`failed to parse ${name}: strconv.ParseBool: parsing "${text}": invalid syntax`);
}

const envBool = (env: ReadonlyMap<string, string>, name: string, fallback: boolean) => (env.has(name) ? parseBool(name, env.get(name)!) : fallback);

/** The part of config.Read the program's values decide. */
export function controllerConfiguration(env: ReadonlyMap<string, string>) {
  const network = env.get("HCLOUD_NETWORK") ?? "";
  return {
    token: env.get("HCLOUD_TOKEN") ?? "",
    network,
    // "Enabling Routes only makes sense when a Network is configured".
    routesEnabled: network !== "" && envBool(env, "HCLOUD_NETWORK_ROUTES_ENABLED", true),
    loadBalancersEnabled: envBool(env, "HCLOUD_LOAD_BALANCERS_ENABLED", true),
    loadBalancerPrivateIp: envBool(env, "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", false),
    loadBalancerNetworkZone: env.get("HCLOUD_LOAD_BALANCERS_NETWORK_ZONE") ?? "",
    loadBalancerLocation: env.get("HCLOUD_LOAD_BALANCERS_LOCATION") ?? "",
  };
}
