import { autoscaledPoolReplicasUnpinned } from "./rules/autoscaled-pool-replicas-unpinned";
import { ciliumSupportsTenant } from "./rules/cilium-supports-tenant";
import { clusterWaitsForCaren } from "./rules/cluster-waits-for-caren";
import { csiReclaimPolicyDelete } from "./rules/csi-reclaim-policy-delete";
import { fleetObjectsDeclared } from "./rules/fleet-objects-declared";
import { fleetVersionDrift } from "./rules/fleet-version-drift";
import { kubeletApiAdminPatches } from "./rules/kubelet-api-admin-patches";
import { lbDrainBeforeClusterDelete } from "./rules/lb-drain-before-cluster-delete";
import { lbGcAnnotationBoolean } from "./rules/lb-gc-annotation-boolean";
import { lbGcOptOutExempted } from "./rules/lb-gc-opt-out-exempted";
import { managementAdminPortsClosed } from "./rules/management-admin-ports-closed";
import { managementDeletionProtection } from "./rules/management-deletion-protection";
import { managementK3sUpgradePath } from "./rules/management-k3s-upgrade-path";
import { managementKubernetesVersion } from "./rules/management-kubernetes-version";
import { monthlyBudget } from "./rules/monthly-budget";
import { providerContracts } from "./rules/provider-contracts";
import { tenantHasHcloudCcm } from "./rules/tenant-has-hcloud-ccm";
import { tenantNotRemoved } from "./rules/tenant-not-removed";
import { tenantUpgradePath } from "./rules/tenant-upgrade-path";
import { tenantVersionInClusterClass } from "./rules/tenant-version-in-cluster-class";
import { tenantWorkerLag } from "./rules/tenant-worker-lag";

/**
 * Every rule of the pack, in the order of the table in docs/policies.md. index.ts hands them to the PolicyPack;
 * tests import this file, never index.ts (the PolicyPack constructor starts a gRPC server).
 */
export const allRules = [
  tenantVersionInClusterClass,
  tenantUpgradePath,
  tenantWorkerLag,
  autoscaledPoolReplicasUnpinned,
  tenantNotRemoved,
  managementKubernetesVersion,
  managementK3sUpgradePath,
  providerContracts,
  kubeletApiAdminPatches,
  ciliumSupportsTenant,
  fleetVersionDrift,
  lbGcOptOutExempted,
  lbGcAnnotationBoolean,
  lbDrainBeforeClusterDelete,
  clusterWaitsForCaren,
  tenantHasHcloudCcm,
  csiReclaimPolicyDelete,
  managementDeletionProtection,
  managementAdminPortsClosed,
  fleetObjectsDeclared,
  monthlyBudget,
];
