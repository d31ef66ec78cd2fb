import semver from "semver";
import { catalog } from "../versions/catalog";

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

/**
 * The names a ClusterClass uses to call CAREN's runtime extensions. Derived here, once,
 * from the CAREN release: the GeneratePatches handlers carry a version number that CAREN
 * bumps every few releases (a class pinned to an old one breaks two releases later), and
 * every handler name ends in a hook suffix (`-dv`, `-gp`) and `.<ExtensionConfig name>`.
 */

/** Variable schemas CAREN registers (`<p>clusterconfigvars-dv`); Hetzner has none of its own. */
export const carenSchemaProviders = ["generic", "docker", "aws", "nutanix", "eks"] as const;
export type CarenSchemaProvider = (typeof carenSchemaProviders)[number];


/** Handler names for one CAREN release, each already qualified with the ExtensionConfig name. */
export interface CarenExtensionNames {
  /** The ExtensionConfig the CAREN chart creates; it is named after the chart (never set nameOverride). */
  readonly extensionConfig: string;
  /** GeneratePatches generation in use, e.g. 6 for `genericclusterv6configpatch-gp`. */
  readonly patchGeneration: number;
  /** DiscoverVariables handler that publishes the `clusterConfig` schema of a provider. */
  clusterConfigVariables(provider: CarenSchemaProvider): string;
  /** DiscoverVariables handler for `workerConfig` (generic has none: CAREN registers no generic worker schema). */
  workerConfigVariables(provider: Exclude<CarenSchemaProvider, "generic">): string;
  /** GeneratePatches handler for the cluster-wide patches of a provider. */
  clusterPatches(provider: CarenSchemaProvider): string;
  /** GeneratePatches handler for the worker patches of a provider. */
  workerPatches(provider: CarenSchemaProvider): string;
}

/** The GeneratePatches generation of a CAREN release tag (6 for v0.45–v0.50); throws for unchecked releases. */
export function carenPatchGeneration(carenVersion: string): number {
  const version = semver.valid(carenVersion);
  if (!version || !carenVersion.startsWith("v")) {
    throw new Error(`CAREN version ${JSON.stringify(carenVersion)} is not a release tag such as ${catalog.caren.chart.version}`);
  }
  const row = catalog.caren.patchGenerations.find((entry) => semver.satisfies(version, entry.releases));
  if (!row) {
    throw new Error(
      `CAREN ${carenVersion} has no entry in the extension-name table (known: ${catalog.caren.patchGenerations.map((entry) => entry.releases).join("; ")}). ` +
        "Check which configpatch generation it registers in pkg/handlers/generic/mutation/metapatch_handler.go and add a row to catalog.caren.patchGenerations.",
    );
  }
  return row.current;
}

/** All handler names of a CAREN release, defaulting to the catalog's. */
export function carenExtensionNames(
  carenVersion: string = catalog.caren.chart.version,
  extensionConfig: string = catalog.caren.chart.chart,
): CarenExtensionNames {
  const generation = carenPatchGeneration(carenVersion);
  const qualify = (handler: string) => `${handler}.${extensionConfig}`;
  return {
    extensionConfig,
    patchGeneration: generation,
    clusterConfigVariables: (provider) => qualify(`${provider}clusterconfigvars-dv`),
    workerConfigVariables: (provider) => qualify(`${provider}workerconfigvars-dv`),
    clusterPatches: (provider) => qualify(`${provider}clusterv${generation}configpatch-gp`),
    workerPatches: (provider) => qualify(`${provider}workerv${generation}configpatch-gp`),
  };
}
