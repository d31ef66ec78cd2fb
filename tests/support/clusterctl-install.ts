import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { clusterApiProviders, type ProviderKind } from "../../infra/model/platform/cluster-api-providers";
import { sourceOfGroup, type Crd, type CrdSource, type SourceResult } from "./upstream-crds";

// What the fleet's provider install puts on the CRDs, for tests that run `clusterctl move`.
//
// The cluster-api-operator installs each provider through clusterctl's components processing
// (sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/phase_fetch.go calls
// repository.NewComponents), which labels every object `clusterctl.cluster.x-k8s.io: ""`
// (sigs.k8s.io/cluster-api@v1.12.10: cmd/clusterctl/client/repository/components.go,
// addCommonLabels). `clusterctl move` lists only the CRDs with that label and moves only their kinds
// (plus Secrets and ConfigMaps): cmd/clusterctl/client/cluster/objectgraph.go, getCRDList and
// getDiscoveryTypes. A provider's own kustomize adds more labels with label-only patches, e.g.
// CAAPH's `clusterctl.cluster.x-k8s.io/move-hierarchy` on HelmChartProxy
// (sigs.k8s.io/cluster-api-addon-provider-helm@v0.6.4: config/crd/patches/clusterctl_move_label_in_helmchartproxies.yaml).

export const clusterctlLabel = "clusterctl.cluster.x-k8s.io";

/** The API group whose CRDs each kind of provider brings. */
const groupOfProvider: Record<ProviderKind, string> = {
  CoreProvider: "cluster.x-k8s.io",
  BootstrapProvider: "bootstrap.cluster.x-k8s.io",
  ControlPlaneProvider: "controlplane.cluster.x-k8s.io",
  InfrastructureProvider: "infrastructure.cluster.x-k8s.io",
  AddonProvider: "addons.cluster.x-k8s.io",
};

/** The CRD sources the operator installs (the program's providers), not the charts' (Flux, CAREN, the operator's own). */
export function clusterctlInstalledSources(): Set<CrdSource> {
  return new Set(clusterApiProviders.map((provider) => sourceOfGroup(groupOfProvider[provider.kind])).filter((source): source is CrdSource => source !== undefined));
}

/** Labels set by label-only CRD patches of a module's config/crd/kustomization.yaml, by CRD name. */
export function kustomizeLabelPatches(moduleDir: string): Map<string, Record<string, string>> {
  const found = new Map<string, Record<string, string>>();
  const file = path.join(moduleDir, "config", "crd", "kustomization.yaml");
  if (!existsSync(file)) return found;
  const kustomization = parseYaml(readFileSync(file, "utf8")) as { patches?: { path?: string }[] };
  for (const patch of kustomization.patches ?? []) {
    if (!patch.path) continue;
    const document = parseYaml(readFileSync(path.join(path.dirname(file), patch.path), "utf8")) as {
      kind?: string;
      metadata?: { name?: string; labels?: Record<string, string> };
      spec?: unknown;
    } | null;
    const name = document?.metadata?.name;
    if (document?.kind !== "CustomResourceDefinition" || !name || !document.metadata?.labels || document.spec !== undefined) continue;
    found.set(name, { ...found.get(name), ...document.metadata.labels });
  }
  return found;
}

/** Adds, in place, the labels an install by the operator gives each CRD of its providers. */
export function labelAsClusterctlInstalls(crds: Crd[], sources: SourceResult[]): void {
  const installed = clusterctlInstalledSources();
  const patches = new Map<string, Record<string, string>>();
  for (const result of sources) {
    if (!("crds" in result) || !installed.has(result.source) || result.via) continue; // a data copy holds the CRDs only
    for (const [name, labels] of kustomizeLabelPatches(result.dir)) patches.set(name, labels);
  }
  for (const crd of crds as (Crd & { metadata: { labels?: Record<string, string> } })[]) {
    const source = sourceOfGroup(crd.spec.group);
    if (!source || !installed.has(source)) continue;
    crd.metadata.labels = { ...crd.metadata.labels, ...patches.get(crd.metadata.name), [clusterctlLabel]: "" };
  }
}
