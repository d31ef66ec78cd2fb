import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { catalog } from "../infra/model/catalog";
import { runToolchain } from "./kube-apiserver";
import { checkoutRoot } from "./stack-files";

// Where the CRDs of every kind the program declares come from: the upstream Go module at the
// catalog's exact version, read from the Go module cache at test time (nothing upstream is
// committed). Module paths are not versions; every version below comes from the catalog.
// Source order, for every test that installs them: the Go module; where the proxy refuses it,
// the project's data copy of the same files next to the checkout, read in place (`fallback`);
// where neither exists (a user's clone), the kinds are reported as not verified.

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
   * Why the proxy may refuse this module (known at the time of writing). Only such a source
   * may be missing: its kinds are then reported as not verified; any other refusal fails.
   */
  knownRefusal?: string;
  /**
   * Where the same upstream files are kept outside the repository when the proxy refuses the
   * module (project machines and CI have them; a user's clone may not): read in place, never copied.
   */
  fallback?: { dir: string; note: string };
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
    knownRefusal: "proxy.golang.org answers 403 (This module version is not available)",
    // The same 11 files as the module's config/crd/bases, byte for byte (its README names the commit).
    fallback: {
      dir: path.resolve(checkoutRoot, "..", "shared", "upstream", `caph-${catalog.caph.version}`, "crds"),
      note: `upstream data copy of config/crd/bases at ${catalog.caph.version}`,
    },
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
 * The outcome of reading one source: its module directory (or the fallback directory, with
 * `via` saying so) and CRDs, or why it is unavailable.
 */
export type SourceResult =
  | { source: CrdSource; dir: string; crds: Crd[]; files: string[]; via?: string }
  | { source: CrdSource; unavailable: string };

/** True when the go command's message says the proxy refused the module (not: unreachable). */
export function isRefusal(message: string): boolean {
  return /\b(403 Forbidden|404 Not Found|410 Gone)\b|not available|unknown revision/.test(message);
}

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
 * Downloads a source's module (pinned by the catalog) into the Go module cache and reads its
 * CRDs. A refusal by the proxy becomes `unavailable`; an unreachable proxy throws.
 */
export async function readSource(source: CrdSource, timeoutMs: number): Promise<SourceResult> {
  let dir: string;
  try {
    dir = (await runToolchain(["module", `${source.module}@${source.version}`], timeoutMs)).trim();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!isRefusal(message)) throw error;
    const refused = `${source.module}@${source.version}: ${source.knownRefusal ?? "refused by the Go module proxy"}`;
    if (source.fallback && existsSync(source.fallback.dir)) {
      const found = crdsIn(source.fallback.dir);
      if (found.crds.length === 0) throw new Error(`${source.fallback.dir}: no CRDs (${source.fallback.note})`);
      return { source, dir: source.fallback.dir, crds: labelled(source, found.crds), files: found.files, via: `${refused}; read ${source.fallback.note}` };
    }
    return { source, unavailable: refused };
  }
  const crds: Crd[] = [];
  const files: string[] = [];
  for (const sub of source.dirs) {
    const found = crdsIn(path.join(dir, sub));
    if (found.crds.length === 0) throw new Error(`${source.module}@${source.version}: no CRDs in ${sub}`);
    crds.push(...found.crds);
    files.push(...found.files);
  }
  return { source, dir, crds: labelled(source, crds), files };
}
