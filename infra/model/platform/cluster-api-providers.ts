import { catalog } from "../versions/catalog";

/**
 * The Cluster API providers the operator installs, as pure data: the ClusterApi component
 * turns each row into an `operator.cluster.x-k8s.io/v1alpha2` resource, and tests and
 * policies read the same rows.
 */

/** Alpha feature gates the fleet turns on (sigs.k8s.io/cluster-api@v1.12.10: feature/feature.go). */
export const clusterApiFeatureGates = ["ClusterTopology", "RuntimeSDK"] as const;
export type ClusterApiFeatureGate = (typeof clusterApiFeatureGates)[number];

/**
 * The clusterctl variable behind each gate. The provider manifests template
 * `--feature-gates=…ClusterTopology=${CLUSTER_TOPOLOGY:=false},RuntimeSDK=${EXP_RUNTIME_SDK:=false}`
 * (config/manager/manager.yaml and its KCP twin), and the operator substitutes these from
 * the provider's `configSecret`.
 */
export const featureGateVariables: Readonly<Record<ClusterApiFeatureGate, string>> = {
  ClusterTopology: "CLUSTER_TOPOLOGY",
  RuntimeSDK: "EXP_RUNTIME_SDK",
};

/** Provider CR kinds of cluster-api-operator v1alpha2. */
export type ProviderKind = "CoreProvider" | "BootstrapProvider" | "ControlPlaneProvider" | "InfrastructureProvider" | "AddonProvider";

/** One provider the operator installs. */
export interface ClusterApiProviderSpec {
  readonly kind: ProviderKind;
  /**
   * clusterctl's built-in provider name; the operator resolves the release repository from
   * it (sigs.k8s.io/cluster-api@v1.12.10: cmd/clusterctl/client/config/providers_client.go).
   */
  readonly name: string;
  /** Namespace of the provider CR and of the controller it installs. */
  readonly namespace: string;
  readonly version: string;
  /** Gates this provider's manager needs on. */
  readonly featureGates: readonly ClusterApiFeatureGate[];
  /** The controller Deployment the provider's components create (health checks). */
  readonly controllerDeployment: string;
  /** The release's image of that Deployment's `manager` container, without its tag (the version). */
  readonly image: string;
}

/** The container of each provider's controller Deployment that runs its manager (each release's config/manager). */
export const providerManagerContainer = "manager";

/**
 * Core first: the operator installs the others only once the core provider exists.
 * ClusterTopology must be on in core and in the kubeadm control plane (KCP reconciles
 * topology-owned control planes); RuntimeSDK only in core, which calls CAREN's hooks.
 */
export const clusterApiProviders: readonly ClusterApiProviderSpec[] = [
  {
    kind: "CoreProvider",
    name: "cluster-api",
    namespace: "capi-system",
    controllerDeployment: "capi-controller-manager",
    image: catalog.clusterApi.images.core,
    version: catalog.clusterApi.version,
    featureGates: ["ClusterTopology", "RuntimeSDK"],
  },
  {
    kind: "BootstrapProvider",
    name: "kubeadm",
    namespace: "capi-kubeadm-bootstrap-system",
    controllerDeployment: "capi-kubeadm-bootstrap-controller-manager",
    image: catalog.clusterApi.images.kubeadmBootstrap,
    version: catalog.clusterApi.version,
    featureGates: [],
  },
  {
    kind: "ControlPlaneProvider",
    name: "kubeadm",
    namespace: "capi-kubeadm-control-plane-system",
    controllerDeployment: "capi-kubeadm-control-plane-controller-manager",
    image: catalog.clusterApi.images.kubeadmControlPlane,
    version: catalog.clusterApi.version,
    featureGates: ["ClusterTopology"],
  },
  {
    kind: "InfrastructureProvider",
    name: "hetzner",
    namespace: "caph-system",
    controllerDeployment: "caph-controller-manager",
    image: catalog.caph.image,
    version: catalog.caph.version,
    featureGates: [],
  },
  {
    kind: "AddonProvider",
    name: "helm",
    namespace: "caaph-system",
    controllerDeployment: "caaph-controller-manager",
    image: catalog.caaph.image,
    version: catalog.caaph.version,
    featureGates: [],
  },
];

/**
 * Values of the operator's chart. `watchConfigSecret` adds the manager's `--watch-configsecret`:
 * the operator then reconciles a provider as soon as its config Secret changes, instead of at its
 * next resync (`--sync-period`, 10 minutes), and re-applies its components because the Secret's
 * data is part of the provider's applied hash (sigs.k8s.io/cluster-api-operator@v0.28.0: cmd/main.go,
 * internal/controller/genericprovider_controller.go `addConfigSecretToHash`).
 */
export const clusterApiOperatorValues: Readonly<Record<string, unknown>> = { watchConfigSecret: true };

/** The configSecret data that turns a provider's gates on, e.g. `{ CLUSTER_TOPOLOGY: "true" }`. */
export function featureGateSecretData(gates: readonly ClusterApiFeatureGate[]): Record<string, string> {
  return Object.fromEntries(gates.map((gate) => [featureGateVariables[gate], "true"]));
}

/** The Secret, in each gated provider's own namespace, whose keys fill its gate variables. */
export const featureGatesSecretName = "capi-feature-gates";

/**
 * The variable clusterctl's GitHub repository client takes its token from
 * (sigs.k8s.io/cluster-api@v1.12.10: cmd/clusterctl/client/config/variables_client.go
 * `GitHubTokenVariable`, read in cmd/clusterctl/client/repository/repository_github.go). The
 * operator loads every key of a provider's `configSecret` into those variables before it
 * fetches the provider's release (sigs.k8s.io/cluster-api-operator@v0.28.0:
 * internal/controller/phase_initialize.go `initReaderVariables`), and its preflight check
 * refuses a token GitHub does not accept (internal/controller/preflight_checks.go). Without
 * one the downloads share GitHub's 60 unauthenticated requests an hour.
 */
export const githubTokenVariable = "github-token";

/** A token-only config Secret, in the namespace of each provider without gates. */
export const githubTokenSecretName = "capi-fleet-github-token";

/** The Secret a provider's `spec.configSecret` names. */
export interface ProviderConfigSecretRef {
  readonly name: string;
  readonly namespace: string;
}

/**
 * The config Secret of a provider, always in the provider's own namespace: the API requires it
 * ("This secret must be in the same namespace as the provider", sigs.k8s.io/cluster-api-operator@v0.28.0:
 * api/v1alpha2/provider_types.go, ConfigSecret), though that release reads whatever namespace the
 * reference names. A provider with gates gets a gates Secret (with the GitHub token when one is
 * set), the others a token-only Secret when a token is set, otherwise none. One Secret per
 * provider at most: the operator reads exactly one.
 */
export function providerConfigSecret(provider: ClusterApiProviderSpec, options: { readonly githubToken: boolean }): ProviderConfigSecretRef | undefined {
  if (provider.featureGates.length > 0) return { name: featureGatesSecretName, namespace: provider.namespace };
  return options.githubToken ? { name: githubTokenSecretName, namespace: provider.namespace } : undefined;
}
