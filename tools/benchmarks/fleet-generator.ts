// Synthetic fleets for `npm run bench`: the prod stack's config with its tenants replaced by
// N generated ones, so the benchmark runs the real program and the real validation.
import { catalog } from "../../infra/model/versions/catalog";
import { tenantsPerStack } from "../../infra/model/config/shards";
import { configKeys } from "../../infra/model/config/stack-config";
import { HetznerLocation } from "../../infra/model/facts/hetzner";

/** A stack's config as the Pulumi runtime hands it to the program (tests/support/stack-files.ts's shape). */
export interface GeneratedRuntimeConfig {
  values: Record<string, string>;
  secretKeys: string[];
}

/** One tenant entry of `capi-fleet:tenants`, as written in a stack file. */
export interface GeneratedTenant {
  name: string;
  kubernetesVersion: string;
  regions: HetznerLocation[];
  controlPlane: { replicas: 1 | 3 | 5; machineType: string };
  workers: { name: string; replicas: number; machineType: string; failureDomain: HetznerLocation }[];
  network: { nodesCidr: string; podsCidr: string; servicesCidr: string; routingDomain: string };
  cni: { provider: "cilium"; strategy: "HelmAddon" | "ClusterResourceSet"; kubeProxyReplacement: boolean };
}

/** Tenants per routing domain: they must not overlap inside one, and may reuse ranges across domains. */
export const tenantsPerRoutingDomain = 8;

// All in network zone eu-central, so any pair is a valid multi-region tenant.
const regionSets: readonly HetznerLocation[][] = [["fsn1", "nbg1"], ["hel1"], ["nbg1", "hel1"], ["fsn1"]];
const controlPlaneReplicas = [3, 1, 5] as const;
const machineTypes = ["cx23", "cx33", "cpx31", "cax31"] as const;

/** A fleet-unique, DNS-label tenant name. */
export function tenantName(index: number): string {
  return `tenant-${String(index).padStart(4, "0")}`;
}

/**
 * The i-th generated tenant: two worker pools (one per region, or both in the only one),
 * versions spread over the catalog, and ranges disjoint within its routing domain.
 */
export function generatedTenant(index: number): GeneratedTenant {
  const versions = catalog.tenantKubernetesVersions;
  const regions = regionSets[index % regionSets.length] ?? ["fsn1"];
  const first = regions[0] ?? "fsn1";
  const last = regions[regions.length - 1] ?? first;
  const slot = index % tenantsPerRoutingDomain;
  const machineType = (offset: number): string => machineTypes[(index + offset) % machineTypes.length] ?? "cx23";
  return {
    name: tenantName(index),
    kubernetesVersion: versions[index % versions.length] ?? versions[0],
    regions,
    controlPlane: { replicas: controlPlaneReplicas[index % controlPlaneReplicas.length] ?? 3, machineType: machineType(0) },
    workers: [
      { name: "md-0", replicas: 2 + (index % 3), machineType: machineType(1), failureDomain: first },
      { name: "md-1", replicas: 1 + (index % 4), machineType: machineType(2), failureDomain: last },
    ],
    // 10.0.0.0/16 is the prod management network; tenant pods and services must stay out of it.
    network: {
      nodesCidr: `10.${10 + slot}.0.0/16`,
      podsCidr: `10.${64 + slot}.0.0/16`,
      servicesCidr: `10.${96 + slot}.0.0/16`,
      routingDomain: `domain-${Math.floor(index / tenantsPerRoutingDomain)}`,
    },
    // Kube-proxy replacement only with HelmAddon: CAREN's ClusterResourceSet Cilium cannot replace it (validation refuses it).
    cni: { provider: "cilium", strategy: index % 5 === 4 ? "ClusterResourceSet" : "HelmAddon", kubeProxyReplacement: index % 2 === 0 && index % 5 !== 4 },
  };
}

/** N generated tenants. */
export function generatedTenants(count: number): GeneratedTenant[] {
  return Array.from({ length: count }, (_, index) => generatedTenant(index));
}

/**
 * `base` (a committed stack's runtime config) with `capi-fleet:tenants` replaced by N
 * generated tenants and `capi-fleet:tenantHcloudTokens` by one token each (`token(leafPath)`),
 * the key kept secret; the committed tenants' registry credentials are dropped. Everything else
 * (management, gitops, hcloud:token) stays as committed.
 */
export function generatedStackConfig(
  base: GeneratedRuntimeConfig,
  count: number,
  token: (leafPath: string) => string,
): GeneratedRuntimeConfig {
  const tenants = generatedTenants(count);
  const tokens = Object.fromEntries(tenants.map((tenant) => [tenant.name, token(`${configKeys.tenantHcloudTokens}.${tenant.name}`)]));
  // Registry credentials belong to the committed tenants (generated ones use no private registry).
  const { [configKeys.tenantRegistryCredentials]: _credentials, ...kept } = base.values;
  const values = {
    ...kept,
    [configKeys.tenants]: JSON.stringify(tenants),
    [configKeys.tenantHcloudTokens]: JSON.stringify(tokens),
    // Parts 1–2 register fleets of any size under the mocks, where no plugin runs; a preview of
    // that many in one stack is what the validation refuses (docs/performance.md, Scale).
    ...(count > tenantsPerStack.recommended ? { [configKeys.tenantsPerStack]: String(count) } : {}),
  };
  const secretKeys = [...new Set([...base.secretKeys.filter((key) => key !== configKeys.tenantRegistryCredentials), configKeys.tenantHcloudTokens])];
  return { values, secretKeys };
}

/**
 * What the last update deployed, for a realistic mix: each odd-numbered tenant whose target is
 * not the catalog's oldest version runs the previous catalog version (about a third of the
 * fleet), so the program plans one-minor upgrades; the rest plan as new clusters.
 */
export function generatedDeployedVersions(count: number): Record<string, string> {
  const versions: readonly string[] = catalog.tenantKubernetesVersions;
  const deployed: Record<string, string> = {};
  generatedTenants(count).forEach((tenant, index) => {
    const previous = versions[versions.indexOf(tenant.kubernetesVersion) - 1];
    if (index % 2 === 1 && previous !== undefined) {
      deployed[tenant.name] = previous;
    }
  });
  return deployed;
}
