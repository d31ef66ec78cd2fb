// `npm run bench -- --preview scale`: real-engine previews of large generated fleets, with the
// policy pack, as one stack (up to --scale-single-max tenants) and as a sharded fleet (a
// management stack and shard stacks of --scale-per-stack tenants each: docs/architecture.md,
// *Scaling out*), sampling each preview's resource plugin processes (plugin-sampler.ts).
// Needs the real plugins (hcloud, kubernetes, command) in the toolchain's $PULUMI_HOME.
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import type { FleetPlatform } from "../../infra/model/config/shards";
import { configKeys } from "../../infra/model/config/stack-config";
import { type DeclaredResource } from "../../infra/model/contract/policy-facts";
import { generatedTenants } from "./fleet-generator";
import type { PluginPeak } from "./plugin-sampler";
import type { DumpedRegistration } from "./program-run";
import { generatedStackFile, policyPackFor, policyReport, previewEnvironment, previewPreflight, runCommand, sampledPreview, tail, temporaryProject } from "./preview";
import { componentOutputs } from "../../infra/model/contract/outputs";
import { componentTypes } from "../../infra/model/contract/component-types";

/** One stack's preview with the pack. */
export interface ScaleStackRow {
  stack: string;
  role: "single" | "management" | "shard";
  tenants: number;
  /** Wall time of each run. */
  ms: number[];
  plugins: PluginPeak;
}

/** One fleet size: the single stack (when measured) and the sharded fleet's stacks. */
export interface ScaleRow {
  tenants: number;
  single?: ScaleStackRow;
  stacks: ScaleStackRow[];
}

export type ScaleResult =
  | { status: "ran"; source: string; notes: string[]; perStack: number; singleStackMax: number; rows: ScaleRow[] }
  | { status: "not run" | "failed"; reason: string; notes: string[]; rows?: ScaleRow[] };

export const scaleMethod =
  "Per fleet size N: `pulumi preview --non-interactive` with the pack (prod's policy config) of the real program with the real plugins, " +
  "on new stacks in a temporary file backend; (a) N tenants in one stack, when N ≤ the single-stack maximum; (b) the sharded fleet: the " +
  "management stack (prod's config without tenants, listing its shards) and ⌈N / per-stack⌉ shard stacks of the generated tenants, each " +
  "reading the management stack's outputs (published by a stand-in `up` of those outputs only). Every 250 ms the CLI's process tree is " +
  "read from /proc: peak number and summed RSS of the pulumi-resource-* processes (per plugin), and the whole tree's RSS.";

/** The platform components' `declared` outputs in a registration dump, as the management stack exports them (infra/fleet.ts). */
export function declaredPlatformOf(registrations: readonly DumpedRegistration[]): DeclaredResource[] {
  return [componentTypes.clusterApi, componentTypes.caren, componentTypes.hetznerClusterClass].flatMap(
    (type) => (registrations.find((registration) => registration.type === type)?.outputs?.[componentOutputs.declared] ?? []) as DeclaredResource[],
  );
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size));
}

export async function runScaleBench(
  repoRoot: string,
  sizes: readonly number[],
  runs: number,
  options: { perStack: number; singleStackMax: number; log: (line: string) => void; dump: (tenants: number, file: string) => Promise<void>; timeoutMs?: number },
): Promise<ScaleResult> {
  const { log, perStack, singleStackMax } = options;
  const preflight = await previewPreflight(repoRoot);
  if (!preflight.ready) {
    return {
      status: "not run",
      reason: `scale mode needs the real plugins: ${preflight.reason}. Without them, \`--preview stand-in --preview-tenants 100,200,500\` gives the stand-in's numbers (an upper bound of the pack's share only; no plugin processes)`,
      notes: preflight.notes,
    };
  }
  const timeoutMs = options.timeoutMs ?? 60 * 60_000;
  const project = temporaryProject(repoRoot);
  const env: NodeJS.ProcessEnv = {
    ...previewEnvironment(preflight.env, project),
    // The shards' Kubernetes provider gets the published kubeconfig of an unreachable API server;
    // pulumi-kubernetes then answers reads (the tenants' kubeconfig Secret) as "gone" instead of failing.
    PULUMI_K8S_DELETE_UNREACHABLE: "true",
  };
  const notes = [...preflight.notes];
  const pack = policyPackFor(repoRoot, preflight.pulumi, env, preflight.notes);
  if (pack.note) notes.push(pack.note);
  const policyArgs = ["--policy-pack", pack.dir, "--policy-pack-config", path.join(repoRoot, "policies", "config", "prod.json")];
  const prodYaml = readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8");
  const prod = parse(prodYaml) as { encryptionsalt?: string; config: Record<string, unknown> };
  const salt = prod.encryptionsalt ? { encryptionsalt: prod.encryptionsalt } : {};
  const rows: ScaleRow[] = [];

  // What the management stack publishes for its shards: the platform's declared facts, from the
  // program under the mocks (one tenant; the platform does not depend on the tenants).
  const dumpFile = path.join(project, "platform-dump.json");
  await options.dump(1, dumpFile);
  const declared = declaredPlatformOf(JSON.parse(readFileSync(dumpFile, "utf8")) as DumpedRegistration[]);
  rmSync(dumpFile, { force: true });
  const management = prod.config[configKeys.management] as { deletionProtection?: boolean; adminCidrs?: string[] };

  // A second project of the same name publishes the management stack's outputs by `up` (it
  // registers nothing else), so the shards' StackReference reads them from the backend.
  const outputsProject = path.join(project, "management-outputs");
  mkdirSync(outputsProject);
  writeFileSync(path.join(outputsProject, "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
  writeFileSync(path.join(outputsProject, "package.json"), '{ "name": "capi-fleet-bench-management-outputs", "main": "index.js" }\n');
  writeFileSync(path.join(outputsProject, "index.js"), "module.exports = JSON.parse(process.env.CAPI_FLEET_BENCH_OUTPUTS);\n");
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(outputsProject, "node_modules"));

  const preview = async (stack: string, role: ScaleStackRow["role"], tenants: number): Promise<ScaleStackRow | string> => {
    const init = await runCommand(preflight.pulumi, ["stack", "select", "--create", stack, "--non-interactive"], { cwd: project, env, timeoutMs: 120_000 });
    if (init.code !== 0) return `pulumi stack select --create ${stack} failed: ${tail(init)}`;
    const row: ScaleStackRow = { stack, role, tenants, ms: [], plugins: { processes: 0, rssBytes: 0, byPlugin: {}, treeRssBytes: 0, samples: 0 } };
    for (let run = 0; run < runs; run++) {
      const result = await sampledPreview(preflight.pulumi, ["preview", "--stack", stack, "--non-interactive", ...policyArgs], { cwd: project, env, timeoutMs });
      if (result.code !== 0) {
        return `pulumi preview ${stack} (${tenants} tenants, with the pack) ${result.timedOut ? `timed out after ${timeoutMs / 1000} s` : `exit ${String(result.code)}:\n${[policyReport(result.stdout), `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-40).join("\n")].filter(Boolean).join("\n")}`}`;
      }
      row.ms.push(result.ms);
      if (result.plugins.rssBytes >= row.plugins.rssBytes) row.plugins = result.plugins;
      const hcloud = result.plugins.byPlugin.hcloud;
      log(
        `scale ${stack} (${role}, ${tenants} tenants): ${(result.ms / 1000).toFixed(1)} s, peak ${result.plugins.processes} plugin processes (hcloud ${hcloud?.processes ?? 0}), ` +
          `${(result.plugins.rssBytes / 2 ** 20).toFixed(0)} MiB plugin RSS, ${(result.plugins.treeRssBytes / 2 ** 20).toFixed(0)} MiB tree`,
      );
    }
    return row;
  };

  try {
    for (const size of sizes) {
      const row: ScaleRow = { tenants: size, stacks: [] };
      if (size <= singleStackMax) {
        const stack = `scale-${size}-single`;
        writeFileSync(path.join(project, "stacks", `Pulumi.${stack}.yaml`), generatedStackFile(prodYaml, size));
        const single = await preview(stack, "single", size);
        if (typeof single === "string") return { status: "failed", reason: single, notes, rows };
        row.single = single;
      }
      const tenants = generatedTenants(size);
      const groups = chunks(tenants, perStack);
      const managementStack = `scale-${size}-management`;
      const shardStacks = groups.map((_, index) => `scale-${size}-shard-${index + 1}`);
      // The management stack's outputs, as after its `up`: no shard has run yet (fleetTenants empty).
      const platform: FleetPlatform = { fleetName: `capi-fleet-${managementStack}`, deletionProtection: management.deletionProtection ?? true, adminCidrs: management.adminCidrs ?? [], gitops: configKeys.gitops in prod.config, declared, mirrors: {} };
      writeFileSync(path.join(outputsProject, `Pulumi.${managementStack}.yaml`), stringify(salt));
      const created = await runCommand(preflight.pulumi, ["stack", "select", "--create", managementStack, "--non-interactive"], { cwd: outputsProject, env, timeoutMs: 120_000 });
      const published = await runCommand(preflight.pulumi, ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", managementStack], {
        cwd: outputsProject,
        env: { ...env, CAPI_FLEET_BENCH_OUTPUTS: JSON.stringify({ managementKubeconfig: "apiVersion: v1\nkind: Config\nclusters:\n- name: unreachable\n  cluster:\n    server: https://127.0.0.1:9\ncontexts:\n- name: unreachable\n  context:\n    cluster: unreachable\n    user: unreachable\ncurrent-context: unreachable\nusers:\n- name: unreachable\n  user:\n    token: bench\n", fleetPlatform: platform, fleetTenants: {} }) },
        timeoutMs: 300_000,
      });
      if (created.code !== 0 || published.code !== 0) return { status: "failed", reason: `publishing ${managementStack}'s outputs failed: ${tail(created.code !== 0 ? created : published)}`, notes, rows };
      const { [configKeys.tenantHcloudTokens]: tokens, [configKeys.tenantRegistryCredentials]: _credentials, ...committed } = prod.config;
      writeFileSync(path.join(project, "stacks", `Pulumi.${managementStack}.yaml`), stringify({ ...salt, config: { ...committed, [configKeys.tenants]: [], [configKeys.shards]: shardStacks } }));
      // A StackReference to a stack that does not exist fails the read (the engine's "unknown
      // stack"), so the shards exist before the management stack lists them.
      for (const stack of shardStacks) {
        const shardInit = await runCommand(preflight.pulumi, ["stack", "init", stack, "--non-interactive"], { cwd: project, env, timeoutMs: 120_000 });
        if (shardInit.code !== 0) return { status: "failed", reason: `pulumi stack init ${stack} failed: ${tail(shardInit)}`, notes, rows };
      }
      const managementRow = await preview(managementStack, "management", 0);
      if (typeof managementRow === "string") return { status: "failed", reason: managementRow, notes, rows };
      row.stacks.push(managementRow);
      const placeholder = Object.values((tokens ?? {}) as Record<string, unknown>)[0];
      for (const [index, group] of groups.entries()) {
        const stack = shardStacks[index] ?? `scale-${size}-shard-${index + 1}`;
        const config = {
          [configKeys.managementStack]: managementStack,
          [configKeys.tenants]: group,
          [configKeys.tenantHcloudTokens]: Object.fromEntries(group.map((tenant) => [tenant.name, placeholder])),
        };
        writeFileSync(path.join(project, "stacks", `Pulumi.${stack}.yaml`), stringify({ ...salt, config }));
        const shard = await preview(stack, "shard", group.length);
        if (typeof shard === "string") return { status: "failed", reason: shard, notes, rows };
        row.stacks.push(shard);
      }
      rows.push(row);
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
    pack.cleanup();
  }
  return { status: "ran", source: preflight.source, notes, perStack, singleStackMax, rows };
}
