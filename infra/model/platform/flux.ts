/**
 * What every Flux Kustomization of the fleet shares, as plain data: the management cluster's
 * (components/flux) and a tenant's apps (tenant/tenant-cluster-plan.ts).
 */

/** Name of the GitRepository the fleet's Kustomizations read (in Flux's namespace). */
export const fleetRepositoryName = "fleet";

/** Shared Kustomization settings: prune what leaves Git, retry soon after a failure. */
export function kustomizationSpec(path: string): Record<string, unknown> {
  return {
    interval: "10m",
    retryInterval: "2m",
    timeout: "5m",
    prune: true,
    sourceRef: { kind: "GitRepository", name: fleetRepositoryName },
    path,
  };
}
