import * as hcloud from "@pulumi/hcloud";
import * as pulumi from "@pulumi/pulumi";
import { Caren } from "../components/caren";
import { ClusterApi } from "../components/cluster-api";
import { DeployedState } from "../components/deployed-state";
import { DestroyGuard } from "../components/destroy-guard";
import { Flux } from "../components/flux";
import { HcloudCloudControllerManager } from "../components/hcloud-ccm";
import type { ReleaseRecovery } from "../components/helm-release";
import { HetznerClusterClass } from "../components/hetzner-cluster-class";
import { K3sUpgrades } from "../components/k3s-upgrades";
import { ManagementCluster } from "../components/management-cluster";
import { TenantCluster } from "../components/tenant-cluster";
import type { FleetConfig } from "./model/stack/validate-fleet-config";
import type { Tenant } from "./model/tenant/validate-tenants";
import { apiVersions } from "./model/platform/cluster-api-kinds";
import type { FleetPlatform } from "./model/config/shards";
import type { Mirrors } from "./model/platform/mirrors";
import { tenantSshKeyWarning } from "./model/tenant/tenant-firewall";
import { tenantImmutablesOutput, type TenantImmutables } from "./model/tenant/tenant-immutables";
import { tenantVersionsOutput, type TenantUpgrade, type TenantVersionsOutput } from "./model/versions/tenant-upgrades";
import { networkZoneOf } from "./model/facts/hetzner";

/** The platform components, for callers (and tests) that attach more to them. */
export interface Platform {
  cloudControllerManager: HcloudCloudControllerManager | undefined;
  clusterApi: ClusterApi;
  caren: Caren;
  flux: Flux;
}

/** What the stack exports, plus the components for callers (and tests) that need them. */
export interface FleetOutputs {
  managementCluster: ManagementCluster;
  platform: Platform;
  managementApiEndpoint: pulumi.Output<string>;
  managementKubeconfig: pulumi.Output<string>;
  managementServers: pulumi.Output<{ name: string; publicIpv4: string; privateIp: string }[]>;
  managementNetworkId: pulumi.Output<string | undefined>;
  managementAdminCertificateNotAfter: pulumi.Output<string | undefined>;
  /** The k3s config drop-in with the etcd snapshot settings (hetzner mode), for servers created before it changed. */
  managementEtcdSnapshotConfig: pulumi.Output<string | undefined>;
  /** Where the etcd snapshots go (no keys), for a restore; undefined without backups. */
  managementEtcdSnapshotStore: pulumi.Output<Record<string, string> | undefined>;
  /** Handler names a ClusterClass must reference for the installed CAREN release. */
  carenExtensionNames: pulumi.Output<{ clusterConfigVariables: string; clusterPatches: string; workerPatches: string }>;
  /** The fleet's ClusterClass. */
  clusterClass: HetznerClusterClass;
  /** One component per tenant, by tenant name, in config order. */
  tenants: ReadonlyMap<string, TenantCluster>;
  /** Per tenant: deployed version, target, control-plane steps, worker steps. */
  tenantVersions: pulumi.Output<TenantVersionsOutput>;
  /** Per tenant: the workload cluster's admin kubeconfig (secret). */
  tenantKubeconfigs: pulumi.Output<Record<string, string>>;
  /** Per tenant: the settings that cannot change once its cluster exists; the next run refuses changes to them. */
  tenantImmutables: pulumi.Output<Record<string, TenantImmutables>>;
  /** `hetzner` mode: the k3s release the servers' Plan is set to (the next run reads it back as what runs). */
  managementK3sVersion: pulumi.Output<string | undefined>;
  /** `hetzner` mode: the system-upgrade-controller and the servers' Plan. */
  k3sUpgrades: K3sUpgrades | undefined;
  /** What shard stacks read from this stack (infra/shard.ts): settings their tenants share and the platform's declared facts. */
  fleetPlatform: pulumi.Output<FleetPlatform>;
}

/**
 * Wires the fleet's components from a validated config, in dependency order:
 * ManagementCluster → hcloud CCM (hetzner mode) → ClusterApi → Caren → Flux, then the
 * ClusterClass and the tenants. `upgrades` are the tenants' plans from what runs
 * (deployed-state.ts); they become the `tenantVersions` output; `deployedK3sVersion` is the
 * management servers' k3s release from the last update, published for the policy pack. Everything
 * in the cluster goes through the management cluster's one Kubernetes provider, so CRDs
 * (from charts) and their custom resources share its CRD cache.
 */
export function createFleet(
  config: FleetConfig,
  fleetName: string,
  upgrades: readonly TenantUpgrade[],
  deployedK3sVersion?: string,
  /** A management stack with shards: the shards' tenant versions, for the pack's fleet-wide rules. */
  peerTenantVersions?: Record<string, string>,
  /** The engine runs resource hooks (resourceHooksAvailable): the Helm releases get the hooks that clear an interrupted `up`. */
  resourceHooks = false,
): FleetOutputs {
  const management = config.management;
  const hcloudProvider =
    management.mode === "hetzner"
      ? new hcloud.Provider("management-hcloud", { token: pulumi.secret(management.hcloudToken.reveal()) })
      : undefined;
  const cluster = new ManagementCluster("management", {
    fleetName,
    settings: stripSecrets(management),
    hcloudProvider,
    etcdS3Credentials:
      management.mode === "hetzner" && management.etcdS3Credentials
        ? pulumi.secret({
            accessKey: management.etcdS3Credentials.accessKey.reveal(),
            secretKey: management.etcdS3Credentials.secretKey.reveal(),
          })
        : undefined,
    existingCluster:
      management.mode === "existing"
        ? { kubeconfig: pulumi.secret(management.kubeconfig.reveal()), apiServerUrl: management.apiServerUrl }
        : undefined,
  });
  const releaseRecovery = resourceHooks ? { kubeconfig: cluster.kubeconfig } : undefined;
  const platform = createPlatform(config, cluster, releaseRecovery);
  // After the platform: SUC's pods need the CCM to initialise the nodes, and on a new cluster its
  // first pass (every server already at the version: cordon, drain, nothing to replace) must not
  // drain the servers under the platform's Helm releases while they install.
  const k3sUpgrades =
    management.mode === "hetzner"
      ? new K3sUpgrades(
          "management-k3s-upgrades",
          { k3sVersion: management.k3sVersion, managementKubeconfig: cluster.kubeconfig },
          { providers: [cluster.provider], dependsOn: [platform.flux] },
        )
      : undefined;
  const names = platform.caren.extensionNames;
  const clusterClass = new HetznerClusterClass(
    "hetzner-cluster-class",
    { carenExtensionNames: names },
    { providers: [cluster.provider], dependsOn: [platform.caren] },
  );
  const adminCidrs = management.mode === "hetzner" ? management.adminCidrs : [];
  const tenants = createTenants(config.tenants, {
    provider: cluster.provider,
    managementKubeconfig: cluster.kubeconfig,
    clusterClass: clusterClass.clusterClass,
    carenReady: platform.caren.ready,
    fluxInstance: platform.flux.instance,
    dependsOn: [clusterClass],
    deletionProtection: management.deletionProtection,
    adminCidrs,
    mirrors: config.mirrors,
    releaseRecovery,
  });
  // Runs first on `pulumi destroy`: it depends on everything in the cluster.
  new DestroyGuard(
    "destroy-guard",
    { managementKubeconfig: cluster.kubeconfig, classRef: clusterClass.classRef, declaredClusters: config.tenants.map((tenant) => `${tenant.namespace}/${tenant.name}`) },
    { dependsOn: [platform.clusterApi, platform.caren, platform.flux, clusterClass, ...tenants.values(), ...(k3sUpgrades ? [k3sUpgrades] : [])] },
  );
  new DeployedState("deployed-tenant-versions", { upgrades, managementK3sVersion: deployedK3sVersion, ...(peerTenantVersions ? { peerTenantVersions } : {}) });
  const kubeconfigs = Object.fromEntries([...tenants].map(([name, tenant]) => [name, tenant.kubeconfig]));
  return {
    managementCluster: cluster,
    platform,
    managementApiEndpoint: cluster.apiEndpoint,
    managementKubeconfig: cluster.kubeconfig,
    managementServers: cluster.serverAddresses,
    managementNetworkId: cluster.networkId,
    managementAdminCertificateNotAfter: cluster.adminCertificateNotAfter,
    managementEtcdSnapshotConfig: cluster.etcdSnapshotConfig,
    managementEtcdSnapshotStore: cluster.etcdSnapshotStore,
    carenExtensionNames: pulumi.output({
      clusterConfigVariables: names.clusterConfigVariables("generic"),
      clusterPatches: names.clusterPatches("generic"),
      workerPatches: names.workerPatches("generic"),
    }),
    clusterClass,
    tenants,
    tenantVersions: pulumi.output(tenantVersionsOutput(upgrades)),
    tenantKubeconfigs: pulumi.secret(pulumi.all(kubeconfigs)),
    tenantImmutables: pulumi.output(tenantImmutablesOutput(config.tenants)),
    managementK3sVersion: pulumi.output(management.mode === "hetzner" ? management.k3sVersion : undefined),
    k3sUpgrades,
    fleetPlatform: pulumi.all([platform.clusterApi.declared, platform.caren.declared, clusterClass.declared]).apply(([clusterApi, caren, classes]) => ({
      fleetName,
      deletionProtection: management.deletionProtection,
      adminCidrs: [...adminCidrs],
      gitops: config.gitops !== undefined,
      declared: [...clusterApi, ...caren, ...classes],
      mirrors: config.mirrors,
    })),
  };
}

/** What a tenant is built on: the management cluster's provider and kubeconfig, the class, CAREN's gate and Flux. */
export interface TenantContext {
  provider: pulumi.ProviderResource;
  managementKubeconfig: pulumi.Input<string>;
  clusterClass: pulumi.Resource;
  carenReady: pulumi.Resource;
  fluxInstance: pulumi.Resource | undefined;
  /** What the tenant component waits for (the class; in a shard stack, its ManagementReference). */
  dependsOn: pulumi.Resource[];
  deletionProtection: boolean;
  adminCidrs: readonly string[];
  /** Where the tenants' add-on charts come from (`mirrors`; in a shard stack, the management stack's). */
  mirrors: Mirrors;
  /** How the tenants' Helm releases are cleared after an interrupted `up` (absent: no resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/** One tenant cluster, after the class and CAREN (and Flux, for its apps). */
/** Every tenant of a stack by name, each after its warning when it has no SSH key. */
export function createTenants(tenants: readonly Tenant[], context: TenantContext): Map<string, TenantCluster> {
  return new Map(
    tenants.map((tenant, index) => {
      const warning = tenantSshKeyWarning(tenant, index);
      if (warning) void pulumi.log.warn(warning);
      return [tenant.name, createTenant(tenant, context)];
    }),
  );
}

export function createTenant(tenant: Tenant, context: TenantContext): TenantCluster {
  const { hcloudToken, registryCredentials, ...settings } = tenant;
  return new TenantCluster(
    `tenant-${tenant.name}`,
    {
      tenant: settings,
      hcloudToken: pulumi.secret(hcloudToken.reveal()),
      registryCredentials: Object.fromEntries(
        [...registryCredentials].map(([name, { username, password, caCrt }]) => [
          name,
          { username: pulumi.secret(username.reveal()), password: pulumi.secret(password.reveal()), ...(caCrt ? { caCrt: pulumi.secret(caCrt.reveal()) } : {}) },
        ]),
      ),
      clusterClass: context.clusterClass,
      carenReady: context.carenReady,
      managementKubeconfig: context.managementKubeconfig,
      // SSH on the tenant's servers: the management cluster's admin networks (none in existing mode).
      adminCidrs: context.adminCidrs,
      ...(context.fluxInstance ? { fluxInstance: context.fluxInstance } : {}),
      ...(Object.keys(context.mirrors).length > 0 ? { mirrors: context.mirrors } : {}),
      ...(context.releaseRecovery ? { releaseRecovery: context.releaseRecovery } : {}),
    },
    // Protected tenants (inherited by every child): removing or renaming one fails at its
    // first delete, before the load-balancer drain or anything else of it runs.
    { providers: [context.provider], dependsOn: context.dependsOn, protect: context.deletionProtection },
  );
}

/** The management platform, each step waiting for the one before it. */
function createPlatform(config: FleetConfig, cluster: ManagementCluster, releaseRecovery: ReleaseRecovery | undefined): Platform {
  const onCluster = { providers: [cluster.provider] };
  const management = config.management;
  const cloudControllerManager =
    management.mode === "hetzner"
      ? new HcloudCloudControllerManager(
          "management-hcloud-ccm",
          {
            hcloudToken: pulumi.secret(management.hcloudToken.reveal()),
            networkId: cluster.networkId.apply((id) => id ?? ""),
            networkZone: networkZoneOf[management.location],
            mirrors: config.mirrors,
            releaseRecovery,
          },
          { ...onCluster, dependsOn: [cluster] },
        )
      : undefined;
  const clusterApi = new ClusterApi(
    "cluster-api",
    {
      githubToken: config.githubToken ? pulumi.secret(config.githubToken.reveal()) : undefined,
      mirrors: config.mirrors,
      installCertManager: management.mode === "hetzner" || management.certManager === "install",
      managementKubeconfig: cluster.kubeconfig,
      releaseRecovery,
    },
    { ...onCluster, dependsOn: [cluster, ...(cloudControllerManager ? [cloudControllerManager] : [])] },
  );
  const caren = new Caren("caren", { mirrors: config.mirrors, releaseRecovery }, { ...onCluster, dependsOn: [clusterApi] });
  const flux = new Flux(
    "flux",
    {
      gitops: config.gitops,
      carenExtensionConfigName: caren.extensionNames.extensionConfig,
      carenExtensionConfigApiVersion: apiVersions.extensionConfig,
      deletionProtection: management.deletionProtection,
      mirrors: config.mirrors,
      releaseRecovery,
    },
    { ...onCluster, dependsOn: [caren] },
  );
  return { cloudControllerManager, clusterApi, caren, flux };
}

/** Component args become resource inputs (visible to policies), so secrets never go in as settings. */
function stripSecrets(management: FleetConfig["management"]) {
  if (management.mode === "hetzner") {
    const { hcloudToken: _token, etcdS3Credentials: _etcdS3, ...settings } = management;
    return settings;
  }
  const { kubeconfig: _kubeconfig, apiServerUrl: _url, ...settings } = management;
  return settings;
}
