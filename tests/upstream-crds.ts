import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { catalog } from "../infra/model/catalog";
import { runToolchain } from "./kube-apiserver";

// Where the CRDs of every kind the program declares come from: the upstream Go module at the
// catalog's exact version, read from the Go module cache at test time (nothing upstream is
// committed). Module paths are not versions; every version below comes from the catalog.

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
  },
  {
    name: "CAREN",
    module: "github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix",
    version: catalog.caren.chart.version,
    dirs: ["api/v1alpha1/crds"],
    groups: ["caren.nutanix.com"],
    knownRefusal: "proxy.golang.org answers 403 (This module version is not available)",
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

/** The outcome of reading one source: its module directory and CRDs, or why it is unavailable. */
export type SourceResult =
  | { source: CrdSource; dir: string; crds: Crd[]; files: string[] }
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
    if (isRefusal(message)) return { source, unavailable: `${source.module}@${source.version}: ${source.knownRefusal ?? "refused by the Go module proxy"}` };
    throw error;
  }
  const crds: Crd[] = [];
  const files: string[] = [];
  for (const sub of source.dirs) {
    const found = crdsIn(path.join(dir, sub));
    if (found.crds.length === 0) throw new Error(`${source.module}@${source.version}: no CRDs in ${sub}`);
    crds.push(...found.crds);
    files.push(...found.files);
  }
  return { source, dir, crds, files };
}
