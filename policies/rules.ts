import { ciliumSupportsTenant } from "./rules/cilium-supports-tenant";
import { clusterClassVersionsChainable } from "./rules/cluster-class-versions-chainable";
import { clusterWaitsForCaren } from "./rules/cluster-waits-for-caren";
import { csiReclaimPolicyDelete } from "./rules/csi-reclaim-policy-delete";
import { fleetVersionDrift } from "./rules/fleet-version-drift";
import { kubeletApiAdminPatches } from "./rules/kubelet-api-admin-patches";
import { lbDrainBeforeClusterDelete } from "./rules/lb-drain-before-cluster-delete";
import { lbGcAnnotationBoolean } from "./rules/lb-gc-annotation-boolean";
import { lbGcOptOutExempted } from "./rules/lb-gc-opt-out-exempted";
import { managementAdminPortsClosed } from "./rules/management-admin-ports-closed";
import { managementDeletionProtection } from "./rules/management-deletion-protection";
import { managementKubernetesVersion } from "./rules/management-kubernetes-version";
import { providerContracts } from "./rules/provider-contracts";
import { tenantHasHcloudCcm } from "./rules/tenant-has-hcloud-ccm";
import { tenantKubernetesVersionCarenTested } from "./rules/tenant-kubernetes-version-caren-tested";
import { tenantKubernetesVersionSupported } from "./rules/tenant-kubernetes-version-supported";
import { tenantUpgradePath } from "./rules/tenant-upgrade-path";
import { tenantVersionInClusterClass } from "./rules/tenant-version-in-cluster-class";
import { tenantWorkerLag } from "./rules/tenant-worker-lag";

/**
 * Every rule of the pack, keyed by the rule number (the README table follows this
 * order). index.ts hands them to the PolicyPack; tests import this file, never index.ts
 * (the PolicyPack constructor starts a gRPC server).
 */
export const rules = {
  "1": tenantKubernetesVersionSupported,
  "1b": tenantKubernetesVersionCarenTested,
  "2": tenantVersionInClusterClass,
  "3": clusterClassVersionsChainable,
  "4": tenantUpgradePath,
  "5": tenantWorkerLag,
  "6": managementKubernetesVersion,
  "7": providerContracts,
  "8": kubeletApiAdminPatches,
  "9": ciliumSupportsTenant,
  "10": fleetVersionDrift,
  "11": lbGcOptOutExempted,
  "12": lbGcAnnotationBoolean,
  "13": lbDrainBeforeClusterDelete,
  "14": clusterWaitsForCaren,
  "15": tenantHasHcloudCcm,
  "16": csiReclaimPolicyDelete,
  "17a": managementDeletionProtection,
  "17b": managementAdminPortsClosed,
} as const;

/** The rules in table order. */
export const allRules = Object.values(rules);
