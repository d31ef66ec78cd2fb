/**
 * Output names that deployed state and other readers depend on: each stack's outputs (the next
 * run of the same stack reads its own last outputs back, a shard stack reads its management
 * stack's, and the runbook's scripts read them with `pulumi stack output`), and the outputs of the
 * components that the policy pack's stack rules read (components/policy-facts.ts says why those
 * are outputs). Renaming one breaks every deployed stack's next run.
 *
 * This file imports nothing, so plain Node.js (type stripping) can import it from the `.mjs`
 * scripts as well.
 */
export const stackOutputs = {
  managementApiEndpoint: "managementApiEndpoint",
  /** Secret. Read by `npm run backup` and the e2e run. */
  managementKubeconfig: "managementKubeconfig",
  managementServers: "managementServers",
  managementNetworkId: "managementNetworkId",
  managementAdminCertificateNotAfter: "managementAdminCertificateNotAfter",
  /** The k3s drop-in that configures etcd snapshots; read back to detect drift, and by scripts/management-server.mjs. */
  managementEtcdSnapshotConfig: "managementEtcdSnapshotConfig",
  /** Where the snapshots go; read by scripts/management-server.mjs. */
  managementEtcdSnapshotStore: "managementEtcdSnapshotStore",
  /** The k3s release the servers' Plan was set to by the last successful update (the next run's "what runs"). */
  managementK3sVersion: "managementK3sVersion",
  /** Server → server type, for the server-type change check. */
  managementServerTypes: "managementServerTypes",
  carenExtensionNames: "carenExtensionNames",
  /** Tenant name → the Kubernetes version its Cluster runs. */
  tenantVersions: "tenantVersions",
  /** Tenant name → the settings fixed at creation. */
  tenantImmutables: "tenantImmutables",
  /** Secret. Tenant name → its workload cluster's admin kubeconfig. */
  tenantKubeconfigs: "tenantKubeconfigs",
  /** A management stack with shards: what its shard stacks read (mirrors, protection, declared facts …). */
  fleetPlatform: "fleetPlatform",
  /** A management stack with shards: every tenant of the fleet, by stack. */
  fleetTenants: "fleetTenants",
  /** A shard stack: the management stack it belongs to. */
  managementStack: "managementStack",
} as const;

/**
 * Outputs of components that the policy pack's stack rules read. DeployedState publishes what
 * runs under the stack's own names, {@link stackOutputs}.tenantVersions and
 * {@link stackOutputs}.managementK3sVersion.
 */
export const componentOutputs = {
  /** Every fleet component that declares children to the pack: what it declared for them. */
  declared: "declared",
  /** DeployedState and ManagementReference: the other stacks' tenant versions (tenant → version). */
  peerTenantVersions: "peerTenantVersions",
  /** ManagementReference: the management stack's declared facts, as a shard imported them. */
  imported: "imported",
  /** K3sUpgrades: the k3s release the servers' Plan asks for (`management.k3sVersion`). */
  k3sTarget: "k3sVersion",
} as const;
