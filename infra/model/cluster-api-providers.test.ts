import { describe, expect, it } from "vitest";
import { catalog } from "./catalog";
import { clusterApiProviders, featureGateSecretData } from "./cluster-api-providers";

describe("clusterApiProviders", () => {
  it("lists the core provider first, then kubeadm, Hetzner and Helm", () => {
    expect(clusterApiProviders.map((p) => `${p.kind}/${p.name}`)).toEqual([
      "CoreProvider/cluster-api",
      "BootstrapProvider/kubeadm",
      "ControlPlaneProvider/kubeadm",
      "InfrastructureProvider/hetzner",
      "AddonProvider/helm",
    ]);
  });

  it("takes every version from the catalog", () => {
    const versions = Object.fromEntries(clusterApiProviders.map((p) => [p.kind, p.version]));
    expect(versions).toEqual({
      CoreProvider: catalog.clusterApi.version,
      BootstrapProvider: catalog.clusterApi.version,
      ControlPlaneProvider: catalog.clusterApi.version,
      InfrastructureProvider: catalog.caph.version,
      AddonProvider: catalog.caaph.version,
    });
  });

  it("never repeats a (kind, name) pair or a namespace (the operator refuses duplicates)", () => {
    expect(new Set(clusterApiProviders.map((p) => `${p.kind}/${p.name}`)).size).toBe(clusterApiProviders.length);
    expect(new Set(clusterApiProviders.map((p) => p.namespace)).size).toBe(clusterApiProviders.length);
  });

  it("turns ClusterTopology on in core and KCP, RuntimeSDK only in core", () => {
    const gates = Object.fromEntries(clusterApiProviders.map((p) => [p.kind, p.featureGates]));
    expect(gates.CoreProvider).toEqual(["ClusterTopology", "RuntimeSDK"]);
    expect(gates.ControlPlaneProvider).toEqual(["ClusterTopology"]);
    expect([gates.BootstrapProvider, gates.InfrastructureProvider, gates.AddonProvider]).toEqual([[], [], []]);
  });
});

describe("featureGateSecretData", () => {
  it("maps gates to the clusterctl variables the manifests template", () => {
    expect(featureGateSecretData(["ClusterTopology", "RuntimeSDK"])).toEqual({ CLUSTER_TOPOLOGY: "true", EXP_RUNTIME_SDK: "true" });
    expect(featureGateSecretData([])).toEqual({});
  });
});
