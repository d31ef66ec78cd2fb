/**
 * The type token of each of the fleet's components: part of every child's URN, so of each
 * deployed stack's state (a changed token is a new resource to the engine, unless aliased), and
 * what the policy pack's stack rules match resources by.
 *
 * This file imports nothing, so plain Node.js (type stripping) can import it from the `.mjs`
 * scripts as well.
 */
export const componentTypes = {
  managementCluster: "capi-fleet:management:ManagementCluster",
  k3sUpgrades: "capi-fleet:management:K3sUpgrades",
  hcloudCloudControllerManager: "capi-fleet:platform:HcloudCloudControllerManager",
  clusterApi: "capi-fleet:platform:ClusterApi",
  caren: "capi-fleet:platform:Caren",
  flux: "capi-fleet:platform:Flux",
  hetznerClusterClass: "capi-fleet:tenants:HetznerClusterClass",
  tenantCluster: "capi-fleet:tenants:TenantCluster",
  clusterAutoscaler: "capi-fleet:tenants:ClusterAutoscaler",
  karpenter: "capi-fleet:tenants:Karpenter",
  deployedState: "capi-fleet:fleet:DeployedState",
  managementReference: "capi-fleet:fleet:ManagementReference",
  destroyGuard: "capi-fleet:fleet:DestroyGuard",
} as const;

/** Type tokens of the fleet's own components start with this (the project's package name). */
export const fleetComponentPrefix = "capi-fleet:";
