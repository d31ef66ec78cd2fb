// Part 4 of `npm run bench` where the fleet's real program cannot preview (no provider plugins):
// a stand-in program registers the fleet's recorded resources as components (same type tokens,
// inputs and dependencies) and the real engine previews it with and without the policy pack.
// No provider plugins run, so provider time is absent and the policy share is an upper bound.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type DeclaredResource } from "../../infra/model/contract/policy-facts";
import { linkLegacyPolicyPack } from "../../tests/support/legacy-policy-pack";
import type { DumpedRegistration } from "./program-run";
import { median } from "./stats";
import { componentOutputs } from "../../infra/model/contract/outputs";

export const standInLabel =
  "real engine, stand-in program: the fleet's registered resources as components (same type tokens, inputs, dependencies); " +
  "no provider plugins, so provider time is absent and the policy share is an upper bound of the share with real providers";

/** One stand-in component, in registration order; dependsOn indexes earlier entries. */
export interface StandInEntry {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  dependsOn: number[];
  /**
   * A fleet component's registered outputs, its `declared` children named by entry index
   * (stand-ins get new URNs, so the program puts theirs back in).
   */
  outputs?: { readonly other: Record<string, unknown>; readonly declared: { entry: number; props: unknown }[] };
}

/** What the stand-in program creates, and what it left out. */
export interface StandInPlan {
  entries: StandInEntry[];
  /** Registrations whose (type, name) was taken by an earlier one: renamed `<name>-<n>`. */
  collisions: number;
  /** Registrations of `pulumi:` types (stack, providers, stack references): not stood in for. */
  skippedPulumiTypes: number;
  /** Dependency URNs on skipped pulumi:* registrations: dropped. */
  skippedDependencies: number;
  /** Dependency URNs that name no earlier registration at all: dropped. */
  unknownDependencies: number;
  /** Resource objects among the inputs (e.g. a component's provider), replaced by a string naming them. */
  resourceReferences: number;
}

/** The SDK's marker on Resource objects (what the mocks recorded when a component got one as an input). */
const resourceMarker = "__pulumiResource";

/** A deep copy of inputs with resource objects replaced by "<resource TYPE NAME>"; counts them. */
export function withoutResourceObjects(value: unknown, counter: { count: number }): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutResourceObjects(item, counter));
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  if (record[resourceMarker] === true) {
    counter.count++;
    return `<resource ${String(record.__pulumiType)} ${String(record.__name)}>`;
  }
  return Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, withoutResourceObjects(inner, counter)]));
}

/**
 * Maps recorded registrations to stand-in components. Components have no parent here, so
 * resources that differed only by parent collide on (type, name); the later one gets a suffix.
 */
export function standInPlan(registrations: readonly DumpedRegistration[]): StandInPlan {
  const entries: StandInEntry[] = [];
  const indexByUrn = new Map<string, number>();
  const taken = new Set<string>();
  let collisions = 0;
  let skippedPulumiTypes = 0;
  let skippedDependencies = 0;
  let unknownDependencies = 0;
  const skippedUrns = new Set<string>();
  const references = { count: 0 };
  for (const registration of registrations) {
    if (registration.type.startsWith("pulumi:")) {
      skippedPulumiTypes++;
      skippedUrns.add(registration.urn);
      continue;
    }
    let name = registration.name;
    const key = (candidate: string): string => `${registration.type}\u0000${candidate}`;
    if (taken.has(key(name))) {
      collisions++;
      let suffix = 2;
      while (taken.has(key(`${registration.name}-${suffix}`))) suffix++;
      name = `${registration.name}-${suffix}`;
    }
    taken.add(key(name));
    const dependsOn: number[] = [];
    for (const urn of new Set(registration.dependencies)) {
      const index = indexByUrn.get(urn);
      if (index !== undefined) dependsOn.push(index);
      else if (skippedUrns.has(urn)) skippedDependencies++;
      else unknownDependencies++;
    }
    indexByUrn.set(registration.urn, entries.length);
    entries.push({ type: registration.type, name, inputs: withoutResourceObjects(registration.inputs, references) as Record<string, unknown>, dependsOn });
  }
  // Components register their outputs after their children exist: resolve `declared` to entries.
  for (const registration of registrations) {
    const entry = entries[indexByUrn.get(registration.urn) ?? -1];
    if (!entry || registration.outputs === undefined) continue;
    const { [componentOutputs.declared]: declared, ...other } = registration.outputs;
    const children = Array.isArray(declared) ? (declared as DeclaredResource[]) : [];
    entry.outputs = {
      other,
      declared: children.flatMap(({ urn, props }) => {
        const child = indexByUrn.get(urn);
        return child === undefined ? [] : [{ entry: child, props }];
      }),
    };
  }
  return { entries, collisions, skippedPulumiTypes, skippedDependencies, unknownDependencies, resourceReferences: references.count };
}

/** Policy violations in `pulumi preview` output, by level and by rule. */
export interface ViolationCounts {
  mandatory: number;
  advisory: number;
  byRule: Record<string, { level: "mandatory" | "advisory"; count: number }>;
}

/** Counts the `[mandatory] rule-name` / `[advisory] rule-name` lines the CLI prints under "Policies:". */
export function parsePolicyViolations(output: string): ViolationCounts {
  const counts: ViolationCounts = { mandatory: 0, advisory: 0, byRule: {} };
  for (const match of output.matchAll(/\[(mandatory|advisory)\]\s+([A-Za-z0-9_.-]+)/g)) {
    const level = match[1] as "mandatory" | "advisory";
    const rule = match[2] ?? "";
    counts[level]++;
    const entry = (counts.byRule[rule] ??= { level, count: 0 });
    entry.count++;
  }
  return counts;
}

/** (median with − median without) / median with; 0 when the pack made no measurable difference. */
export function policyShare(withPolicyMs: readonly number[], withoutPolicyMs: readonly number[]): number {
  const withMedian = median(withPolicyMs);
  return Math.max(0, (withMedian - median(withoutPolicyMs)) / withMedian);
}

/** The stand-in program (plain JS), which reads the plan named by $CAPI_FLEET_STAND_IN_PLAN. */
export function standInProgramFile(repoRoot: string): string {
  return path.join(repoRoot, "tools", "benchmarks", "stand-in-program.cjs");
}

/**
 * A scratch project under node_modules/.cache (so the program resolves @pulumi/pulumi): the
 * stand-in program, the pack started through the engine's legacy analyzer path, and a
 * `pulumi-analyzer-policy-nodejs-legacy` shim that runs @pulumi/pulumi's run-policy-pack.
 */
export function standInScratch(repoRoot: string): { root: string; program: string; pack: string; bin: string; state: string; home: string } {
  const parent = path.join(repoRoot, "node_modules", ".cache", "capi-fleet-bench-preview");
  mkdirSync(parent, { recursive: true });
  const root = mkdtempSync(path.join(parent, "run-"));
  const dirs = { program: path.join(root, "program"), pack: path.join(root, "pack"), bin: path.join(root, "bin"), state: path.join(root, "state"), home: path.join(root, "home") };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { mode: 0o700 });
  writeFileSync(path.join(dirs.program, "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
  symlinkSync(standInProgramFile(repoRoot), path.join(dirs.program, "index.js"));
  writeFileSync(path.join(dirs.program, "package.json"), '{ "name": "capi-fleet-bench-stand-in", "main": "index.js" }\n');
  linkLegacyPolicyPack(repoRoot, dirs.pack, dirs.bin);
  return { root, ...dirs };
}

/** Writes the plan of a dump (then removes the dump); returns what the plan counted. */
export function writeStandInPlan(dumpFile: string, planFile: string): Omit<StandInPlan, "entries"> & { resources: number } {
  const plan = standInPlan(JSON.parse(readFileSync(dumpFile, "utf8")) as DumpedRegistration[]);
  writeFileSync(planFile, JSON.stringify(plan), { mode: 0o600 });
  rmSync(dumpFile, { force: true });
  const { entries, ...counts } = plan;
  return { resources: entries.length, ...counts };
}
