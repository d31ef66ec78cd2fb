import { catalog } from "./catalog";

/**
 * API versions of the kinds the fleet declares, each the one its provider serves:
 * - CAPI core, kubeadm bootstrap and control plane: v1beta2 (sigs.k8s.io/cluster-api@v1.12.10: api/…/v1beta2).
 * - CAPH: the contract in the catalog (v1beta1 for v1.1.x; its CRDs serve nothing else).
 * - CAAPH: v1alpha1 (sigs.k8s.io/cluster-api-addon-provider-helm@v0.6.4: api/v1alpha1).
 */
export const apiVersions = {
  cluster: "cluster.x-k8s.io/v1beta2",
  kubeadmControlPlane: "controlplane.cluster.x-k8s.io/v1beta2",
  kubeadmBootstrap: "bootstrap.cluster.x-k8s.io/v1beta2",
  hetzner: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
  helmChartProxy: "addons.cluster.x-k8s.io/v1alpha1",
  fluxKustomization: "kustomize.toolkit.fluxcd.io/v1",
} as const;

/** A Kubernetes object as plain data: what the components register and the conformance tests send to an API server. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}
