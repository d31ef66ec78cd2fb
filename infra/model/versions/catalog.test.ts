import semver from "semver";
import { describe, expect, it } from "vitest";
import { catalog } from "./catalog";
import { isMinorInRange, parseKubernetesVersion } from "./kubernetes-version";

/** "v1.13" → "1.13.0"-style comparable minimum/maximum of a minor range. */
const minorFloor = (minor: string) => semver.coerce(minor)!.version;

describe("the catalog is one coherent set", () => {
  const capi = catalog.clusterApi.version;

  it("pins CAPI inside CAPH's supported CAPI minors", () => {
    expect(semver.gte(capi, minorFloor(catalog.caph.clusterApi.min))).toBe(true);
    expect(semver.lt(capi, semver.inc(minorFloor(catalog.caph.clusterApi.max), "minor")!)).toBe(true);
  });

  it("pins CAPI before it stops serving CAPH's v1beta1 contract", () => {
    expect(catalog.clusterApi.servedContracts).toContain(catalog.caph.contract);
    expect(semver.lt(capi, catalog.clusterApi.v1beta1RemovedIn)).toBe(true);
  });

  it("pins CAPI at or above what CAREN needs, with chained upgrades", () => {
    expect(semver.gte(capi, catalog.caren.minimumClusterApi)).toBe(true);
    expect(semver.gte(capi, catalog.clusterApi.chainedUpgradesSince)).toBe(true);
  });

  it("pins CAPI high enough for every tenant patch under the kubelet-api-admin rule", () => {
    const capiMinor = `${semver.major(capi)}.${semver.minor(capi)}`;
    for (const text of catalog.tenantKubernetesVersions) {
      const version = parseKubernetesVersion(text)!;
      const lastPatchWithout = catalog.kubeletApiAdminRule.lastPatchWithout[`${version.major}.${version.minor}`];
      if (lastPatchWithout !== undefined && version.patch > lastPatchWithout) {
        expect(semver.gte(capi, catalog.kubeletApiAdminRule.minimumClusterApi[capiMinor] ?? "v99.0.0"), text).toBe(true);
      }
    }
  });

  it("offers tenants only versions every tenant add-on and provider supports", () => {
    const ranges = {
      "CAPI workload": catalog.clusterApi.workloadKubernetes,
      CAPH: catalog.caph.workloadKubernetes,
      Cilium: catalog.cilium.kubernetes,
      "hcloud CCM": catalog.hcloudCloudControllerManager.kubernetes,
      "hcloud CSI": catalog.hcloudCsi.kubernetes,
    };
    const outside = catalog.tenantKubernetesVersions.flatMap((version) =>
      Object.entries(ranges)
        .filter(([, range]) => !isMinorInRange(parseKubernetesVersion(version)!, range))
        .map(([name]) => `${version} outside ${name}`),
    );
    expect(outside).toEqual([]);
    expect(isMinorInRange(parseKubernetesVersion("v1.36.1")!, catalog.cilium.kubernetes)).toBe(false);
  });

  it("pins an hcloud CCM that survives Hetzner's 2026 API change", () => {
    expect(semver.gte(catalog.hcloudCloudControllerManager.chart.version, catalog.hcloudCloudControllerManager.minimumVersion)).toBe(true);
  });

  it("writes chart versions the way each repository publishes them", () => {
    expect(catalog.caren.chart.version).toMatch(/^v/); // CAREN's Helm repository keeps the v
    expect(catalog.certManager.chart.version).toMatch(/^v/);
    for (const pin of [catalog.clusterApiOperator.chart, catalog.flux.operatorChart, catalog.hcloudCloudControllerManager.chart, catalog.hcloudCsi.chart]) {
      expect(pin.version, pin.chart).toMatch(/^\d/);
    }
    expect(catalog.flux.operatorChart.repository).toMatch(/^oci:\/\//);
  });

  it("lists the CAREN patch generations without overlaps", () => {
    const rows = catalog.caren.patchGenerations;
    for (const a of rows) {
      for (const b of rows) {
        if (a !== b) {
          expect(semver.intersects(a.releases, b.releases), `${a.releases} / ${b.releases}`).toBe(false);
        }
      }
      expect(a.previous).toBe(a.current - 1);
    }
  });
});
