import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { goModule } from "../../tests/upstream";
import { catalog } from "./catalog";
import { clusterApiFeatureGates, clusterApiProviders, featureGateSecretData, featureGatesSecretName, githubTokenSecretName, providerConfigSecret } from "./cluster-api-providers";

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

// What each CAPI manager ends up with: the operator fills the provider manifest's clusterctl
// variables from the provider's configSecret (sigs.k8s.io/cluster-api-operator@v0.28.0:
// internal/controller/phase_initialize.go `initReaderVariables`), and the manifest's
// `--feature-gates` flag templates each gate as `${VARIABLE:=default}`
// (sigs.k8s.io/cluster-api@v1.12.10: config/manager/manager.yaml and the kubeadm twins), read
// here from the module the resolver downloads (tests/upstream.ts).
const capiModule = () => {
  const module = goModule("sigs.k8s.io/cluster-api", catalog.clusterApi.version);
  if ("unavailable" in module) throw new Error(module.unavailable);
  return module.dir;
};
const managerManifests: Record<string, string> = {
  CoreProvider: "config/manager/manager.yaml",
  BootstrapProvider: "bootstrap/kubeadm/config/manager/manager.yaml",
  ControlPlaneProvider: "controlplane/kubeadm/config/manager/manager.yaml",
};

/** The gates a manager runs with, after clusterctl's `${VAR:=default}` substitution from `variables`. */
function managerGates(kind: string, variables: Record<string, string>): Record<string, string> {
  const manifest = readFileSync(path.join(capiModule(), managerManifests[kind]!), "utf8");
  const flag = /--feature-gates=([^"\s]+)/.exec(manifest)![1]!;
  const substituted = flag.replaceAll(/\$\{(\w+):=(\w*)\}/g, (_all, name: string, fallback: string) => variables[name] ?? fallback);
  return Object.fromEntries(substituted.split(",").map((pair) => pair.split("=") as [string, string]));
}

describe("the feature gates each CAPI manager runs with", () => {
  it("are on for the gates its provider row asks for, from the configSecret it names, with or without a GitHub token", () => {
    for (const githubToken of [false, true]) {
      for (const provider of clusterApiProviders.filter((p) => p.kind in managerManifests)) {
        const ref = providerConfigSecret(provider, { githubToken });
        // The component fills the gates Secret with every fleet gate, a token-only Secret with no gate.
        const data = ref?.name === featureGatesSecretName ? featureGateSecretData(clusterApiFeatureGates) : {};
        const gates = managerGates(provider.kind, data);
        for (const gate of provider.featureGates) expect(gates[gate], `${provider.kind} ${gate}`).toBe("true");
      }
    }
    // Without the fleet's Secret the manifests leave both gates off (negative control).
    expect(managerGates("CoreProvider", {})).toMatchObject({ ClusterTopology: "false", RuntimeSDK: "false" });
  });
});

describe("providerConfigSecret", () => {
  it("gives a provider with gates the one gates Secret, in the namespace where the component creates it (the core provider's)", () => {
    const core = clusterApiProviders.find((p) => p.kind === "CoreProvider")!;
    for (const githubToken of [false, true]) {
      const refs = clusterApiProviders.filter((p) => p.featureGates.length > 0).map((p) => providerConfigSecret(p, { githubToken }));
      expect(refs.length).toBeGreaterThan(1);
      expect(refs.every((ref) => ref?.name === featureGatesSecretName && ref.namespace === core.namespace)).toBe(true);
    }
  });

  it("gives a provider without gates a token Secret in its own namespace when there is a token, and none otherwise", () => {
    const ungated = clusterApiProviders.filter((p) => p.featureGates.length === 0);
    expect(ungated.length).toBeGreaterThan(0);
    for (const provider of ungated) {
      expect(providerConfigSecret(provider, { githubToken: false })).toBeUndefined();
      expect(providerConfigSecret(provider, { githubToken: true })).toEqual({ name: githubTokenSecretName, namespace: provider.namespace });
    }
    expect(githubTokenSecretName).not.toBe(featureGatesSecretName);
  });
});
