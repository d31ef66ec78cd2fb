import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { applyJsonPatch, type JsonPatch } from "./cluster-class-patches";
import { buildGoProgram, cacheRoot } from "./go-programs";
import { goModule, upstreamDir } from "./upstream";
import type { Crd, CrdSource } from "./upstream-crds";

// What CAPI's topology controller does with a ClusterClass for one Cluster, for unit tests that
// must run in a second: default the variables, check the required ones, then render and apply
// each inline patch to the templates it selects. The Go templates (`valueFrom.template`,
// `enabledIf`, the infrastructure naming template) are rendered by Go's text/template with
// sprig, as CAPI does, through tests/go/capi-value-template (built with the Go module proxy).
// Stand-ins, ported from sigs.k8s.io/cluster-api@v1.12.10 (the real thing runs in
// tests/in-the-loop/capi-in-the-loop.test.ts, too slow to run per mutant):
// - defaulting and the required check: internal/topology/variables/cluster_variable_defaulting.go
//   (a missing variable with a top-level default is created, required or not) and
//   cluster_variable_validation.go `validateRequiredVariables` (the Cluster must set the rest);
// - patch order, `enabledIf` and selectors: internal/controllers/topology/cluster/patches/engine.go
//   and inline/json_patch_generator.go (`matchesSelector`, `patchIsEnabled`: enabled only when
//   the rendered value is `true`; `calculateValue`: a missing variable fails the patch);
// - the JSON patch itself: tests/support/cluster-class-patches.ts `applyJsonPatch` (RFC 6902 add).

/** Renders CAPI value templates with the real Go template engine. */
export interface GoTemplateRenderer {
  render(template: string, variables: Record<string, unknown>): { value: unknown } | { error: string };
  /** Renders several templates with the same data in one process (later `render` calls answer from memory). */
  renderMany(templates: readonly string[], variables: Record<string, unknown>): void;
}

/** Builds tests/go/capi-value-template (tests/support/go-programs.ts); throws with go's reason when it cannot. */
export function buildGoTemplateRenderer(): GoTemplateRenderer {
  const binary = buildGoProgram("capi-value-template").binary;
  // The same template with the same data renders the same: each distinct request runs once, and
  // the requests of one call go to one process.
  const rendered = new Map<string, { value: unknown } | { error: string }>();
  const renderMany = (templates: readonly string[], variables: Record<string, unknown>) => {
    const inputs = [...new Set(templates.map((template) => JSON.stringify({ template, variables })))].filter((input) => !rendered.has(input));
    if (inputs.length === 0) return;
    const result = spawnSync(binary, [], { input: inputs.map((input) => `${input}\n`).join(""), encoding: "utf8", timeout: 30_000 });
    if (result.status !== 0) throw new Error(`render failed: ${result.error?.message ?? result.stderr}`);
    const outputs = result.stdout.trimEnd().split("\n");
    if (outputs.length !== inputs.length) throw new Error(`render answered ${outputs.length} lines for ${inputs.length} requests`);
    inputs.forEach((input, index) => rendered.set(input, JSON.parse(outputs[index]!) as { value: unknown } | { error: string }));
  };
  return {
    renderMany,
    render(template, variables) {
      renderMany([template], variables);
      return structuredClone(rendered.get(JSON.stringify({ template, variables }))!);
    },
  };
}

/** The cache root of tools/kube-apiserver-toolchain and tools/toolchain. */

/** The CRD documents of a YAML file, parsed once per file content (a CRD of CAPI's kubeadm kinds is 400 kB of YAML). */
function crdsOfFile(file: string): Crd[] {
  const text = readFileSync(file, "utf8");
  const cached = path.join(cacheRoot(), "crd-json", `${createHash("sha256").update(text).digest("hex").slice(0, 24)}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as Crd[];
  const crds = parseAllDocuments(text)
    .map((document) => document.toJS() as { kind?: string } | null)
    .filter((value): value is Crd => value?.kind === "CustomResourceDefinition");
  mkdirSync(path.dirname(cached), { recursive: true });
  writeFileSync(`${cached}.${process.pid}`, JSON.stringify(crds));
  renameSync(`${cached}.${process.pid}`, cached);
  return crds;
}

/** A module's root directory at an exact version, through the resolver; throws when the proxy refuses it. */
export function moduleDir(module: string, version: string): string {
  const found = goModule(module, version);
  if ("unavailable" in found) throw new Error(found.unavailable);
  return found.dir;
}

/** Cluster API's sources at the catalog's version (the proxy serves them). */
export function capiModuleDir(): string {
  return moduleDir("sigs.k8s.io/cluster-api", catalog.clusterApi.version);
}

/**
 * The named CRD files of a source, through the resolver (tests/support/upstream.ts: the module, else its
 * data copy), or why they are unavailable. Only the files a test needs: parsing every CRD of
 * Cluster API takes seconds.
 */
export function crdFiles(source: CrdSource, files: readonly string[]): Crd[] | { unavailable: string } {
  const dirs: string[] = [];
  for (const sub of source.dirs) {
    const found = upstreamDir({ module: source.module, version: source.version, path: sub, shared: source.shared });
    if ("unavailable" in found) return { unavailable: found.unavailable };
    dirs.push(found.dir);
  }
  const crds: Crd[] = [];
  for (const file of files) {
    const found = dirs.map((dir) => path.join(dir, file)).find((candidate) => existsSync(candidate));
    if (!found) throw new Error(`${source.module}@${source.version}: no ${file} in ${dirs.join(", ")}`);
    crds.push(...crdsOfFile(found));
  }
  return crds;
}

/** A ClusterClass variable definition (inline schema). */
export interface VariableDefinition {
  name: string;
  required: boolean;
  schema: { openAPIV3Schema: Record<string, unknown> };
}

/** A variable value as a Cluster (or a MachineDeployment override) sets it. */
export interface VariableValue {
  name: string;
  value: unknown;
}

/** CAPI's defaulting, then its required check: the variables the topology controller sees, or why the webhook refuses the Cluster. */
export function defaultedVariables(values: readonly VariableValue[], definitions: readonly VariableDefinition[]): { variables: Record<string, unknown> } | { refused: string } {
  const variables: Record<string, unknown> = Object.fromEntries(values.map((variable) => [variable.name, variable.value]));
  for (const definition of definitions) {
    if (definition.name in variables) continue;
    const fallback = definition.schema.openAPIV3Schema["default"];
    if (fallback !== undefined) variables[definition.name] = structuredClone(fallback);
    else if (definition.required) return { refused: `spec.topology.variables: Required value: required variable with name "${definition.name}" must be defined` };
  }
  return { variables };
}

/** Which template a patch sees, and what CAPI tells a selector about it. */
export interface TemplateHolder {
  infrastructureCluster?: boolean;
  controlPlane?: boolean;
  /** builtin.machineDeployment.class of the MachineDeployment holding the template. */
  machineDeploymentClass?: string;
}

interface Selector {
  apiVersion: string;
  kind: string;
  matchResources: { infrastructureCluster?: boolean; controlPlane?: boolean; machineDeploymentClass?: { names?: string[] } };
}

interface ClassPatch {
  name: string;
  enabledIf?: string;
  definitions?: { selector: Selector; jsonPatches: JsonPatch[] }[];
}

function matchesSelector(template: { apiVersion: string; kind: string }, holder: TemplateHolder, selector: Selector): boolean {
  if (template.apiVersion !== selector.apiVersion || template.kind !== selector.kind) return false;
  if (selector.matchResources.infrastructureCluster && holder.infrastructureCluster) return true;
  if (selector.matchResources.controlPlane && holder.controlPlane) return true;
  const names = selector.matchResources.machineDeploymentClass?.names ?? [];
  return holder.machineDeploymentClass !== undefined && names.includes(holder.machineDeploymentClass);
}

/**
 * A template after the class's inline patches, as CAPI renders it for one holder with the given
 * variables (builtins included); throws with CAPI's reason when a patch cannot be generated or applied.
 */
export function patchedTemplate<T extends { apiVersion: string; kind: string }>(
  renderer: GoTemplateRenderer,
  patches: readonly unknown[],
  template: T,
  holder: TemplateHolder,
  variables: Record<string, unknown>,
): T {
  const result = structuredClone(template);
  const rendered = (source: string) => {
    const output = renderer.render(source, variables);
    if ("error" in output) throw new Error(output.error);
    return output.value;
  };
  const classPatches = patches as readonly ClassPatch[];
  renderer.renderMany(
    classPatches.flatMap((patch) => [
      ...(patch.enabledIf ? [patch.enabledIf] : []),
      ...(patch.definitions ?? []).flatMap((definition) => definition.jsonPatches.flatMap((jsonPatch) => (jsonPatch.valueFrom?.template ? [jsonPatch.valueFrom.template] : []))),
    ]),
    variables,
  );
  for (const patch of classPatches) {
    if (!patch.definitions) continue;
    if (patch.enabledIf !== undefined && patch.enabledIf !== "" && rendered(patch.enabledIf) !== true) continue;
    for (const definition of patch.definitions) {
      if (!matchesSelector(template, holder, definition.selector)) continue;
      for (const jsonPatch of definition.jsonPatches) {
        const { variable, template: valueTemplate } = jsonPatch.valueFrom ?? {};
        let value: unknown = jsonPatch.value;
        if (variable !== undefined) {
          if (!(variable in variables)) throw new Error(`patch ${patch.name}: failed to calculate value: variable "${variable}" does not exist`);
          value = variables[variable];
        } else if (valueTemplate !== undefined) {
          value = rendered(valueTemplate);
        }
        applyJsonPatch(result, { op: jsonPatch.op, path: jsonPatch.path, value: structuredClone(value) });
      }
    }
  }
  return result;
}
