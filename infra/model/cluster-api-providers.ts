import { catalog } from "./catalog";

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
}

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
    version: catalog.clusterApi.version,
    featureGates: ["ClusterTopology", "RuntimeSDK"],
  },
  {
    kind: "BootstrapProvider",
    name: "kubeadm",
    namespace: "capi-kubeadm-bootstrap-system",
    controllerDeployment: "capi-kubeadm-bootstrap-controller-manager",
    version: catalog.clusterApi.version,
    featureGates: [],
  },
  {
    kind: "ControlPlaneProvider",
    name: "kubeadm",
    namespace: "capi-kubeadm-control-plane-system",
    controllerDeployment: "capi-kubeadm-control-plane-controller-manager",
    version: catalog.clusterApi.version,
    featureGates: ["ClusterTopology"],
  },
  {
    kind: "InfrastructureProvider",
    name: "hetzner",
    namespace: "caph-system",
    controllerDeployment: "caph-controller-manager",
    version: catalog.caph.version,
    featureGates: [],
  },
  {
    kind: "AddonProvider",
    name: "helm",
    namespace: "caaph-system",
    controllerDeployment: "caaph-controller-manager",
    version: catalog.caaph.version,
    featureGates: [],
  },
];

/** The configSecret data that turns a provider's gates on, e.g. `{ CLUSTER_TOPOLOGY: "true" }`. */
export function featureGateSecretData(gates: readonly ClusterApiFeatureGate[]): Record<string, string> {
  return Object.fromEntries(gates.map((gate) => [featureGateVariables[gate], "true"]));
}
