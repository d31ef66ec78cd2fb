import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { upstreamDir } from "./upstream";

// Where the CRDs of every kind the program declares come from: the upstream Go module at the
// catalog's exact version, got through the resolver at test time (tests/support/upstream.ts: the Go
// module proxy; where it refuses the module, the project's data copy of the same files next to
// the checkout, `shared`; else unavailable, and the test that needs them skips only if
// tests/unverified.json declares it). Nothing upstream is committed. Every version comes from the catalog.

/** One upstream project whose CRDs the conformance test installs. */
export interface CrdSource {
  name: string;
  module: string;
  version: string;
  /** Directories (in the module) whose YAML files hold the CRDs; other documents are skipped. */
  dirs: string[];
  /** API groups this source defines: a declared kind of these groups is verified only with it. */
  groups: string[];
  /**
   * Why the proxy may refuse this module (known at the time of writing). Only such a source may
   * be read from a data copy; any other refusal fails.
   */
  knownRefusal?: string;
  /**
   * Where `../shared/upstream` keeps the same files as the module's only `dirs` entry, for a
   * proxy that refuses the module: read in place, never copied.
   */
  shared?: string;
  /**
   * Labels the project's kustomize adds to each CRD on install (the CAPI contract label tells
   * CAPI which API version of a provider's kind speaks which contract).
   */
  labels?: Record<string, string>;
}

/** Chart versions have no leading v; Go module versions do. */
const tag = (version: string) => (version.startsWith("v") ? version : `v${version}`);

export const crdSources: readonly CrdSource[] = [
  {
    name: "Cluster API (core, kubeadm bootstrap and control plane)",
    module: "sigs.k8s.io/cluster-api",
    version: catalog.clusterApi.version,
    dirs: ["config/crd/bases", "bootstrap/kubeadm/config/crd/bases", "controlplane/kubeadm/config/crd/bases"],
    groups: ["cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "runtime.cluster.x-k8s.io", "ipam.cluster.x-k8s.io"],
  },
  {
    name: "CAAPH",
    module: "sigs.k8s.io/cluster-api-addon-provider-helm",
    version: catalog.caaph.version,
    dirs: ["config/crd/bases"],
    groups: ["addons.cluster.x-k8s.io"],
  },
  {
    name: "cluster-api-operator",
    module: "sigs.k8s.io/cluster-api-operator",
    version: tag(catalog.clusterApiOperator.chart.version),
    dirs: ["config/crd/bases"],
    groups: ["operator.cluster.x-k8s.io"],
  },
  {
    name: "Flux Operator",
    module: "github.com/controlplaneio-fluxcd/flux-operator",
    version: tag(catalog.flux.operatorChart.version),
    dirs: ["config/crd/bases"],
    groups: ["fluxcd.controlplane.io"],
  },
  {
    // The operator installs Flux from the manifests it bundles per distribution version.
    name: `Flux ${catalog.flux.distribution} (bundled by the Flux Operator)`,
    module: "github.com/controlplaneio-fluxcd/flux-operator",
    version: tag(catalog.flux.operatorChart.version),
    dirs: [`config/data/flux/${tag(catalog.flux.distribution)}`],
    groups: [
      "source.toolkit.fluxcd.io",
      "kustomize.toolkit.fluxcd.io",
      "helm.toolkit.fluxcd.io",
      "notification.toolkit.fluxcd.io",
      "image.toolkit.fluxcd.io",
      "source.extensions.fluxcd.io",
    ],
  },
  {
    name: "CAPH",
    module: "github.com/syself/cluster-api-provider-hetzner",
    version: catalog.caph.version,
    dirs: ["config/crd/bases"],
    groups: ["infrastructure.cluster.x-k8s.io"],
    knownRefusal: "the Go module proxy here answers 403 (This module version is not available)",
    // The same 11 files as the module's config/crd/bases, byte for byte (its README names the commit).
    shared: `caph-${catalog.caph.version}/crds`,
    // syself/cluster-api-provider-hetzner@v1.1.8: config/crd/kustomization.yaml adds it to every CRD.
    labels: { "cluster.x-k8s.io/v1beta1": "v1beta1" },
  },
  {
    // The management servers' Plan (hetzner mode): the CRD the controller registers from this
    // very file when it starts (rancher/system-upgrade-controller@v0.20.1: pkg/crds/crds.go).
    // The proxy serves the module at the pinned tag (only its version list answers 403).
    name: "system-upgrade-controller",
    module: "github.com/rancher/system-upgrade-controller",
    version: catalog.systemUpgradeController.version,
    dirs: ["pkg/crds/yaml/generated"],
    groups: ["upgrade.cattle.io"],
  },
];

/** The source that defines an API group, if any. */
export function sourceOfGroup(group: string): CrdSource | undefined {
  return crdSources.find((source) => source.groups.includes(group));
}

/** A CRD document as read from upstream (only the fields the test uses are typed). */
export interface Crd {
  apiVersion: string;
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: { group: string; names: { kind: string }; versions: { name: string; served: boolean }[] };
}

/** A source's CRDs with the labels its kustomize adds (copies; the inputs stay as read). */
function labelled(source: CrdSource, crds: Crd[]): Crd[] {
  if (!source.labels) return crds;
  return crds.map((crd) => {
    const copy = structuredClone(crd) as Crd & { metadata: { labels?: Record<string, string> } };
    copy.metadata.labels = { ...copy.metadata.labels, ...source.labels };
    return copy;
  });
}

/**
 * The outcome of reading one source: its module directory (or the data copy's, with `via` saying
 * so) and CRDs, or why it is unavailable.
 */
export type SourceResult =
  | { source: CrdSource; dir: string; crds: Crd[]; files: string[]; via?: string }
  | { source: CrdSource; unavailable: string };


/** Every CustomResourceDefinition document in the YAML files of `dir` (not recursive). */
export function crdsIn(dir: string): { crds: Crd[]; files: string[] } {
  const files = readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file) && statSync(path.join(dir, file)).isFile())
    .sort();
  const crds: Crd[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(readFileSync(path.join(dir, file), "utf8"))) {
      const value = document.toJS() as { kind?: string } | null;
      if (value?.kind === "CustomResourceDefinition") crds.push(value as Crd);
    }
  }
  return { crds, files: files.map((file) => path.join(dir, file)) };
}

/**
 * A source's CRDs through the resolver (tests/support/upstream.ts): the module (downloaded when missing),
 * else its data copy, else `unavailable` with the proxy's answer. Anything but a refusal throws.
 */
export function readSource(source: CrdSource): SourceResult {
  if (source.shared !== undefined && source.dirs.length !== 1) throw new Error(`${source.name}: a data copy stands for exactly one directory of the module`);
  const crds: Crd[] = [];
  const files: string[] = [];
  let via: string | undefined;
  let moduleDir = "";
  for (const sub of source.dirs) {
    const found = upstreamDir({ module: source.module, version: source.version, path: sub, shared: source.shared });
    if ("unavailable" in found) return { source, unavailable: found.unavailable };
    if (found.dataCopy) {
      if (source.knownRefusal === undefined) throw new Error(`${source.name}: the proxy refused a module it is not known to refuse: ${found.via}`);
      via = found.via;
    }
    // The module's root (for files outside the CRD directories), or the data copy's directory.
    moduleDir ||= found.dataCopy ? found.dir : found.dir.slice(0, found.dir.length - sub.length).replace(/\/+$/, "");
    const inDir = crdsIn(found.dir);
    if (inDir.crds.length === 0) throw new Error(`${source.module}@${source.version}: no CRDs in ${found.dir}`);
    crds.push(...inDir.crds);
    files.push(...inDir.files);
  }
  return via === undefined ? { source, dir: moduleDir, crds: labelled(source, crds), files } : { source, dir: moduleDir, crds: labelled(source, crds), files, via };
}
