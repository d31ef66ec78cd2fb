import { catalog } from "../versions/catalog";
import { CarenSchemaProvider } from "../facts/caren";
import { carenPatchGeneration } from "../versions/compatibility";

/**
 * The names a ClusterClass uses to call CAREN's runtime extensions. Derived here, once,
 * from the CAREN release: the GeneratePatches handlers carry a version number that CAREN
 * bumps every few releases (a class pinned to an old one breaks two releases later), and
 * every handler name ends in a hook suffix (`-dv`, `-gp`) and `.<ExtensionConfig name>`.
 */



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
