import { stringify } from "yaml";
import { catalog, type HelmChartPin } from "../versions/catalog";
import { firstSubnet, mustParseCidr } from "../config/cidr";
import { carenClusterSettings, carenCniConfig } from "./caren-cluster-config";
import { poolAutoscalerAnnotations } from "../platform/cluster-autoscaler";
import { isKarpenterPool, poolCapacityAnnotations } from "../platform/karpenter";
import { apiVersions, type Manifest } from "../platform/cluster-api-kinds";
import { type TenantSettings } from "../config/fleet-config";
import { hcloudCcmValues } from "../platform/hcloud-ccm-values";
import { mirroredChart, type Mirrors } from "../platform/mirrors";
import { classVariables, clusterClassName, clusterClassNamespace, workerClassName } from "../platform/hetzner-cluster-class";
import { networkZoneOf } from "../facts/hetzner";
import { carenPreflightSkipAnnotation, loadBalancerGcAnnotation } from "../facts/caren";

/**
 * A tenant's workload cluster as plain manifests: the topology Cluster and the CAAPH
 * HelmChartProxies that put the hcloud CCM and CSI driver into it.
 *
 * Add-on delivery: CAAPH HelmChartProxy, not a Flux HelmRelease. CAAPH is already there
 * (CAREN's HelmAddon strategy installs Cilium through it), it finds the cluster by label and
 * reads the workload kubeconfig itself, and installs as soon as the API answers (nodes stay
 * tainted `uninitialized` until the CCM runs). A Flux HelmRelease would need a
 * HelmRepository and a `kubeConfig.secretRef` per tenant, and would only start once the
 * kubeconfig Secret exists.
 */

/** A tenant as the manifests need it: the validated settings plus its namespace. */
export type TenantClusterSettings = TenantSettings & { readonly namespace: string };

/** Labels on each tenant Cluster; the HelmChartProxies select clusters by them. */
export const tenantLabels = {
  tenant: "capi-fleet.io/tenant",
  hcloudCcm: "capi-fleet.io/hcloud-ccm",
  hcloudCsi: "capi-fleet.io/hcloud-csi",
} as const;

/** Name of the placement group of the control plane. */
export const controlPlanePlacementGroup = "control-plane";
/** Name of a worker pool's placement group. */
export const workerPlacementGroup = (pool: string): string => `workers-${pool}`;

/** The Secret CAPI writes with the workload cluster's admin kubeconfig (key `value`). */
export const workloadKubeconfigSecret = (cluster: string): { name: string; key: string } => ({ name: `${cluster}-kubeconfig`, key: "value" });

/** The tenant's topology Cluster, at its target Kubernetes version (CAPI walks the chain to it). */
export function tenantClusterManifest(tenant: TenantClusterSettings): Manifest {
  const annotations = {
    ...tenant.annotations,
    ...(tenant.loadBalancerGarbageCollection ? {} : { [loadBalancerGcAnnotation]: "false" }),
    ...(tenant.carenPreflight ? { [carenPreflightSkipAnnotation]: tenant.carenPreflight.skip.join(",") } : {}),
  };
  return {
    apiVersion: apiVersions.cluster,
    kind: "Cluster",
    metadata: {
      name: tenant.name,
      namespace: tenant.namespace,
      labels: { [tenantLabels.tenant]: tenant.name, [tenantLabels.hcloudCcm]: "true", [tenantLabels.hcloudCsi]: "true" },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: {
      clusterNetwork: {
        pods: { cidrBlocks: [tenant.network.podsCidr] },
        services: { cidrBlocks: [tenant.network.servicesCidr] },
      },
      topology: {
        classRef: { name: clusterClassName, namespace: clusterClassNamespace },
        version: tenant.kubernetesVersion,
        controlPlane: { replicas: tenant.controlPlane.replicas },
        workers: {
          machineDeployments: tenant.workers.map((pool) => ({
            class: workerClassName,
            name: pool.name,
            // An autoscaled pool has no replicas, and the autoscaler's bounds (cluster-autoscaler.ts)
            // or Karpenter's server size (karpenter.ts); validation keeps replicas out, and
            // autoscaled-pool-replicas-unpinned catches a bypass.
            ...(pool.replicas !== undefined ? { replicas: pool.replicas } : {}),
            ...poolMetadata(pool),
            failureDomain: pool.failureDomain,
            variables: {
              overrides: [
                { name: classVariables.workerMachineType, value: pool.machineType },
                { name: classVariables.workerImage, value: pool.image ?? tenant.image },
                { name: classVariables.workerPlacementGroup, value: pool.placementGroup ? workerPlacementGroup(pool.name) : "" },
              ],
            },
          })),
        },
        variables: tenantTopologyVariables(tenant),
      },
    },
  };
}

/** The annotations of a pool's MachineDeployment topology: an autoscaler's bounds or Karpenter's server size; none for a fixed pool. */
function poolMetadata(pool: TenantClusterSettings["workers"][number]): { metadata?: { annotations: Record<string, string> } } {
  const annotations = isKarpenterPool(pool) ? poolCapacityAnnotations(pool) : poolAutoscalerAnnotations(pool);
  return annotations ? { metadata: { annotations } } : {};
}

/** Values of the ClusterClass variables for one tenant. */
export function tenantTopologyVariables(tenant: TenantClusterSettings): { name: string; value: unknown }[] {
  const [firstRegion] = tenant.regions;
  const [firstPool] = tenant.workers;
  // Stryker disable next-line ConditionalExpression,LogicalOperator,BlockStatement: equivalent, the schema requires a region and a worker pool (min 1), so the guard never fires
  if (!firstRegion || !firstPool) {
    // Stryker disable next-line StringLiteral: equivalent, never thrown (the guard above)
    throw new Error(`tenant ${tenant.name} has no region or no worker pool; the config validation should have refused it`);
  }
  const nodes = mustParseCidr(tenant.network.nodesCidr);
  const placementGroups = [
    ...(tenant.controlPlane.placementGroup ? [controlPlanePlacementGroup] : []),
    ...tenant.workers.filter((pool) => pool.placementGroup).map((pool) => workerPlacementGroup(pool.name)),
  ];
  const clusterConfig = {
    addons: {
      cni: carenCniConfig(tenant),
      // No clusterAutoscaler: CAREN would install it where it cannot scale (the program runs it
      // on the management cluster instead, components/cluster-autoscaler).
      ...(tenant.nfd ? { nfd: { strategy: tenant.nfd.strategy } } : {}),
    },
    ...carenClusterSettings(tenant),
  };
  const names = classVariables;
  return [
    { name: names.clusterConfig, value: clusterConfig },
    { name: names.regions, value: [...tenant.regions] },
    {
      name: names.network,
      value: {
        enabled: true,
        cidrBlock: nodes.text,
        subnetCidrBlock: tenant.network.nodesSubnetCidr ?? firstSubnet(nodes, 24),
        networkZone: tenantNetworkZone(tenant),
      },
    },
    { name: names.placementGroups, value: placementGroups.map((name) => ({ name, type: "spread" })) },
    { name: names.sshKeys, value: tenant.sshKeyName ? [{ name: tenant.sshKeyName }] : [] },
    { name: names.apiLoadBalancerType, value: tenant.apiLoadBalancerType },
    { name: names.controlPlaneMachineType, value: tenant.controlPlane.machineType },
    { name: names.controlPlaneImage, value: tenant.image },
    { name: names.controlPlanePlacementGroup, value: tenant.controlPlane.placementGroup ? controlPlanePlacementGroup : "" },
    // Cluster-wide defaults; every pool overrides them.
    { name: names.workerMachineType, value: firstPool.machineType },
    { name: names.workerImage, value: tenant.image },
  ];
}

/**
 * The hcloud CCM in the workload cluster, with the same values as on the management
 * cluster (hcloud-ccm-values.ts): token and network ID from the `hcloud` Secret CAPH copies
 * into kube-system. Load balancers target the nodes' private IPs and are created in the
 * network zone of the tenant's regions unless a Service's annotation says otherwise.
 */
export function hcloudCcmProxy(tenant: TenantClusterSettings, mirrors: Mirrors = {}): Manifest {
  const values = hcloudCcmValues({ loadBalancerNetworkZone: tenantNetworkZone(tenant), privateLoadBalancerTargets: true });
  return helmChartProxy(tenant, "hcloud-ccm", mirroredChart(catalog.hcloudCloudControllerManager.chart, mirrors), tenantLabels.hcloudCcm, values);
}

/** The network zone of the tenant's regions (validation keeps them in one), where its private network lives. */
export function tenantNetworkZone(tenant: TenantSettings): string {
  const [firstRegion] = tenant.regions;
  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, the schema requires a region (min 1), so the guard never fires
  if (!firstRegion) {
    // Stryker disable next-line StringLiteral: equivalent, never thrown (the guard above)
    throw new Error(`tenant ${tenant.name} has no region; the config validation should have refused it`);
  }
  return networkZoneOf[firstRegion];
}

/** Name of the StorageClass the hcloud CSI driver provides (the cluster default). */
export const hcloudVolumesStorageClass = "hcloud-volumes";

/** The hcloud CSI driver in the workload cluster; its StorageClass uses the tenant's reclaim policy (Delete by default). */
export function hcloudCsiProxy(tenant: TenantClusterSettings, mirrors: Mirrors = {}): Manifest {
  return helmChartProxy(tenant, "hcloud-csi", mirroredChart(catalog.hcloudCsi.chart, mirrors), tenantLabels.hcloudCsi, {
    storageClasses: [{ name: hcloudVolumesStorageClass, defaultStorageClass: true, reclaimPolicy: tenant.storage.reclaimPolicy }],
  });
}

/**
 * A HelmChartProxy for one tenant. The values contain no Go-template expressions; CAAPH
 * still renders `valuesTemplate` as a template, which leaves plain YAML unchanged.
 */
function helmChartProxy(tenant: TenantClusterSettings, name: string, pin: HelmChartPin, label: string, values: Record<string, unknown>): Manifest {
  return {
    apiVersion: apiVersions.helmChartProxy,
    kind: "HelmChartProxy",
    metadata: { name, namespace: tenant.namespace },
    spec: {
      // HelmChartProxies only select Clusters in their own namespace; the tenant label
      // keeps that true even if two tenants ever shared one.
      clusterSelector: { matchLabels: { [tenantLabels.tenant]: tenant.name, [label]: "true" } },
      repoURL: pin.repository,
      chartName: pin.chart,
      version: pin.version,
      releaseName: pin.chart,
      namespace: "kube-system",
      valuesTemplate: stringify(values),
      options: {
        wait: true,
        timeout: "10m",
        // Stryker disable next-line BooleanLiteral,ObjectLiteral: equivalent, kube-system always exists, so Helm's createNamespace (CAAPH's default: true) creates nothing
        install: { createNamespace: false },
      },
    },
  };
}
