/**
 * What CAREN is, as the stack config's schema and the platform's builders name it: its
 * annotations, the checks of its preflight webhook and the providers it publishes variable
 * schemas for (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0).
 */

/**
 * CAREN's opt-out from its BeforeClusterDelete load-balancer GC (`strconv.ParseBool`; a
 * missing annotation means on). There is no CAREN variable for it.
 */
export const loadBalancerGcAnnotation = "caren.nutanix.com/loadbalancer-gc";

/**
 * CAREN's annotation that skips named checks of its preflight webhook for one Cluster
 * (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: api/v1alpha1/constants.go,
 * `PreflightChecksSkipAnnotationKey`; pkg/webhook/preflight/skip/skip.go reads a comma-separated,
 * case-insensitive list, and `all` skips every check).
 */
export const carenPreflightSkipAnnotation = "preflight.cluster.caren.nutanix.com/skip";

/**
 * The preflight checks CAREN runs for a Cluster of this fleet, by the names its skip annotation
 * takes: the generic checker's (pkg/webhook/preflight/generic/spec.go `GenericConfiguration`, the
 * clusterConfig can be read; registry.go `Registry`, one per registry and mirror: the credential
 * Secret exists in the Cluster's namespace and the management cluster can reach the registry).
 * The Nutanix checker's checks (pkg/webhook/preflight/nutanix/) concern Nutanix clusters only, and
 * `all` is not offered: a tenant names what it skips.
 */
export const carenPreflightChecks = ["GenericConfiguration", "Registry"] as const;
export type CarenPreflightCheck = (typeof carenPreflightChecks)[number];

/** Variable schemas CAREN registers (`<p>clusterconfigvars-dv`); Hetzner has none of its own. */
export const carenSchemaProviders = ["generic", "docker", "aws", "nutanix", "eks"] as const;
export type CarenSchemaProvider = (typeof carenSchemaProviders)[number];
