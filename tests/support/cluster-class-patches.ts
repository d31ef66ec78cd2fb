import type { Crd } from "./upstream-crds";

// ClusterClass inline patches write into templates at paths no API server sees until CAPI's
// topology controller runs: a misspelled or renamed path there looks fine in the ClusterClass
// (its `path` is a string) and fails only when a tenant is created. These helpers check each
// path against the target kind's CRD schema, without CAPI. What the patches actually render (Go
// templates, `enabledIf`, CAREN's external patches) is checked on the objects CAPI's own topology
// controller generates: tests/in-the-loop/capi-in-the-loop.test.ts.

/** The part of an OpenAPI v3 schema the path walk needs. */
export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
}

/** One JSON patch of a ClusterClass `patches[].definitions[].jsonPatches[]`. */
export interface JsonPatch {
  op: "add" | "replace" | "remove";
  path: string;
  value?: unknown;
  valueFrom?: { variable?: string; template?: string };
}

/** One ClusterClass patch definition: which templates it targets and what it writes. */
export interface PatchDefinition {
  patch: string;
  apiVersion: string;
  kind: string;
  /** Names of the class's templates the selector matches. */
  targets: string[];
  jsonPatches: JsonPatch[];
}

interface TemplateRef {
  templateRef?: { apiVersion: string; kind: string; name: string };
}

interface ClassSpec {
  infrastructure?: TemplateRef;
  controlPlane?: TemplateRef & { machineInfrastructure?: TemplateRef };
  workers?: { machineDeployments?: ({ class: string; bootstrap?: TemplateRef; infrastructure?: TemplateRef })[] };
  patches?: {
    name: string;
    definitions?: {
      selector: {
        apiVersion: string;
        kind: string;
        matchResources: { infrastructureCluster?: boolean; controlPlane?: boolean; machineDeploymentClass?: { names?: string[] } };
      };
      jsonPatches: JsonPatch[];
    }[];
  }[];
}

/**
 * The inline patch definitions of a ClusterClass spec with the templates each selects, as
 * CAPI matches them (apiVersion and kind, then matchResources); external patches are CAREN's.
 */
export function patchDefinitions(clusterClassSpec: Record<string, unknown>): PatchDefinition[] {
  const spec = clusterClassSpec as ClassSpec;
  return (spec.patches ?? []).flatMap((patch) =>
    (patch.definitions ?? []).map(({ selector, jsonPatches }) => {
      const refs: (TemplateRef | undefined)[] = [];
      if (selector.matchResources.infrastructureCluster) refs.push(spec.infrastructure);
      if (selector.matchResources.controlPlane) refs.push(spec.controlPlane, spec.controlPlane?.machineInfrastructure);
      const names = selector.matchResources.machineDeploymentClass?.names ?? [];
      for (const md of spec.workers?.machineDeployments ?? []) {
        if (names.includes(md.class)) refs.push(md.bootstrap, md.infrastructure);
      }
      const targets = refs
        .map((ref) => ref?.templateRef)
        .filter((ref) => ref?.apiVersion === selector.apiVersion && ref.kind === selector.kind)
        .map((ref) => ref!.name);
      return { patch: patch.name, apiVersion: selector.apiVersion, kind: selector.kind, targets: [...new Set(targets)], jsonPatches };
    }),
  );
}

/** The schema a CRD serves for one version, if it serves it. */
export function crdSchema(crds: readonly Crd[], apiVersion: string, kind: string): Schema | undefined {
  const [group, version] = apiVersion.split("/");
  const crd = crds.find((candidate) => candidate.spec.group === group && candidate.spec.names.kind === kind);
  const served = crd?.spec.versions.find((candidate) => candidate.name === version) as { schema?: { openAPIV3Schema?: Schema } } | undefined;
  return served?.schema?.openAPIV3Schema;
}

const segments = (pointer: string) =>
  pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));

/**
 * The first segment of a JSON pointer the schema does not declare (undefined when all are
 * declared, or when the walk reaches a subtree that keeps unknown fields and so cannot tell).
 */
export function undeclaredSegment(schema: Schema, pointer: string): string | undefined {
  let node: Schema | undefined = schema;
  for (const segment of segments(pointer)) {
    if (node["x-kubernetes-preserve-unknown-fields"] === true && !node.properties) return undefined;
    if (node.type === "array") {
      if (!/^(\d+|-)$/.test(segment) || !node.items) return segment;
      node = node.items;
    } else if (node.properties?.[segment]) {
      node = node.properties[segment];
    } else if (typeof node.additionalProperties === "object") {
      node = node.additionalProperties;
    } else {
      return segment;
    }
  }
  return undefined;
}

/** Applies one add/replace/remove JSON patch in place (the subset ClusterClass patches use). */
export function applyJsonPatch(document: unknown, patch: { op: string; path: string; value?: unknown }): void {
  const parts = segments(patch.path);
  const last = parts.pop();
  if (last === undefined) throw new Error(`cannot patch the document root (${patch.path})`);
  let parent = document as Record<string, unknown> | unknown[];
  for (const part of parts) {
    const next: unknown = Array.isArray(parent) ? parent[Number(part)] : parent[part];
    if (typeof next !== "object" || next === null) throw new Error(`${patch.path}: ${part} does not exist in the template`);
    parent = next as Record<string, unknown> | unknown[];
  }
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (patch.op === "remove") parent.splice(index, 1);
    else if (patch.op === "add") parent.splice(index, 0, patch.value);
    else parent[index] = patch.value;
  } else if (patch.op === "remove") {
    Reflect.deleteProperty(parent, last);
  } else {
    parent[last] = patch.value;
  }
}
