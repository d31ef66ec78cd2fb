import { describe, expect, it } from "vitest";
import { byType, runStack, useExistingCluster } from "../tests/support/fleet-run";
import type { Registration } from "../tests/support/pulumi-mocks";
import { configKeys } from "./model/config/stack-config";
import { clusterApiProviders } from "./model/platform/cluster-api-providers";
import { mirroredImage, providerArtifact } from "./model/platform/mirrors";
import { catalog, type HelmChartPin } from "./model/versions/catalog";

// The program with `mirrors` set: every chart and every provider comes from the mirror, nothing
// from a public source; and without it, everything comes from where it always did.

const releaseType = "kubernetes:helm.sh/v3:Release";
const proxyType = "kubernetes:addons.cluster.x-k8s.io/v1alpha1:HelmChartProxy";
const ciliumPatchType = "kubernetes:core/v1:ConfigMapPatch";
const providerKinds = new Set(clusterApiProviders.map((provider) => `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${provider.kind}`));

/** Every chart pin in the catalog (each a public source). */
const publicCharts: HelmChartPin[] = [
  catalog.certManager.chart,
  catalog.clusterApiOperator.chart,
  catalog.caren.chart,
  catalog.hcloudCloudControllerManager.chart,
  catalog.hcloudCsi.chart,
  catalog.clusterAutoscaler.chart,
  catalog.flux.operatorChart,
  catalog.cilium,
];

const withMirrors = (mirrors: Record<string, string>) => (values: Record<string, string>) => {
  values[configKeys.mirrors] = JSON.stringify(mirrors);
};

/** The version the catalog pins for a chart name. */
const pinnedVersion = (chart: string) => publicCharts.find((pin) => pin.chart === chart)!.version;

function ciliumEntry(registrations: readonly Registration[]): string {
  const patch = byType(registrations, ciliumPatchType).find((r) => (r.inputs.data as Record<string, string> | undefined)?.cilium);
  return (patch!.inputs.data as Record<string, string>).cilium!;
}

describe("mirrors", () => {
  it("prod from an OCI charts mirror and a providers mirror: every chart and provider from the mirror, no public source in any input", async () => {
    const charts = "oci://registry.example.com/charts";
    const providers = "registry.example.com/capi-providers";
    const { registrations } = await runStack("prod", withMirrors({ charts, providers }));
    const releases = byType(registrations, releaseType);
    // The platform's five charts (hcloud CCM, cert-manager, the operator, CAREN, the Flux Operator) and the autoscaled tenant's cluster autoscaler.
    expect(releases.map((r) => r.inputs.name).sort()).toEqual(["cert-manager", "cluster-api-operator", "cluster-api-runtime-extensions-nutanix", "cluster-autoscaler", "flux-operator", "hcloud-cloud-controller-manager"]);
    for (const release of releases) {
      const chart = release.inputs.name as string;
      expect(release.inputs, release.name).toMatchObject({ chart: `${charts}/${chart}`, version: pinnedVersion(chart) });
      expect(release.inputs.repositoryOpts, release.name).toBeUndefined();
    }
    const proxies = byType(registrations, proxyType);
    expect(proxies.length).toBeGreaterThan(0);
    for (const proxy of proxies) {
      const spec = proxy.inputs.spec as { repoURL: string; chartName: string; version: string };
      expect(spec.repoURL, proxy.name).toBe(charts);
      expect(spec.version, proxy.name).toBe(pinnedVersion(spec.chartName));
    }
    expect(ciliumEntry(registrations)).toContain(`RepositoryURL: ${charts}`);
    const providerResources = registrations.filter((r) => providerKinds.has(r.type));
    expect(providerResources).toHaveLength(clusterApiProviders.length);
    for (const provider of clusterApiProviders) {
      const resource = providerResources.find((r) => r.type.endsWith(`:${provider.kind}`))!;
      expect((resource.inputs.spec as Record<string, unknown>).fetchConfig).toEqual({ oci: providerArtifact(provider, providers) });
    }
    const everything = JSON.stringify(registrations.map((r) => r.inputs));
    for (const pin of publicCharts) expect(everything, pin.repository).not.toContain(pin.repository);
  });

  it("an https:// charts mirror is a Helm repository: each release names its chart and the mirror as its repository", async () => {
    const charts = "https://charts.example.com/mirror";
    const { registrations } = await runStack("dev", useExistingCluster(catalog.tenantKubernetesVersions[1]));
    const { registrations: mirrored } = await runStack("dev", (values, secretKeys) => {
      useExistingCluster(catalog.tenantKubernetesVersions[1])(values, secretKeys);
      withMirrors({ charts })(values);
    });
    const releases = byType(mirrored, releaseType);
    expect(releases.map((r) => r.name).sort()).toEqual(byType(registrations, releaseType).map((r) => r.name).sort());
    for (const release of releases) {
      expect(release.inputs.chart, release.name).toBe(release.inputs.name);
      expect(release.inputs.repositoryOpts, release.name).toEqual({ repo: charts });
    }
    // Only the charts move: the providers still come from GitHub.
    for (const provider of mirrored.filter((r) => providerKinds.has(r.type))) expect((provider.inputs.spec as Record<string, unknown>).fetchConfig).toBeUndefined();
  });

  it("prod with an images mirror: the tenants' cluster autoscaler pulls from it too (the real up has no tenants), at its tag", async () => {
    const images = "registry.example.com/mirror";
    const { registrations } = await runStack("prod", withMirrors({ images }));
    const autoscaler = byType(registrations, releaseType).find((r) => r.inputs.name === catalog.clusterAutoscaler.chart.chart)!;
    expect((autoscaler.inputs.values as { image: Record<string, string> }).image).toEqual({ repository: mirroredImage(catalog.clusterAutoscaler.image, { images }), tag: expect.stringMatching(/^v1\.\d+\.\d+$/) });
  });

  it("without an images mirror, no image value or provider deployment is set: a stack that had none sees no change", async () => {
    const { registrations } = await runStack("prod", withMirrors({ charts: "oci://registry.example.com/charts" }));
    for (const release of byType(registrations, releaseType)) {
      const values = (release.inputs.values ?? {}) as { image?: Record<string, unknown>; imageRegistry?: unknown };
      expect(values.imageRegistry, release.name).toBeUndefined();
      expect(Object.keys(values.image ?? {}).filter((key) => key !== "tag"), release.name).toEqual([]);
    }
    for (const provider of registrations.filter((r) => providerKinds.has(r.type))) expect((provider.inputs.spec as Record<string, unknown>).deployment).toBeUndefined();
    const instance = registrations.find((r) => r.type === "kubernetes:fluxcd.controlplane.io/v1:FluxInstance")!;
    expect((instance.inputs.spec as { distribution: { registry: string } }).distribution.registry).toBe(catalog.flux.registry);
  });

  it("without mirrors, every chart comes from its catalog repository and every provider from GitHub", async () => {
    const { registrations } = await runStack("prod");
    const repositories = new Set(publicCharts.map((pin) => pin.repository));
    for (const release of byType(registrations, releaseType)) {
      const repository = (release.inputs.repositoryOpts as { repo?: string } | undefined)?.repo ?? (release.inputs.chart as string).replace(/\/[^/]+$/, "");
      expect(repositories.has(repository), `${release.name}: ${repository}`).toBe(true);
    }
    for (const proxy of byType(registrations, proxyType)) expect(repositories.has((proxy.inputs.spec as { repoURL: string }).repoURL)).toBe(true);
    expect(ciliumEntry(registrations)).toContain(`RepositoryURL: ${catalog.cilium.repository}`);
    for (const provider of registrations.filter((r) => providerKinds.has(r.type))) expect((provider.inputs.spec as Record<string, unknown>).fetchConfig).toBeUndefined();
  });
});
