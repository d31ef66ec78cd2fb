// `npm run bench`: fleet-scale benchmarks of the program (mock registration), the policy pack,
// the upgrade planner and, where a full Pulumi toolchain exists, real-engine previews. Every
// sample runs in a fresh process (Pulumi's runtime keeps per-process state, and peak heap
// must not carry over); figures are medians. Writes a JSON report and prints a table.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import type { CapiReconcileReport } from "./benchmarks/capi-reconcile-report";
import type { PlannerResult } from "./benchmarks/planner";
import { previewMethod, previewModes, runPreviewBench, type PreviewMode, type PreviewResult } from "./benchmarks/preview";
import type { ProgramSample } from "./benchmarks/program-run";
import { runScaleBench, scaleMethod, type ScaleResult, type ScaleStackRow } from "./benchmarks/scale";
import { tenantsPerStack } from "../infra/model/config/shards";
import { benchExitCode, checkTargets, formatMarkdownTable, formatTable, mebibyte, medianOf, type TargetCheck } from "./benchmarks/stats";

const execFileAsync = promisify(execFile);

const usage = `usage: npm run bench -- [--runs N] [--tenants 1,10,100,500] [--plans 100000] [--preview-tenants 1,10,50] [--preview auto|real|stand-in|skip|force|scale] [--capi-tenants 1,10,50] [--capi run|skip] [--out FILE]
       npm run bench -- --preview scale [--preview-tenants 100,200,500] [--scale-per-stack N] [--scale-single-max N] [--runs 1]

  --runs             samples per figure (median reported; at least 3 for the report)
  --tenants          generated fleet sizes for parts 1 and 2
  --plans            random (control plane, target, workers) triples per planner sample
  --preview-tenants  fleet sizes for the real-engine preview (part 4)
  --preview          auto (default): real when the toolchain has the provider plugins, else stand-in;
                     real: the fleet's program only; stand-in: the registered resources as components
                     (no provider plugins; policy share is an upper bound); skip; force: real, try anyway;
                     scale: only the scale previews (real plugins): each size in one stack (up to
                     --scale-single-max, default 100) and as a management stack plus shard stacks of
                     --scale-per-stack tenants (default: the validation's recommended limit), with the
                     pack, sampling plugin processes and RSS; --preview-tenants defaults to 100,200,500
  --capi-tenants     fleet sizes CAPI's own topology controller reconciles (part 5; builds CAPI on first use)
  --capi             run (default) or skip part 5
  --out              report path (default node_modules/.cache/capi-fleet-bench/bench-report.json)`;

const repoRoot = path.resolve(__dirname, "..");
/** The default report's directory, and where part 5 leaves its figures for this process. */
const benchCache = path.join(repoRoot, "node_modules", ".cache", "capi-fleet-bench");

function sizes(text: string): number[] {
  const values = text.split(",").map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 1)) throw new Error(`not a list of tenant counts: ${text}`);
  return values;
}

/**
 * Runs one sample program (tools/benchmarks/<script>) in a fresh node and parses the JSON line it
 * prints. The node flags this process runs with (scripts/run-ts's preload of tsx) run it as well.
 */
async function sample<T>(script: string, args: readonly string[]): Promise<T> {
  const { stdout } = await execFileAsync(process.execPath, [...process.execArgv, path.join(repoRoot, "tools", "benchmarks", script), ...args], {
    cwd: repoRoot,
    maxBuffer: 64 * mebibyte,
    timeout: 10 * 60_000,
  });
  const line = stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(line) as T;
}

async function machineInfo(): Promise<Record<string, unknown>> {
  const git = async (...args: string[]): Promise<string> => {
    try {
      return (await execFileAsync("git", args, { cwd: repoRoot })).stdout.trim();
    } catch {
      return "unknown";
    }
  };
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? "unknown",
    cpus: cpus.length,
    availableParallelism: os.availableParallelism(),
    totalMemoryBytes: os.totalmem(),
    loadAverageAtStart: os.loadavg(),
    node: process.version,
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    gitCommit: await git("rev-parse", "HEAD"),
    gitDirty: (await git("status", "--porcelain", "--untracked-files=no")) !== "",
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const milliseconds = (ms: number, digits = 1): string => `${ms.toFixed(digits)} ms`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string", default: "3" },
      tenants: { type: "string", default: "1,10,100,500" },
      plans: { type: "string", default: "100000" },
      "preview-tenants": { type: "string", default: "1,10,50" },
      preview: { type: "string", default: "auto" },
      "capi-tenants": { type: "string", default: "1,10,50" },
      capi: { type: "string", default: "run" },
      "scale-per-stack": { type: "string", default: String(tenantsPerStack.recommended) },
      "scale-single-max": { type: "string", default: "100" },
      out: { type: "string", default: path.join(benchCache, "bench-report.json") },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const runs = Number(values.runs);
  const fleetSizes = sizes(values.tenants);
  const previewSizes = sizes(values["preview-tenants"]);
  const capiSizes = sizes(values["capi-tenants"]);
  const plans = Number(values.plans);
  if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(plans) || plans < 1 || !previewModes.includes(values.preview) || !["run", "skip"].includes(values.capi)) {
    console.error(usage);
    return 2;
  }
  const started = Date.now();
  const log = (line: string): void => {
    console.error(`bench: ${line}`);
  };
  const machine = await machineInfo();
  if (values.preview === "scale") {
    const perStack = Number(values["scale-per-stack"]);
    const singleStackMax = Number(values["scale-single-max"]);
    if (!Number.isInteger(perStack) || perStack < 1 || !Number.isInteger(singleStackMax) || singleStackMax < 0) {
      console.error(usage);
      return 2;
    }
    const scaleSizes = argv.includes("--preview-tenants") ? previewSizes : [100, 200, 500];
    const scale = await runScaleBench(repoRoot, scaleSizes, runs, {
      perStack,
      singleStackMax,
      log,
      dump: async (size, file) => {
        await sample<ProgramSample>("program-run.ts", [String(size), "--dump", file]);
      },
    });
    const section = scaleSection(scale);
    const report = { generatedAt: new Date().toISOString(), command: `npm run bench -- ${argv.join(" ")}`.trim(), runsPerFigure: runs, machine, method: scaleMethod, scale, markdown: section.markdown, benchSeconds: (Date.now() - started) / 1000 };
    mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(section.text);
    console.log(`\nReport: ${path.resolve(values.out)} (${report.benchSeconds.toFixed(0)} s)`);
    return scale.status === "ran" ? 0 : 1;
  }

  // Parts 1 and 2: one process per sample; rounds go through every size so drift on a shared
  // machine spreads over all of them.
  const programSamples = new Map<number, ProgramSample[]>(fleetSizes.map((size) => [size, []]));
  for (let run = 1; run <= runs; run++) {
    for (const size of fleetSizes) {
      const result = await sample<ProgramSample>("program-run.ts", [String(size)]);
      programSamples.get(size)?.push(result);
      log(`program ${size} tenants, run ${run}/${runs}: ${seconds(result.registrationMs)} registration (CPU ${seconds(result.registrationCpuMs)}, load ${result.loadAverage.toFixed(1)}), ${(result.peakHeapBytes / mebibyte).toFixed(0)} MiB heap, ${milliseconds(result.policyMs)} policies`);
    }
  }

  // Part 3.
  const plannerSamples: PlannerResult[] = [];
  for (let run = 1; run <= runs; run++) {
    const result = await sample<PlannerResult>("planner-run.ts", [String(plans)]);
    plannerSamples.push(result);
    log(`planner run ${run}/${runs}: ${Math.round(result.plansPerSecond).toLocaleString("en-US")} plans/s`);
  }

  // Part 4.
  const preview: PreviewResult =
    values.preview === "skip"
      ? { status: "not run", reason: "skipped (--preview skip)", notes: [] }
      : await runPreviewBench(repoRoot, previewSizes, runs, {
          mode: values.preview as PreviewMode,
          log,
          dump: async (size, file) => {
            await sample<ProgramSample>("program-run.ts", [String(size), "--dump", file]);
          },
        });

  // Part 5: CAPI's own controllers in the loop (tools/benchmarks/capi-reconcile.run.ts), one
  // process for all sizes and runs (the managers start once; each sample uses fresh namespaces).
  let capiReconcile: CapiPart;
  if (values.capi === "skip") {
    capiReconcile = { status: "not run", reason: "skipped (--capi skip)" };
  } else {
    const capiOut = path.join(benchCache, "capi-reconcile.json");
    mkdirSync(benchCache, { recursive: true });
    rmSync(capiOut, { force: true });
    try {
      await execFileAsync(path.join(repoRoot, "node_modules", ".bin", "vitest"), ["run", "--config", "tools/benchmarks/capi-reconcile.vitest.config.mjs"], {
        cwd: repoRoot,
        env: { ...process.env, CAPI_BENCH_TENANTS: capiSizes.join(","), CAPI_BENCH_RUNS: String(runs), CAPI_BENCH_OUT: capiOut },
        maxBuffer: 256 * mebibyte,
        timeout: 4 * 60 * 60_000,
      });
      const result = JSON.parse(readFileSync(capiOut, "utf8")) as CapiReconcileReport;
      capiReconcile = { ...result, rows: result.rows.map((row) => ({ ...row, medianMs: medianOf(row.samplesMs, (ms) => ms) })) };
      for (const row of capiReconcile.rows) log(`CAPI reconcile ${row.tenants} tenants: median ${seconds(row.medianMs)} (${row.samplesMs.map((ms) => seconds(ms)).join(", ")})`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      capiReconcile = { status: "not run", reason: `the CAPI run failed: ${message.split("\n").slice(0, 3).join(" ")}` };
      log(capiReconcile.reason);
    }
  }

  const registration = fleetSizes.map((size) => {
    const samples = programSamples.get(size) ?? [];
    return {
      tenants: size,
      resources: samples[0]?.resources ?? 0,
      medianRegistrationMs: medianOf(samples, (s) => s.registrationMs),
      medianRegistrationCpuMs: medianOf(samples, (s) => s.registrationCpuMs),
      medianPeakHeapBytes: medianOf(samples, (s) => s.peakHeapBytes),
      medianMaxRssBytes: medianOf(samples, (s) => s.maxRssBytes),
      dependencyEdges: samples[0]?.dependencyEdges ?? 0,
      samples: samples.map((s) => ({ registrationMs: s.registrationMs, registrationCpuMs: s.registrationCpuMs, loadAverage: s.loadAverage, peakHeapBytes: s.peakHeapBytes, maxRssBytes: s.maxRssBytes })),
    };
  });
  const policies = fleetSizes.map((size) => {
    const samples = programSamples.get(size) ?? [];
    const resources = samples[0]?.resources ?? 0;
    const medianMs = medianOf(samples, (s) => s.policyMs);
    const byRule = Object.keys(samples[0]?.policyMsByRule ?? {}).map((rule) => ({ rule, medianMs: medianOf(samples, (s) => s.policyMsByRule[rule] ?? 0) }));
    return {
      tenants: size,
      resources,
      medianMs,
      medianMsPerResource: medianMs / resources,
      samplesMs: samples.map((s) => s.policyMs),
      violations: samples[0]?.violations,
      slowestRules: byRule.sort((a, b) => b.medianMs - a.medianMs).slice(0, 5),
    };
  });
  const lastPlanner = plannerSamples[plannerSamples.length - 1];
  const planner = lastPlanner && {
    triples: lastPlanner.triples,
    versionsListed: lastPlanner.versionsListed,
    medianPlansPerSecond: medianOf(plannerSamples, (s) => s.plansPerSecond),
    medianPlanMs: medianOf(plannerSamples, (s) => s.planMs),
    samplesPlansPerSecond: plannerSamples.map((s) => s.plansPerSecond),
    planned: lastPlanner.planned,
    errors: lastPlanner.errors,
    unexpectedErrors: Math.max(...plannerSamples.map((s) => s.unexpectedErrors)),
    rollouts: lastPlanner.rollouts,
  };

  const checks: TargetCheck[] = checkTargets({
    registrationMs: new Map(registration.map((row) => [row.tenants, row.medianRegistrationMs])),
    peakHeapBytes: new Map(registration.map((row) => [row.tenants, row.medianPeakHeapBytes])),
    policyMsPerResource: new Map(policies.map((row) => [row.tenants, row.medianMsPerResource])),
    plansPerSecond: planner?.medianPlansPerSecond,
    rolloutMisses: planner ? planner.rollouts.aboveLowerBound + planner.rollouts.belowLowerBound + planner.unexpectedErrors : undefined,
    previewPolicyShare: preview.status === "ran" ? new Map(preview.rows.map((row) => [row.tenants, row.policyShare])) : undefined,
    previewStandIn: preview.status === "ran" && preview.mode === "stand-in",
  });

  const tables = renderTables(registration, policies, planner, preview, checks);
  const capiSection = capiSectionOf(capiReconcile);
  tables.text += `\n\n${capiSection.title}\n${capiSection.text}`;
  tables.markdown += `\n\n**${capiSection.title}**\n\n${capiSection.markdown}`;
  const report = {
    generatedAt: new Date().toISOString(),
    command: `npm run bench -- ${argv.join(" ")}`.trim(),
    runsPerFigure: runs,
    machine,
    registration,
    policies,
    planner,
    preview: preview.status === "ran" ? preview : { ...preview, method: previewMethod },
    capiReconcile,
    targets: checks,
    markdown: tables.markdown,
    benchSeconds: (Date.now() - started) / 1000,
  };
  mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);

  console.log(`Machine: ${String(machine.cpuModel)} × ${String(machine.cpus)}, ${(os.totalmem() / 1024 / mebibyte).toFixed(1)} GiB, Node ${process.version}, ${String(machine.os)}, commit ${String(machine.gitCommit).slice(0, 12)}${machine.gitDirty ? " (dirty)" : ""}`);
  console.log(`Medians of ${runs} run(s), each sample in a fresh process.\n`);
  console.log(tables.text);
  console.log(`\nReport: ${path.resolve(values.out)} (${report.benchSeconds.toFixed(0)} s)`);
  return benchExitCode(checks, preview.status);
}

type Row = readonly string[];

const mib = (bytes: number): string => `${(bytes / mebibyte).toFixed(0)} MiB`;

/** The scale previews as a table: per fleet size and shape, the worst stack and the sums. */
function scaleSection(scale: ScaleResult): { text: string; markdown: string } {
  const title = "4 (scale). pulumi preview with the pack, real plugins: one stack, and the same fleet sharded";
  if (scale.status !== "ran") {
    const text = [`${title}: ${scale.status}`, `reason: ${scale.reason}`, ...scale.notes.map((note) => `note: ${note}`)].join("\n");
    return { text, markdown: text };
  }
  const header = ["tenants", "shape", "stacks", "slowest stack", "all stacks", "per tenant (slowest shard)", "peak plugin RSS (worst stack)", "plugin processes (hcloud)", "process tree RSS"];
  const hcloud = (row: ScaleStackRow) => row.plugins.byPlugin.hcloud?.processes ?? 0;
  const medianMs = (row: ScaleStackRow) => medianOf(row.ms, (ms) => ms);
  const rows: Row[] = scale.rows.flatMap((size) => {
    const out: Row[] = [];
    if (size.single) {
      const single = size.single;
      out.push([String(size.tenants), "one stack", "1", seconds(medianMs(single)), seconds(medianMs(single)), seconds(medianMs(single) / size.tenants), mib(single.plugins.rssBytes), `${single.plugins.processes} (${hcloud(single)})`, mib(single.plugins.treeRssBytes)]);
    }
    const worst = (pick: (row: ScaleStackRow) => number) => size.stacks.reduce((best, row) => (pick(row) > pick(best) ? row : best));
    const slowest = worst(medianMs);
    const shards = size.stacks.filter((row) => row.role === "shard");
    const slowestShard = shards.reduce((best, row) => (medianMs(row) > medianMs(best) ? row : best));
    const heaviest = worst((row) => row.plugins.rssBytes);
    out.push([
      String(size.tenants),
      `management + ${shards.length} shards of ≤ ${scale.perStack}`,
      String(size.stacks.length),
      `${seconds(medianMs(slowest))} (${slowest.role})`,
      seconds(size.stacks.reduce((sum, row) => sum + medianMs(row), 0)),
      seconds(medianMs(slowestShard) / slowestShard.tenants),
      `${mib(heaviest.plugins.rssBytes)} (${heaviest.role}, ${heaviest.tenants} tenants)`,
      `${heaviest.plugins.processes} (${hcloud(heaviest)})`,
      mib(worst((row) => row.plugins.treeRssBytes).plugins.treeRssBytes),
    ]);
    return out;
  });
  const perPlugin = scale.rows
    .flatMap((size) => [...(size.single ? [size.single] : []), ...size.stacks])
    .map((row) => `${row.stack}: ${Object.entries(row.plugins.byPlugin).map(([name, peak]) => `${name} ${peak.processes} × = ${mib(peak.rssBytes)}`).join(", ")}; ${row.ms.map((ms) => seconds(ms)).join(", ")}`);
  const notes = [...scale.notes.map((note) => `note: ${note}`), "per stack (peak processes and RSS by plugin; each run's time):", ...perPlugin];
  return {
    text: [title, formatTable(header, rows), ...notes].join("\n"),
    markdown: [`**${title}**`, "", formatMarkdownTable(header, rows), "", ...notes.map((line) => `${line}  `)].join("\n"),
  };
}

/** Part 5's outcome: each size's samples with their median, or why it did not run. */
type CapiPart = (Omit<CapiReconcileReport, "rows"> & { rows: (CapiReconcileReport["rows"][number] & { medianMs: number })[] }) | { status: "not run"; reason: string };

/** Part 5 as a table: median time to all TopologyReconciled=True and the growth between sizes. */
function capiSectionOf(
  capi: CapiPart,
): { title: string; text: string; markdown: string } {
  const title = "5. CAPI's own topology controller (tests/support/capi-in-the-loop.ts): apply N tenants, time to every Cluster TopologyReconciled=True";
  if ("status" in capi) return { title, text: `not run: ${capi.reason}`, markdown: `not run: ${capi.reason}` };
  const header = ["tenants", "objects", "median to all reconciled", "of which apply", "per tenant", "growth vs previous size", "samples"];
  const rows = capi.rows.map((row, index) => {
    const previous = capi.rows[index - 1];
    return [
      String(row.tenants),
      String(row.objects),
      seconds(row.medianMs),
      seconds(medianOf(row.applySamplesMs, (ms) => ms)),
      seconds(row.medianMs / row.tenants),
      previous ? `×${(row.medianMs / previous.medianMs).toFixed(1)} for ×${(row.tenants / previous.tenants).toFixed(0)} tenants` : "-",
      row.samplesMs.map((ms) => seconds(ms)).join(", "),
    ];
  });
  const note = `${capi.capiVersion}; managers started in ${seconds(capi.startupMs)} (once, not in the figures)`;
  return { title, text: `${formatTable(header, rows)}\n${note}`, markdown: `${formatMarkdownTable(header, rows)}\n\n${note}` };
}

/** "2 mandatory (rule ×2), 1 advisory (rule)" */
function violationText(counts: { mandatory: number; advisory: number; byRule: Record<string, { level: string; count: number }> }): string {
  const rules = (level: string): string =>
    Object.entries(counts.byRule)
      .filter(([, entry]) => entry.level === level)
      .map(([rule, entry]) => (entry.count > 1 ? `${rule} ×${entry.count}` : rule))
      .join(", ");
  const part = (count: number, level: string): string => `${count} ${level}${count > 0 ? ` (${rules(level)})` : ""}`;
  return `${part(counts.mandatory, "mandatory")}, ${part(counts.advisory, "advisory")}`;
}

function renderTables(
  registration: readonly { tenants: number; resources: number; medianRegistrationMs: number; medianRegistrationCpuMs: number; medianPeakHeapBytes: number; medianMaxRssBytes: number }[],
  policies: readonly { tenants: number; medianMs: number; medianMsPerResource: number; violations?: { mandatory: number; advisory: number } | undefined; slowestRules: { rule: string; medianMs: number }[] }[],
  planner: { triples: number; medianPlansPerSecond: number; planned: number; errors: Record<string, number>; rollouts: PlannerResult["rollouts"] } | undefined,
  preview: PreviewResult,
  checks: readonly TargetCheck[],
): { text: string; markdown: string } {
  // A section is a table, or plain text when there is nothing to tabulate.
  const sections: ({ title: string; header: Row; rows: Row[]; after?: string } | { title: string; text: string })[] = [];
  sections.push({
    title: "1+2. Program registration under mocks, then every policy over the registered resources",
    header: ["tenants", "resources", "registration", "(CPU)", "peak heap", "max RSS", "policies", "per resource", "violations", "slowest rule"],
    rows: registration.map((row, index) => {
      const policy = policies[index];
      const slowest = policy?.slowestRules[0];
      return [
        String(row.tenants),
        String(row.resources),
        seconds(row.medianRegistrationMs),
        seconds(row.medianRegistrationCpuMs),
        `${(row.medianPeakHeapBytes / mebibyte).toFixed(0)} MiB`,
        `${(row.medianMaxRssBytes / mebibyte).toFixed(0)} MiB`,
        policy ? milliseconds(policy.medianMs) : "-",
        policy ? milliseconds(policy.medianMsPerResource, 3) : "-",
        policy?.violations ? `${policy.violations.mandatory} mandatory, ${policy.violations.advisory} advisory` : "-",
        slowest ? `${slowest.rule} (${milliseconds(slowest.medianMs)})` : "-",
      ];
    }),
  });
  if (planner) {
    const errors = Object.entries(planner.errors).map(([code, count]) => `${code} ${count}`).join(", ") || "none";
    sections.push({
      title: `3. Upgrade planner over ${planner.triples.toLocaleString("en-US")} random (control plane, target, workers) triples`,
      header: ["plans/s", "planned", "errors (invalid inputs)", "worker rollouts", "lower bound", "one per minor", "at lower bound"],
      rows: [[
        Math.round(planner.medianPlansPerSecond).toLocaleString("en-US"),
        planner.planned.toLocaleString("en-US"),
        errors,
        planner.rollouts.total.toLocaleString("en-US"),
        planner.rollouts.lowerBound.toLocaleString("en-US"),
        planner.rollouts.onePerMinor.toLocaleString("en-US"),
        `${planner.rollouts.atLowerBound.toLocaleString("en-US")} / ${planner.planned.toLocaleString("en-US")}`,
      ]],
    });
  }
  if (preview.status === "ran" && preview.mode === "stand-in") {
    sections.push({
      title: `4. pulumi preview, ${preview.label} (policy share = (with − without) / with)`,
      header: ["tenants", "components", "with policy pack", "without", "policy share (upper bound)", "violations with stand-ins", "collisions"],
      rows: preview.rows.map((row) => [
        String(row.tenants),
        String(row.standIn?.resources ?? "-"),
        seconds(row.medianWithPolicyMs),
        seconds(row.medianWithoutPolicyMs),
        `${(row.policyShare * 100).toFixed(1)}%`,
        row.standIn ? violationText(row.standIn.violations) : "-",
        String(row.standIn?.collisions ?? "-"),
      ]),
      after: preview.notes.map((note) => `note: ${note}`).join("\n"),
    });
  } else if (preview.status === "ran") {
    sections.push({
      title: `4. pulumi preview, ${preview.label} (policy share = (with − without) / with)`,
      header: ["tenants", "with policy pack", "without", "policy share", "peak plugin processes (hcloud)", "peak plugin RSS", "process tree RSS"],
      rows: preview.rows.map((row) => [
        String(row.tenants),
        seconds(row.medianWithPolicyMs),
        seconds(row.medianWithoutPolicyMs),
        `${(row.policyShare * 100).toFixed(1)}%`,
        row.plugins ? `${row.plugins.processes} (${row.plugins.byPlugin.hcloud?.processes ?? 0})` : "-",
        row.plugins ? mib(row.plugins.rssBytes) : "-",
        row.plugins ? mib(row.plugins.treeRssBytes) : "-",
      ]),
      after: preview.notes.map((note) => `note: ${note}`).join("\n"),
    });
  } else {
    sections.push({ title: `4. Real-engine pulumi preview: ${preview.status}`, text: [`reason: ${preview.reason}`, ...preview.notes.map((note) => `note: ${note}`)].join("\n") });
  }
  sections.push({ title: "Targets", header: ["target", "wanted", "measured", "status"], rows: checks.map((check) => [check.name, check.target, check.measured, check.status]) });

  const text = sections
    .map((section) => ("text" in section ? [section.title, section.text] : [section.title, formatTable(section.header, section.rows), section.after]).filter(Boolean).join("\n"))
    .join("\n\n");
  const markdown = sections
    .map((section) => ("text" in section ? `**${section.title}**\n\n${section.text}` : [`**${section.title}**`, "", formatMarkdownTable(section.header, section.rows), section.after ? `\n${section.after}` : ""].join("\n")))
    .join("\n\n");
  return { text, markdown };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
