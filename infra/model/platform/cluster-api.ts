import { catalog, type HelmChartPin } from "../versions/catalog";
import { apiVersions, type Manifest } from "./cluster-api-kinds";
import {
  clusterApiOperatorValues,
  clusterApiProviders,
  featureGatesSecretName,
  providerConfigSecret,
  providerManagerContainer,
  type ClusterApiProviderSpec,
} from "./cluster-api-providers";
import { mirroredChart, mirroredImage, providerFetchConfig, type Mirrors } from "./mirrors";
import { platformNamespaces } from "./platform-namespaces";

/**
 * What the ClusterApi component (components/cluster-api) installs, as plain data: cert-manager's
 * and cluster-api-operator's releases, one provider resource per provider of
 * cluster-api-providers.ts with the config Secrets they name, and the server-side dry runs the
 * admission wait makes before the providers are created.
 */

/** Namespaces of the two charts the component installs. */
export const certManagerNamespace = platformNamespaces.certManager;
export const operatorNamespace = platformNamespaces.clusterApiOperator;

/** How long Pulumi waits, by default, for each provider to report Ready (the operator downloads its components first). */
export const defaultProviderReadyTimeoutSeconds = 900;

/** What the providers' resources depend on in the stack: a GitHub token or not, and the mirrors. */
export interface ProviderOptions {
  readonly githubToken: boolean;
  readonly mirrors?: Mirrors;
}

/** cert-manager's chart with its CRDs, its images from the mirror when the stack names one. */
export function certManagerRelease(mirrors: Mirrors = {}): { pin: HelmChartPin; values: Record<string, unknown> } {
  return {
    pin: mirroredChart(catalog.certManager.chart, mirrors),
    values: { crds: { enabled: true }, ...(mirrors.images ? { imageRegistry: mirrors.images } : {}) },
  };
}

/** cluster-api-operator's chart and values, its manager image from the mirror when the stack names one. */
export function clusterApiOperatorRelease(mirrors: Mirrors = {}): { pin: HelmChartPin; values: Record<string, unknown> } {
  return {
    pin: mirroredChart(catalog.clusterApiOperator.chart, mirrors),
    values: {
      ...clusterApiOperatorValues,
      ...(mirrors.images ? { image: { manager: { repository: mirroredImage(catalog.clusterApiOperator.image, mirrors) } } } : {}),
    },
  };
}

/**
 * The `spec` of one provider resource. Gates go in twice on purpose: the configSecret
 * fills the `${CLUSTER_TOPOLOGY}`-style variables in the upstream manifests (what
 * `CLUSTER_TOPOLOGY=true clusterctl init` does), and `manager.featureGates` makes the
 * operator set the flag explicitly, so neither path alone can leave a gate off. With a
 * GitHub token every provider names a configSecret that holds it (`providerConfigSecret`).
 */
export function providerSpec(provider: ClusterApiProviderSpec, options: ProviderOptions = { githubToken: false }): Record<string, unknown> {
  const gates = provider.featureGates;
  const configSecret = providerConfigSecret(provider, options);
  const fetchConfig = providerFetchConfig(provider, options.mirrors);
  return {
    version: provider.version,
    ...(fetchConfig ? { fetchConfig } : {}),
    ...(configSecret ? { configSecret: { name: configSecret.name, namespace: configSecret.namespace } } : {}),
    ...(gates.length > 0 ? { manager: { featureGates: Object.fromEntries(gates.map((gate) => [gate, true])) } } : {}),
    // The operator sets the image of the named container of the provider's Deployments
    // (sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/component_customizer.go, customizeContainer).
    ...(options.mirrors?.images ? { deployment: { containers: [{ name: providerManagerContainer, imageUrl: `${mirroredImage(provider.image, options.mirrors)}:${provider.version}` }] } } : {}),
  };
}

/**
 * One provider resource, awaited until the operator reports it Ready (custom resources are not
 * awaited by default; the operator sets Ready once the provider's controller Deployment is available).
 */
export function providerManifest(provider: ClusterApiProviderSpec, options: ProviderOptions, readyTimeoutSeconds: number = defaultProviderReadyTimeoutSeconds): Manifest {
  return {
    apiVersion: apiVersions.clusterApiOperatorProvider,
    kind: provider.kind,
    metadata: {
      name: provider.name,
      namespace: provider.namespace,
      annotations: {
        "pulumi.com/waitFor": "condition=Ready",
        "pulumi.com/timeoutSeconds": String(readyTimeoutSeconds),
      },
    },
    spec: providerSpec(provider, options),
  };
}

/** The server-side dry run of one provider resource: its collection and the object (no secret in it). */
export function admissionRequest(provider: ClusterApiProviderSpec, options: ProviderOptions): { path: string; body: Record<string, unknown> } {
  const [group, version] = apiVersions.clusterApiOperatorProvider.split("/");
  return {
    path: `/apis/${group}/${version}/namespaces/${provider.namespace}/${provider.kind.toLowerCase()}s`,
    body: { apiVersion: apiVersions.clusterApiOperatorProvider, kind: provider.kind, metadata: { name: provider.name, namespace: provider.namespace }, spec: providerSpec(provider, options) },
  };
}

/** The providers split for their order: the core, which the operator needs first, and the others. */
export function providersInOrder(providers: readonly ClusterApiProviderSpec[] = clusterApiProviders): { core: ClusterApiProviderSpec; others: ClusterApiProviderSpec[] } {
  const [core, ...others] = providers;
  if (core?.kind !== "CoreProvider") {
    throw new Error("ClusterApi: the provider list must start with the CoreProvider");
  }
  return { core, others };
}

/** One config Secret a provider names (`spec.configSecret`). */
export interface ProviderConfigSecretPlan {
  readonly provider: ClusterApiProviderSpec;
  readonly name: string;
  readonly namespace: string;
  /** Whether it holds the feature gates (else only the GitHub token). */
  readonly gated: boolean;
  /** The end of its Pulumi resource name, after the component's name. */
  readonly resourceSuffix: string;
}

/**
 * The config Secrets of the providers that need one, each in its provider's own namespace (the
 * operator's API requires it; providerConfigSecret puts it there). The core's gates Secret keeps
 * the resource name it had when it was the only one, so it is not replaced.
 */
export function providerConfigSecretPlans(options: ProviderOptions, providers: readonly ClusterApiProviderSpec[] = clusterApiProviders): ProviderConfigSecretPlan[] {
  const { core } = providersInOrder(providers);
  return providers.flatMap((provider) => {
    const ref = providerConfigSecret(provider, options);
    if (!ref) return [];
    const gated = ref.name === featureGatesSecretName;
    const resourceSuffix = gated && provider === core ? "feature-gates" : `${ref.namespace}-${gated ? "feature-gates" : "github-token"}`;
    return [{ provider, name: ref.name, namespace: ref.namespace, gated, resourceSuffix }];
  });
}
