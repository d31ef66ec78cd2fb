// Part 4 of `npm run bench`: real-engine `pulumi preview` of generated fleets, with and without
// the policy pack. It needs a Pulumi CLI with the program's resource plugins; the preflight
// says exactly what is missing instead of hanging or guessing, and every command has a timeout.
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parse, stringify } from "yaml";
import { configKeys } from "../../infra/model/config/stack-config";
import { generatedTenants } from "./fleet-generator";
import { startPluginSampler, type PluginPeak } from "./plugin-sampler";
import { parsePolicyViolations, policyShare, standInLabel, standInScratch, writeStandInPlan, type ViolationCounts } from "./stand-in";
import { median } from "./stats";

/** What a command did. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/** Runs a command in its own process group and kills the whole group when it overruns. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; onSpawn?: (pid: number) => void },
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const start = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // The engine starts plugins and the language host; only the group kill reaches them all.
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }, options.timeoutMs);
    const finish = (code: number | null, error?: Error): void => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: error ? `${stderr}${error.message}` : stderr, ms: performance.now() - start, timedOut });
    };
    child.on("error", (error) => {
      finish(null, error);
    });
    child.on("close", (code) => {
      finish(code);
    });
  });
}

/** A resource plugin row of tools/toolchain's pins block. */
export interface PluginPin {
  name: string;
  version: string;
  module: string;
  pin: string;
}

/** Parses `tools/toolchain pins`: the PLUGINS rows, the pinned language host and the cache directory. */
export function parseToolchainPins(text: string): { plugins: PluginPin[]; hostPin: string | undefined; cache: string | undefined } {
  const block = /^PLUGINS='\n([\s\S]*?)^'/m.exec(text)?.[1] ?? "";
  const plugins = block
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [name = "", version = "", module = "", pin = ""] = line.split(/\s+/);
      return { name, version, module, pin };
    });
  return { plugins, hostPin: /^HOST_PIN=(\S+)/m.exec(text)?.[1], cache: /^cache: (.+)$/m.exec(text)?.[1] };
}

/** The pins of the plugin versions the program's provider SDKs ask for (their package.json `pulumi` block). */
export function programPlugins(repoRoot: string, plugins: readonly PluginPin[]): PluginPin[] {
  return plugins.filter((plugin) => {
    const manifest = readText(path.join(repoRoot, "node_modules", "@pulumi", plugin.name, "package.json"));
    return manifest !== undefined && (JSON.parse(manifest) as { pulumi?: { version?: string } }).pulumi?.version === plugin.version;
  });
}

/** Parses `export NAME=value` lines of `tools/toolchain env` (values as bash %q prints them: no quoting in practice). */
export function parseExports(text: string): Record<string, string> {
  const exports: Record<string, string> = {};
  for (const match of text.matchAll(/^export ([A-Z_][A-Z0-9_]*)=(.*)$/gm)) {
    exports[match[1] ?? ""] = (match[2] ?? "").replace(/\\(.)/g, "$1");
  }
  return exports;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` on a PATH string, skipping directories `skip` rejects. */
export function onPath(name: string, pathValue: string, skip: (dir: string) => boolean = () => false): string | undefined {
  return pathValue
    .split(path.delimiter)
    .filter((dir) => dir !== "" && !skip(dir))
    .map((dir) => path.join(dir, name))
    .find(executable);
}

/** How part 4 can run, or why it cannot. */
export type PreviewPreflight =
  | { ready: true; pulumi: string; env: NodeJS.ProcessEnv; source: string; notes: string[] }
  | { ready: false; reason: string; notes: string[]; pulumi?: string; env?: NodeJS.ProcessEnv };

// tools/toolchain's cache: <cache root>/pulumi-p<version>-<hash>/bin.
const toolchainCache = (dir: string): boolean => /\/pulumi-p\d[^/]*\/bin\/?$/.test(dir);

/**
 * A `pulumi` on PATH (a user's install, which fetches plugins itself) wins, as in
 * scripts/preview; otherwise the offline toolchain, which must hold every resource plugin
 * in $PULUMI_HOME because its environment forbids plugin downloads.
 */
export async function previewPreflight(repoRoot: string): Promise<PreviewPreflight> {
  const notes: string[] = [];
  const own = onPath("pulumi", process.env.PATH ?? "", toolchainCache);
  if (own && process.env.CAPI_FLEET_PULUMI !== "ours") {
    return { ready: true, pulumi: own, env: { ...process.env }, source: `pulumi on PATH (${own}); it downloads missing plugins itself`, notes };
  }
  const toolchain = path.join(repoRoot, "tools", "toolchain");
  const [envResult, pinsResult] = await Promise.all([
    runCommand(toolchain, ["env"], { cwd: repoRoot, timeoutMs: 30_000 }),
    runCommand(toolchain, ["pins"], { cwd: repoRoot, timeoutMs: 30_000 }),
  ]);
  if (envResult.code !== 0 || pinsResult.code !== 0) {
    return { ready: false, reason: `no pulumi on PATH, and tools/toolchain env/pins failed: ${(envResult.stderr || pinsResult.stderr).trim()}`, notes };
  }
  const exports = parseExports(envResult.stdout);
  const env: NodeJS.ProcessEnv = { ...process.env, ...exports };
  const { plugins, hostPin, cache } = parseToolchainPins(pinsResult.stdout);
  const bin = cache ? path.join(cache, "bin") : undefined;
  const pulumi = bin ? path.join(bin, "pulumi") : undefined;
  if (!pulumi || !executable(pulumi)) {
    return { ready: false, reason: `no pulumi on PATH, and the offline toolchain's CLI is not built (${pulumi ?? "no cache directory"}); run tools/toolchain build cli`, notes };
  }
  const cliInfo = cache ? readText(path.join(cache, "src", "cli.info")) : undefined;
  const host = /^host (\S+)/m.exec(cliInfo ?? "")?.[1];
  if (host && hostPin && !host.endsWith(`@${hostPin}`)) {
    notes.push(`the Node.js language host is the fallback ${host}: the Go module proxy refuses the pinned one (@${hostPin})`);
  }
  const pulumiHome = exports.PULUMI_HOME ?? path.join(repoRoot, ".pulumi-home");
  // Only the plugins the program's SDKs ask for (other rows serve tests, e.g. kubernetes 4.25.0).
  const missing = programPlugins(repoRoot, plugins).filter((plugin) => !executable(path.join(pulumiHome, "plugins", `resource-${plugin.name}-v${plugin.version}`, `pulumi-resource-${plugin.name}`)));
  if (missing.length > 0) {
    const refusals = await Promise.all(missing.map((plugin) => proxyRefusal(plugin)));
    const details = missing.map((plugin, index) => `${plugin.name} ${plugin.version}${refusals[index] ? ` (${refusals[index]})` : ""}`);
    return {
      ready: false,
      reason:
        `no pulumi on PATH, and the offline toolchain (${pulumi}) has no resource plugin ${details.join("; ")} in ${pulumiHome}/plugins; ` +
        "it forbids plugin downloads, so a preview would stop at the first resource. `tools/toolchain install` builds them from the Go module proxy when it serves their modules",
      notes,
      pulumi,
      env,
    };
  }
  return { ready: true, pulumi, env, source: `offline toolchain (${pulumi})`, notes };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** What the Go module proxy says about a plugin's module@pin ("" when it serves it or Go is missing). */
async function proxyRefusal(plugin: PluginPin): Promise<string> {
  if (plugin.pin === "-" || plugin.pin === "") return "no pin in tools/toolchain";
  const go = onPath("go", process.env.PATH ?? "");
  if (!go) return "";
  const result = await runCommand(go, ["mod", "download", "-json", `${plugin.module}@${plugin.pin}`], { cwd: os.tmpdir(), timeoutMs: 60_000 });
  if (result.timedOut) return "the Go module proxy did not answer within 60 s";
  const error = /"Error": "(.*)"/.exec(result.stdout)?.[1];
  if (!error) return "";
  // e.g. "…: reading https://proxy.golang.org/…: 403 Forbidden\n\tserver response: This module version is not available."
  const status = /: (\d{3} [^\\]+)(?:\\n\\tserver response: (.*))?$/.exec(error);
  return `the Go module proxy refuses ${plugin.module}@${plugin.pin.slice(0, 12)}: ${status ? `${status[1] ?? ""}${status[2] ? ` (${status[2]})` : ""}` : error}`;
}

/** The passphrase of the committed stack files' placeholder secrets (scripts/preview's default). */
export const localPassphrase = "capi-fleet-local-preview";

/** The CLI's environment for previews in a temporary project: its file backend, the local passphrase, no update check. */
export function previewEnvironment(base: NodeJS.ProcessEnv | undefined, project: string): NodeJS.ProcessEnv {
  return {
    ...base,
    PULUMI_BACKEND_URL: `file://${path.join(project, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? localPassphrase,
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
}

/**
 * A stack file for N generated tenants, from the prod stack file: its encryptionsalt and
 * encrypted placeholders are reused (every tenant token is prod's first placeholder, which a
 * preview accepts), so the stack decrypts with the local passphrase and nothing is re-encrypted.
 */
export function generatedStackFile(prodStackYaml: string, tenants: number): string {
  const file = parse(prodStackYaml) as { encryptionsalt?: string; config: Record<string, unknown> };
  const tokens = (file.config[configKeys.tenantHcloudTokens] ?? {}) as Record<string, unknown>;
  const placeholder = Object.values(tokens)[0];
  if (!placeholder) throw new Error(`the prod stack file has no ${configKeys.tenantHcloudTokens} entry to reuse`);
  // The committed tenants' registry credentials name tenants the generated fleet does not have.
  const { [configKeys.tenantRegistryCredentials]: _credentials, ...committed } = file.config;
  const config = {
    ...committed,
    [configKeys.tenants]: generatedTenants(tenants),
    [configKeys.tenantHcloudTokens]: Object.fromEntries(generatedTenants(tenants).map((tenant) => [tenant.name, placeholder])),
  };
  return stringify({ ...(file.encryptionsalt ? { encryptionsalt: file.encryptionsalt } : {}), config });
}

/** One fleet size's preview timings. */
export interface PreviewRow {
  tenants: number;
  withPolicyMs: number[];
  withoutPolicyMs: number[];
  medianWithPolicyMs: number;
  medianWithoutPolicyMs: number;
  /** (with − without) / with, from the medians. */
  policyShare: number;
  /** Stand-in mode only: what the stand-in program registered and what the pack reported. */
  standIn?: StandInRowInfo;
  /** Real mode: the resource plugin processes' peaks over every run (with and without the pack). */
  plugins?: PluginPeak;
}

/** The larger of two peaks, field by field. */
export function maxPeak(a: PluginPeak | undefined, b: PluginPeak): PluginPeak {
  if (!a) return b;
  const byPlugin = { ...a.byPlugin };
  for (const [name, peak] of Object.entries(b.byPlugin)) {
    const before = byPlugin[name];
    byPlugin[name] = before ? { processes: Math.max(before.processes, peak.processes), rssBytes: Math.max(before.rssBytes, peak.rssBytes) } : peak;
  }
  return { processes: Math.max(a.processes, b.processes), rssBytes: Math.max(a.rssBytes, b.rssBytes), byPlugin, treeRssBytes: Math.max(a.treeRssBytes, b.treeRssBytes), samples: a.samples + b.samples };
}

/** Runs a preview while sampling its plugin processes. */
export async function sampledPreview(pulumi: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<CommandResult & { plugins: PluginPeak }> {
  let sampler: { stop(): PluginPeak } | undefined;
  const result = await runCommand(pulumi, args, { ...options, onSpawn: (pid) => (sampler = startPluginSampler(pid)) });
  return { ...result, plugins: sampler?.stop() ?? { processes: 0, rssBytes: 0, byPlugin: {}, treeRssBytes: 0, samples: 0 } };
}

/** A stand-in row's resources, what was left out, and the violations of the first run with the pack. */
export interface StandInRowInfo {
  resources: number;
  collisions: number;
  skippedPulumiTypes: number;
  skippedDependencies: number;
  unknownDependencies: number;
  resourceReferences: number;
  violations: ViolationCounts;
  /** True when a later run with the pack reported different counts. */
  violationsVaried: boolean;
}

/** Part 4's result. */
export type PreviewResult =
  | { status: "ran"; mode: "real" | "stand-in"; label: string; source: string; notes: string[]; method: string; rows: PreviewRow[] }
  | { status: "not run"; reason: string; notes: string[] }
  | { status: "failed"; reason: string; notes: string[]; rows: PreviewRow[] };

export const previewMethod =
  "Wall time of `pulumi preview --non-interactive` on a new stack in a temporary file backend, run alternately with " +
  "`--policy-pack policies --policy-pack-config policies/config/prod.json` and without; policy share = (median with − median without) / median with.";

/**
 * A throwaway project: the repository's Pulumi.yaml, links to the program and its
 * dependencies, and its own stacks/ and file backend, so nothing in the checkout changes.
 */
export function temporaryProject(repoRoot: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "capi-fleet-bench-"));
  writeFileSync(path.join(dir, "Pulumi.yaml"), readFileSync(path.join(repoRoot, "Pulumi.yaml")));
  for (const entry of ["infra", "components", "scripts", "node_modules", "package.json", "tsconfig.json"]) {
    symlinkSync(path.join(repoRoot, entry), path.join(dir, entry));
  }
  mkdirSync(path.join(dir, "stacks"));
  mkdirSync(path.join(dir, "state"));
  return dir;
}

/** `--preview`: auto = real when the toolchain is complete, else stand-in; force = real even when it is not. */
export type PreviewMode = "auto" | "real" | "stand-in" | "force";
export const previewModes: readonly string[] = ["auto", "real", "stand-in", "force", "skip", "scale"];

/** Which part-4 variant a mode runs, given the preflight; undefined = none (report the reason). */
export function choosePreview(mode: PreviewMode, preflight: { ready: boolean; pulumi?: string }): "real" | "stand-in" | undefined {
  if (mode === "force") return preflight.pulumi || preflight.ready ? "real" : undefined;
  if (mode === "real") return preflight.ready ? "real" : undefined;
  if (mode === "stand-in") return preflight.pulumi || preflight.ready ? "stand-in" : undefined;
  return preflight.ready ? "real" : preflight.pulumi ? "stand-in" : undefined;
}

/** Real-program label, for symmetry with the stand-in's. */
export const realLabel = "real engine, real program (provider plugins included)";

/**
 * Runs part 4: the real program when the preflight allows it (or when forced, to see how far
 * it gets), else the stand-in program when a Pulumi CLI exists (`dump` writes a fleet's
 * registrations to a file, as parts 1–2 record them).
 */
export async function runPreviewBench(
  repoRoot: string,
  sizes: readonly number[],
  runs: number,
  options: { mode?: PreviewMode; timeoutMs?: number; log?: (line: string) => void; dump?: (tenants: number, file: string) => Promise<void> } = {},
): Promise<PreviewResult> {
  const log = options.log ?? (() => undefined);
  const mode = options.mode ?? "auto";
  const preflight = await previewPreflight(repoRoot);
  const chosen = choosePreview(mode, preflight);
  if (chosen === undefined) {
    const reason = preflight.ready ? "no Pulumi CLI" : preflight.reason;
    return { status: "not run", reason: mode === "stand-in" ? `stand-in needs a Pulumi CLI: ${reason}` : reason, notes: preflight.notes };
  }
  if (chosen === "stand-in") {
    if (!options.dump) return { status: "not run", reason: "stand-in mode needs a registration dump", notes: preflight.notes };
    const notes = preflight.ready ? [...preflight.notes] : [...preflight.notes, `the real program cannot preview here: ${preflight.reason}`];
    return runStandInBench(repoRoot, sizes, runs, { pulumi: preflight.pulumi ?? "pulumi", env: preflight.env ?? process.env, notes, dump: options.dump, log, timeoutMs: options.timeoutMs ?? 5 * 60_000 });
  }
  const pulumi = preflight.pulumi ?? "pulumi";
  const project = temporaryProject(repoRoot);
  const env = previewEnvironment(preflight.env, project);
  const timeoutMs = options.timeoutMs ?? 20 * 60_000;
  const prodStack = readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8");
  const rows: PreviewRow[] = [];
  const notes = preflight.ready ? preflight.notes : [...preflight.notes, `forced although: ${preflight.reason}`];
  const source = preflight.ready ? preflight.source : pulumi;
  const pack = policyPackFor(repoRoot, pulumi, env, preflight.notes);
  if (pack.note) notes.push(pack.note);
  try {
    for (const tenants of sizes) {
      const stack = `bench-${tenants}`;
      writeFileSync(path.join(project, "stacks", `Pulumi.${stack}.yaml`), generatedStackFile(prodStack, tenants));
      const init = await runCommand(pulumi, ["stack", "select", "--create", stack, "--non-interactive"], { cwd: project, env, timeoutMs: 120_000 });
      if (init.code !== 0) {
        return { status: "failed", reason: `pulumi stack select --create ${stack} failed: ${tail(init)}`, notes, rows };
      }
      const row: PreviewRow = { tenants, withPolicyMs: [], withoutPolicyMs: [], medianWithPolicyMs: Number.NaN, medianWithoutPolicyMs: Number.NaN, policyShare: Number.NaN };
      for (let run = 0; run < runs; run++) {
        // Alternating keeps drift on a shared machine from landing on one side only.
        for (const withPolicy of [true, false]) {
          const policyArgs = withPolicy ? ["--policy-pack", pack.dir, "--policy-pack-config", path.join(repoRoot, "policies", "config", "prod.json")] : [];
          const result = await sampledPreview(pulumi, ["preview", "--stack", stack, "--non-interactive", ...policyArgs], { cwd: project, env, timeoutMs });
          row.plugins = maxPeak(row.plugins, result.plugins);
          if (result.code !== 0) {
            const why = result.timedOut ? `timed out after ${timeoutMs / 1000} s` : `exit ${String(result.code)}:\n${policyReport(result.stdout) || tail(result)}`;
            return { status: "failed", reason: `pulumi preview (${tenants} tenants, ${withPolicy ? "with" : "without"} the policy pack) ${why}`, notes, rows };
          }
          (withPolicy ? row.withPolicyMs : row.withoutPolicyMs).push(result.ms);
          log(`preview ${tenants} tenants ${withPolicy ? "with" : "without"} policies: ${(result.ms / 1000).toFixed(1)} s, peak ${result.plugins.processes} plugin processes, ${(result.plugins.rssBytes / 2 ** 20).toFixed(0)} MiB`);
        }
      }
      row.medianWithPolicyMs = median(row.withPolicyMs);
      row.medianWithoutPolicyMs = median(row.withoutPolicyMs);
      row.policyShare = Math.max(0, (row.medianWithPolicyMs - row.medianWithoutPolicyMs) / row.medianWithPolicyMs);
      rows.push(row);
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
    pack.cleanup();
  }
  return { status: "ran", mode: "real", label: realLabel, source, notes, method: previewMethod, rows };
}

/**
 * The policy pack as `--policy-pack` takes it: the repository's policies/ with a CLI that can
 * start it, or, with the offline toolchain's fallback Node.js language host (which cannot), the
 * pack linked for the engine's legacy analyzer path (tests/support/legacy-policy-pack.ts), whose shim
 * goes on `env`'s PATH. Same pack, same rules.
 */
export function policyPackFor(repoRoot: string, pulumi: string, env: NodeJS.ProcessEnv, notes: readonly string[]): { dir: string; note?: string; cleanup(): void } {
  if (!notes.some((note) => note.includes("language host is the fallback"))) return { dir: path.join(repoRoot, "policies"), cleanup: () => undefined };
  const scratch = standInScratch(repoRoot);
  env.PATH = [scratch.bin, path.dirname(pulumi), path.dirname(process.execPath), env.PATH ?? ""].join(path.delimiter);
  // The toolchain's env ignores plugins on PATH; the pack's analyzer shim is one.
  delete env.PULUMI_IGNORE_AMBIENT_PLUGINS;
  return {
    dir: scratch.pack,
    note: "the pack runs through the engine's legacy analyzer path (the toolchain's fallback language host cannot start it through --policy-pack policies)",
    cleanup: () => {
      rmSync(scratch.root, { recursive: true, force: true });
    },
  };
}

export const standInMethod =
  "Per fleet size, the fleet is generated, validated and registered by createFleet under the test mocks (as in parts 1–2); " +
  "a plain-JS program creates one pulumi.ComponentResource per registration (type tokens of pulumi:* skipped) with the same " +
  "inputs, dependsOn mapped from the recorded dependencies, and registerOutputs(inputs). Wall time of `pulumi preview --non-interactive` " +
  "on a new stack in a temporary file backend (after one untimed warm-up pair), alternately with the pack (engine's legacy analyzer path, " +
  "`--policy-pack-config policies/config/prod.json`) and without; policy share = (median with − median without) / median with.";

async function runStandInBench(
  repoRoot: string,
  sizes: readonly number[],
  runs: number,
  options: { pulumi: string; env: NodeJS.ProcessEnv; notes: string[]; dump: (tenants: number, file: string) => Promise<void>; log: (line: string) => void; timeoutMs: number },
): Promise<PreviewResult> {
  const { pulumi, notes, log, timeoutMs } = options;
  const scratch = standInScratch(repoRoot);
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    PATH: [scratch.bin, path.dirname(pulumi), path.dirname(process.execPath), options.env.PATH ?? ""].join(path.delimiter),
    PULUMI_HOME: scratch.home,
    PULUMI_BACKEND_URL: `file://${scratch.state}`,
    PULUMI_CONFIG_PASSPHRASE: localPassphrase,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  // The toolchain's env ignores plugins on PATH; the pack's analyzer shim is one.
  delete env.PULUMI_IGNORE_AMBIENT_PLUGINS;
  const rows: PreviewRow[] = [];
  const source = `${pulumi} (stand-in program in ${path.relative(repoRoot, scratch.root)}, removed afterwards)`;
  try {
    for (const tenants of sizes) {
      const dumpFile = path.join(scratch.root, `registrations-${tenants}.json`);
      const planFile = path.join(scratch.root, `plan-${tenants}.json`);
      await options.dump(tenants, dumpFile);
      const plan = writeStandInPlan(dumpFile, planFile);
      const stack = `bench-${tenants}`;
      const init = await runCommand(pulumi, ["stack", "init", stack, "--non-interactive"], { cwd: scratch.program, env, timeoutMs: 120_000 });
      if (init.code !== 0) return { status: "failed", reason: `pulumi stack init ${stack} failed: ${tail(init)}`, notes, rows };
      const runEnv = { ...env, CAPI_FLEET_STAND_IN_PLAN: planFile };
      const row: PreviewRow = { tenants, withPolicyMs: [], withoutPolicyMs: [], medianWithPolicyMs: Number.NaN, medianWithoutPolicyMs: Number.NaN, policyShare: Number.NaN };
      let violations: ViolationCounts | undefined;
      let violationsVaried = false;
      if (rows.length === 0) {
        // Untimed warm-up (first preview of the bench: cold file cache for the CLI, the host and the pack's TypeScript).
        for (const warmArgs of [["--policy-pack", scratch.pack, "--policy-pack-config", path.join(repoRoot, "policies", "config", "prod.json")], []]) {
          const warm = await runCommand(pulumi, ["preview", "--stack", stack, "--non-interactive", ...warmArgs], { cwd: scratch.program, env: runEnv, timeoutMs });
          log(`stand-in preview warm-up ${warmArgs.length > 0 ? "with" : "without"} policies: ${(warm.ms / 1000).toFixed(1)} s (not counted)`);
        }
      }
      for (let run = 0; run < runs; run++) {
        for (const withPolicy of [true, false]) {
          const policyArgs = withPolicy ? ["--policy-pack", scratch.pack, "--policy-pack-config", path.join(repoRoot, "policies", "config", "prod.json")] : [];
          const result = await runCommand(pulumi, ["preview", "--stack", stack, "--non-interactive", ...policyArgs], { cwd: scratch.program, env: runEnv, timeoutMs });
          const found = parsePolicyViolations(result.stdout);
          // A mandatory violation fails the preview after it ran to the end; that still is a timing.
          const policyFailure = withPolicy && result.code !== 0 && !result.timedOut && found.mandatory > 0;
          if (result.code !== 0 && !policyFailure) {
            const why = result.timedOut ? `timed out after ${timeoutMs / 1000} s` : `exit ${String(result.code)}: ${tail(result)}`;
            return { status: "failed", reason: `stand-in pulumi preview (${tenants} tenants, ${withPolicy ? "with" : "without"} the policy pack) ${why}`, notes, rows };
          }
          if (withPolicy) {
            if (!result.stdout.includes("capi-fleet@v")) return { status: "failed", reason: `stand-in preview with the pack (${tenants} tenants) shows no policy pack run: ${tail(result)}`, notes, rows };
            if (violations === undefined) violations = found;
            else if (JSON.stringify(violations) !== JSON.stringify(found)) violationsVaried = true;
          }
          (withPolicy ? row.withPolicyMs : row.withoutPolicyMs).push(result.ms);
          log(`stand-in preview ${tenants} tenants (${plan.resources} components) ${withPolicy ? `with policies (${found.mandatory} mandatory, ${found.advisory} advisory)` : "without policies"}: ${(result.ms / 1000).toFixed(1)} s`);
        }
      }
      row.medianWithPolicyMs = median(row.withPolicyMs);
      row.medianWithoutPolicyMs = median(row.withoutPolicyMs);
      row.policyShare = policyShare(row.withPolicyMs, row.withoutPolicyMs);
      row.standIn = { ...plan, violations: violations ?? { mandatory: 0, advisory: 0, byRule: {} }, violationsVaried };
      rows.push(row);
      rmSync(planFile, { force: true });
    }
  } finally {
    rmSync(scratch.root, { recursive: true, force: true });
    try {
      rmdirSync(path.dirname(scratch.root));
    } catch {
      // Another run's scratch is still there.
    }
  }
  const first = rows[0]?.standIn;
  if (first) {
    notes.push(
      `stand-ins leave out the ${first.skippedPulumiTypes} pulumi:* registrations (stack, providers, the StackReference, which the engine never shows stack rules anyway: they read the deployed versions from the DeployedState component), ` +
        `so ${first.skippedDependencies} recorded dependencies on them are dropped (${first.unknownDependencies} on unknown URNs); ${first.resourceReferences} resource object(s) among inputs became strings naming them (counts for ${rows[0]?.tenants ?? 0} tenant(s))`,
    );
  }
  return { status: "ran", mode: "stand-in", label: standInLabel, source, notes, method: standInMethod, rows };
}

/**
 * The "Policies:" block of `pulumi preview` output (every violation with its message), or "" when
 * the output has none: what a failed preview must show, instead of the tail of its outputs.
 */
export function policyReport(output: string): string {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => /^Polic(y|ies)\b/.test(line));
  if (start < 0) return "";
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => /^\S/.test(line));
  return [lines[start], ...(end < 0 ? rest : rest.slice(0, end))].join("\n").trimEnd();
}

export function tail(result: CommandResult): string {
  const text = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-6).join(" | ");
  return text.length > 0 ? text : "(no output)";
}
