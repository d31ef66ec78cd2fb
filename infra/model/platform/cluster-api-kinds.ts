import { catalog } from "../versions/catalog";

/**
 * API versions of the kinds the fleet declares, each the one its provider serves:
 * - CAPI core, kubeadm bootstrap and control plane: v1beta2 (sigs.k8s.io/cluster-api@v1.12.10: api/…/v1beta2).
 * - CAPH: the contract in the catalog (v1beta1 for v1.1.x; its CRDs serve nothing else).
 * - CAAPH: v1alpha1 (sigs.k8s.io/cluster-api-addon-provider-helm@v0.6.4: api/v1alpha1).
 * - cluster-api-operator provider CRs: v1alpha2 (sigs.k8s.io/cluster-api-operator@v0.28.0: api/v1alpha2).
 * - CAPI runtime ExtensionConfig: v1beta2 (sigs.k8s.io/cluster-api@v1.12.10: api/runtime/v1beta2).
 */
export const apiVersions = {
  cluster: "cluster.x-k8s.io/v1beta2",
  kubeadmControlPlane: "controlplane.cluster.x-k8s.io/v1beta2",
  kubeadmBootstrap: "bootstrap.cluster.x-k8s.io/v1beta2",
  hetzner: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
  helmChartProxy: "addons.cluster.x-k8s.io/v1alpha1",
  fluxKustomization: "kustomize.toolkit.fluxcd.io/v1",
  clusterApiOperatorProvider: "operator.cluster.x-k8s.io/v1alpha2",
  extensionConfig: "runtime.cluster.x-k8s.io/v1beta2",
} as const;

/**
 * The Pulumi type token of a Kubernetes kind (`kubernetes:<apiVersion>:<Kind>`): how the
 * engine and the policy pack see a custom resource, which has no class to match on.
 */
export function kubernetesTypeToken(apiVersion: string, kind: string): string {
  return `kubernetes:${apiVersion}:${kind}`;
}

/** A Kubernetes object as plain data: what the components register and the conformance tests send to an API server. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}
