import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { catalog } from "../versions/catalog";
import { carenCiliumVersionPatch, carenDiscoveredPatch, carenNamespace, carenRelease, carenValues, defaultDiscoveryTimeoutSeconds } from "./caren";
import { carenExtensionNames } from "./caren-extensions";
import { carenCiliumAddonKey, carenHelmAddonsConfigMap } from "./caren-helm-addons";
import { apiVersions } from "./cluster-api-kinds";
import { platformNamespaces } from "./platform-namespaces";

// CAREN's release and patches as plain data. The patch against a real API server over a
// ConfigMap as Helm creates it: infra/caren-cilium-version.test.ts; the release under CAPI's real
// controllers: tests/in-the-loop/caren-in-the-loop.test.ts.

const mirrors = { charts: "https://charts.mirror.example", images: "mirror.example/images" };

describe("CAREN's release", () => {
  it("is the catalog's chart with the fleet's values, in CAREN's namespace", () => {
    expect(carenRelease()).toEqual({ pin: catalog.caren.chart, values: carenValues });
    expect(carenNamespace).toBe(platformNamespaces.caren);
  });

  it("deploys none of CAREN's own ClusterClasses and no in-cluster chart mirror, and keeps the chart's names", () => {
    expect(carenValues).toEqual({ deployDefaultClusterClasses: false, helmRepository: { enabled: false } });
    expect(carenValues).not.toHaveProperty("nameOverride");
  });

  it("comes from the mirrors when the stack names them: the chart's repository and the image", () => {
    const { pin, values } = carenRelease(mirrors);
    expect(pin).toEqual({ ...catalog.caren.chart, repository: mirrors.charts });
    expect(values).toMatchObject(carenValues);
    const repository = (values as { image: { repository: string } }).image.repository;
    expect(repository.startsWith(`${mirrors.images}/`)).toBe(true);
    expect(catalog.caren.image.endsWith(repository.slice(mirrors.images.length))).toBe(true);
    expect(carenRelease({ charts: mirrors.charts }).values).toBe(carenValues);
  });
});

describe("the Cilium patch of CAREN's helm-addons ConfigMap", () => {
  const annotation = (patch: ReturnType<typeof carenCiliumVersionPatch>) => patch.metadata.annotations["capi-fleet.io/caren-release"];

  it("sets only the fleet's Cilium entry, forcing past Helm's field manager", () => {
    const patch = carenCiliumVersionPatch();
    expect(patch.metadata).toMatchObject({ name: carenHelmAddonsConfigMap, namespace: carenNamespace });
    expect(patch.metadata.annotations["pulumi.com/patchForce"]).toBe("true");
    expect(Object.keys(patch.data)).toEqual([carenCiliumAddonKey]);
    expect(parse(patch.data[carenCiliumAddonKey])).toEqual({ ChartName: catalog.cilium.chart, ChartVersion: catalog.cilium.version, RepositoryURL: catalog.cilium.repository });
  });

  it("points CAREN at the chart mirror for Cilium too", () => {
    const entry = parse(carenCiliumVersionPatch(carenRelease(mirrors), mirrors).data[carenCiliumAddonKey]) as Record<string, string>;
    expect(entry).toEqual({ ChartName: catalog.cilium.chart, ChartVersion: catalog.cilium.version, RepositoryURL: mirrors.charts });
  });

  it("carries a digest of CAREN's release, so any change of the release re-applies it", () => {
    const release = carenRelease();
    expect(annotation(carenCiliumVersionPatch())).toBe(annotation(carenCiliumVersionPatch(release)));
    expect(annotation(carenCiliumVersionPatch())).toMatch(/^[0-9a-f]{16}$/);
    const changed = [
      carenCiliumVersionPatch({ ...release, pin: { ...release.pin, version: "v0.0.1" } }),
      carenCiliumVersionPatch({ ...release, values: { ...release.values, deployDefaultClusterClasses: true } }),
      carenCiliumVersionPatch(carenRelease(mirrors)),
    ].map(annotation);
    expect(new Set([annotation(carenCiliumVersionPatch()), ...changed]).size).toBe(4);
  });
});

describe("the wait for CAPI's discovery of CAREN's handlers", () => {
  it("patches the chart's ExtensionConfig with Pulumi's wait for `Discovered`", () => {
    const name = carenExtensionNames().extensionConfig;
    const patch = carenDiscoveredPatch(name);
    expect(patch).toMatchObject({ apiVersion: apiVersions.extensionConfig, kind: "ExtensionConfig", metadata: { name } });
    expect(patch.metadata.annotations["pulumi.com/waitFor"]).toBe("condition=Discovered");
    expect(patch.metadata.annotations["pulumi.com/timeoutSeconds"]).toBe(String(defaultDiscoveryTimeoutSeconds));
    expect(defaultDiscoveryTimeoutSeconds).toBe(600);
    expect(carenDiscoveredPatch(name, 30).metadata.annotations["pulumi.com/timeoutSeconds"]).toBe("30");
    // Only the annotation: the chart owns the rest of the object.
    expect(Object.keys(patch)).toEqual(["apiVersion", "kind", "metadata"]);
  });
});
