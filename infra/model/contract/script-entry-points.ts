/**
 * The programs that `pulumi up` and `pulumi destroy` run on the operator's machine, as the local
 * Commands name them: `node <entry point>`, relative to the repository root (the command's `dir`,
 * components/local-command-dir.ts). Each entry point is a one-line file in scripts/ that imports
 * the program beside its component.
 *
 * The paths are part of every deployed stack's state (@pulumi/command@1.2.1: local/command.d.ts):
 * - a `delete` runs the command line kept in the state, so a moved entry point breaks the delete
 *   of every deployed stack (drain, destroy guard);
 * - a changed `create` command line runs `create` again at the next `up`: for the PKI that means
 *   new certificate authorities for a running cluster; for the others, a run nobody asked for and
 *   a noisy preview.
 *
 * This file imports nothing, so plain Node.js (type stripping) can import it from the `.mjs`
 * scripts as well.
 */
export const scriptEntryPoints = {
  /** `create`: the management cluster's CAs and admin certificate (components/management-cluster/management-pki.mjs). */
  managementPki: "scripts/management-pki.mjs",
  /** `create`: waits until the new management cluster's API answers (components/management-cluster/wait-for-kube-api.mjs). */
  waitForKubeApi: "scripts/wait-for-kube-api.mjs",
  /** `create`: an existing management cluster's preflight (components/management-cluster/existing-cluster-preflight.mjs). */
  existingClusterPreflight: "scripts/existing-cluster-preflight.mjs",
  /** `create`: applies the pinned system-upgrade-controller release (components/k3s-upgrades/install-system-upgrade-controller.mjs). */
  installSystemUpgradeController: "scripts/install-system-upgrade-controller.mjs",
  /** `create`: waits until the providers' admission webhooks answer (components/cluster-api/wait-for-admission.mjs). */
  waitForAdmission: "scripts/wait-for-admission.mjs",
  /** `create`: reads a tenant's kubeconfig from CAPI's Secret (components/tenant-cluster/workload-kubeconfig.mjs). */
  workloadKubeconfig: "scripts/workload-kubeconfig.mjs",
  /** `delete`: drains a tenant's LoadBalancer Services before its Cluster goes (components/tenant-cluster/drain-load-balancers.mjs). */
  drainLoadBalancers: "scripts/drain-load-balancers.mjs",
  /** `create`: hands a pool's replicas to Karpenter (components/karpenter/hand-over.mjs). */
  karpenterHandOver: "scripts/karpenter-hand-over.mjs",
  /** `delete`: stops `pulumi destroy` while Clusters the stack does not declare use the class (components/destroy-guard/foreign-clusters.mjs). */
  destroyGuard: "scripts/destroy-guard.mjs",
} as const;
