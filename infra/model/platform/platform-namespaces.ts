import { clusterApiProviders } from "./cluster-api-providers";
import { clusterClassNamespace } from "./hetzner-cluster-class";

/**
 * The namespaces the platform installs into on the management cluster. The components take
 * their namespaces from here, and config validation refuses a tenant in any of them: the
 * tenant's Namespace would be created over the platform's (or fail to), and deleting the
 * tenant would delete the platform's namespace with everything in it.
 */
export const platformNamespaces = {
  /** The hcloud CCM and its `hcloud` Secret. */
  kubeSystem: "kube-system",
  certManager: "cert-manager",
  clusterApiOperator: "capi-operator-system",
  caren: "caren-system",
  flux: "flux-system",
  /**
   * The system-upgrade-controller and its Plans (`hetzner` mode): the namespace its release
   * manifest installs into (rancher/system-upgrade-controller@v0.20.1: kustomization.yaml).
   */
  systemUpgrade: "system-upgrade",
} as const;

/** Namespaces every Kubernetes cluster starts with (kubernetes.io: "Initial namespaces"). */
const kubernetesNamespaces = ["default", "kube-public", "kube-node-lease", platformNamespaces.kubeSystem];

/** Every namespace a tenant must not use, with what owns it. */
export function reservedNamespaces(): ReadonlyMap<string, string> {
  const reserved = new Map<string, string>();
  for (const namespace of kubernetesNamespaces) {
    reserved.set(namespace, "Kubernetes");
  }
  reserved.set(platformNamespaces.certManager, "cert-manager");
  reserved.set(platformNamespaces.clusterApiOperator, "the cluster-api-operator");
  for (const provider of clusterApiProviders) {
    reserved.set(provider.namespace, `the Cluster API ${provider.kind} "${provider.name}"`);
  }
  reserved.set(platformNamespaces.caren, "CAREN");
  reserved.set(platformNamespaces.flux, "Flux");
  reserved.set(platformNamespaces.systemUpgrade, "the system-upgrade-controller");
  reserved.set(clusterClassNamespace, "the fleet's ClusterClass");
  return reserved;
}
