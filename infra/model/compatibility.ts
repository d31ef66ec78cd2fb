import { catalog, type MinorRange } from "./catalog";
import { compareMinors, describeRange } from "./kubernetes-version";

/** A Kubernetes range one pinned component supports, named for messages. */
export interface KubernetesConstraint {
  /** e.g. "Cluster API v1.12.10". */
  readonly component: string;
  readonly range: MinorRange;
}

/**
 * What limits the management cluster's Kubernetes minor: everything the platform installs
 * on it. The hcloud CCM only runs there in `hetzner` mode.
 */
export function managementKubernetesConstraints(mode: "hetzner" | "existing"): KubernetesConstraint[] {
  return [
    { component: `Cluster API ${catalog.clusterApi.version}`, range: catalog.clusterApi.managementKubernetes },
    { component: `cert-manager ${catalog.certManager.chart.version}`, range: catalog.certManager.kubernetes },
    { component: `Flux ${catalog.flux.distribution}`, range: catalog.flux.kubernetes },
    ...(mode === "hetzner"
      ? [{ component: `hcloud-cloud-controller-manager ${catalog.hcloudCloudControllerManager.chart.version}`, range: catalog.hcloudCloudControllerManager.kubernetes }]
      : []),
  ];
}

/** The minors every constraint allows, or undefined when they do not overlap. */
export function intersectRanges(constraints: readonly KubernetesConstraint[]): MinorRange | undefined {
  if (constraints.length === 0) {
    return undefined;
  }
  const min = constraints.map((c) => c.range.min).reduce((a, b) => (compareMinors(a, b) >= 0 ? a : b));
  const max = constraints.map((c) => c.range.max).reduce((a, b) => (compareMinors(a, b) <= 0 ? a : b));
  return compareMinors(min, max) <= 0 ? { min, max } : undefined;
}

/** "Cluster API v1.12.10 1.31–1.36, cert-manager v1.21.2 1.33–1.36" for messages. */
export function describeConstraints(constraints: readonly KubernetesConstraint[]): string {
  return constraints.map((c) => `${c.component} ${describeRange(c.range)}`).join(", ");
}
