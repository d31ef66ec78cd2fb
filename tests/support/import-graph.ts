import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The program's import graph and the rules of its direction (docs/architecture.md, *Layout*):
 * which folder may import which. Imports are read by TypeScript's own scanner
 * (`ts.preProcessFile`: static imports and exports, `require` and dynamic `import()`), and a
 * relative specifier is resolved as Node.js and TypeScript resolve this repository's files: the
 * file itself, or with `.ts`, `.mts`, `.mjs`, `.js`, `.json`, or `/index.ts`; `.js` names a `.ts`
 * file under node16 resolution.
 */

/** The model's concerns, lowest first: a file may import from its own concern and the ones before it. */
export const modelLayers = ["contract", "versions", "facts", "config", "platform", "management", "tenant", "stack", "costs"] as const;

export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

const extensions = ["", ".ts", ".mts", ".mjs", ".js", ".json", "/index.ts"];

/** The repository file a relative specifier names, or undefined (a package, a builtin, or nothing there). */
export function resolveRelative(from: string, specifier: string, exists: (file: string) => boolean): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = extensions.map((extension) => base + extension);
  if (base.endsWith(".js")) candidates.push(base.replace(/\.js$/, ".ts"));
  if (base.endsWith(".mjs")) candidates.push(base.replace(/\.mjs$/, ".mts"));
  return candidates.find(exists);
}

/** Every import of `files` (repository-relative) that names another repository file. */
export function importEdges(root: string, files: readonly string[]): ImportEdge[] {
  const exists = (file: string) => existsSync(path.join(root, file)) && !file.endsWith("/");
  return files.flatMap((from) =>
    ts
      .preProcessFile(readFileSync(path.join(root, from), "utf8"), true, true)
      .importedFiles.map((imported) => resolveRelative(from, imported.fileName, exists))
      .filter((to): to is string => to !== undefined)
      .map((to) => ({ from, to })),
  );
}

/** Test code and its fixtures: outside the program's graph, so they may import anything. */
export function isTestCode(file: string): boolean {
  return /\.test\.m?ts$/.test(file) || file.startsWith("tests/") || file.startsWith("policies/testing/") || /-fixtures\.ts$/.test(file);
}

const modelRoot = "infra/model/";

/** The model concern a file belongs to (`config` for infra/model/config/x.ts), or undefined outside the model. */
function modelConcern(file: string): string | undefined {
  if (!file.startsWith(modelRoot)) return undefined;
  const rest = file.slice(modelRoot.length);
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : "";
}

/** What each top folder of the program may import, besides itself and packages. */
const tierImports: Readonly<Record<string, readonly string[]>> = {
  "infra/model": [],
  components: ["infra/model"],
  policies: ["infra/model"],
  // The composition root wires everything.
  infra: ["infra/model", "components"],
  // The users' commands read the model; the stable entry points import their component's program.
  scripts: ["components", "infra/model"],
  // tools/ (development tooling, which drives the tests' mocks) and tests/ are not the program.
};

function tierOf(file: string): string | undefined {
  if (file.startsWith(modelRoot)) return "infra/model";
  return Object.keys(tierImports).find((tier) => file.startsWith(`${tier}/`));
}

/** Each import that breaks the direction, as a sentence naming both files. */
export function directionProblems(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const tier = tierOf(from);
    if (isTestCode(from) || tier === undefined) continue;
    if (isTestCode(to)) {
      problems.push(`${from} imports test code ${to}`);
      continue;
    }
    if (tierOf(to) !== tier) {
      const allowed = tierImports[tier] ?? [];
      if (!allowed.some((prefix) => to.startsWith(`${prefix}/`))) {
        problems.push(`${from} imports ${to}: ${tier}/ may import only ${[`${tier}/`, ...allowed.map((prefix) => `${prefix}/`)].join(", ")}`);
        continue;
      }
    }
    const fromConcern = modelConcern(from);
    const toConcern = modelConcern(to);
    if (fromConcern === undefined || toConcern === undefined) continue;
    const fromRank = modelLayers.indexOf(fromConcern as (typeof modelLayers)[number]);
    const toRank = modelLayers.indexOf(toConcern as (typeof modelLayers)[number]);
    if (fromRank === -1) {
      problems.push(`${from} is in infra/model/${fromConcern === "" ? "" : `${fromConcern}/`}, which is not a concern of the model's order (${modelLayers.join(" < ")})`);
    } else if (fromConcern === "contract") {
      // Node.js runs these files for the .mjs scripts by stripping types, which resolves no extensionless import.
      problems.push(`${from} imports ${to}: a contract file imports nothing`);
    } else if (toRank > fromRank) {
      problems.push(`${from} imports ${to}: ${fromConcern}/ sits below ${toConcern}/ (${modelLayers.join(" < ")})`);
    }
  }
  return problems;
}

/** Import circles among the program's files (not test code), each as its files in order; Tarjan's algorithm. */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (isTestCode(from) || isTestCode(to)) continue;
    graph.set(from, [...(graph.get(from) ?? []), to]);
    if (!graph.has(to)) graph.set(to, []);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}
