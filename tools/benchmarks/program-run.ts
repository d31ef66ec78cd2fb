// One benchmark sample in a fresh process (parts 1 and 2 of `npm run bench`): registers a
// generated fleet of N tenants under the test mocks, then evaluates every policy over what
// was registered. Prints one JSON line (ProgramSample). Pulumi's runtime keeps per-process
// state, so tools/bench.ts starts one process per sample.
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import * as pulumi from "@pulumi/pulumi";
import { loadFleetConfig } from "../../infra/config";
import { planTenantUpgradesOrStop, readDeployedTenantVersions } from "../../infra/deployed-state";
import { createFleet } from "../../infra/fleet";
import { allRules } from "../../policies/rules";
import { evaluate } from "../../policies/testing/harness";
import { engineViewOfRegistrations } from "../../tests/support/policy-resources";
import { installRecordingMocks, valueOf, type Registration } from "../../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../../tests/support/stack-files";
import { generatedDeployedVersions, generatedStackConfig } from "./fleet-generator";

/** What one sample measured. */
export interface ProgramSample {
  tenants: number;
  resources: number;
  /** Dependency edges over all registrations (explicit dependsOn, expanded, plus input dependencies). */
  dependencyEdges: number;
  /** From reading the config to the last registration the mocks saw. */
  registrationMs: number;
  /** CPU time (user + system, all threads) of the process in the same window: shows contention on a shared machine. */
  registrationCpuMs: number;
  /** 1-minute load average when the sample started. */
  loadAverage: number;
  /** Highest V8 used-heap size seen (before each GC, and sampled), in bytes. */
  peakHeapBytes: number;
  /** Peak resident set size of the process, in bytes. */
  maxRssBytes: number;
  /** Every resource and stack policy over every resource, as the engine would run them. */
  policyMs: number;
  /** Per-policy time of a second, separate pass (only for finding hot spots). */
  policyMsByRule: Record<string, number>;
  violations: { mandatory: number; advisory: number; byPolicy: Record<string, number> };
}

/** The base stack: prod has the full management cluster (three servers) and gitops. */
const baseStack = "prod";

/** Tracks the peak used heap: V8 reports it before every GC, and a timer samples between GCs. */
function heapTracker(): { stop(): number } {
  const profiler = new v8.GCProfiler();
  profiler.start();
  let peak = v8.getHeapStatistics().used_heap_size;
  const timer = setInterval(() => {
    peak = Math.max(peak, v8.getHeapStatistics().used_heap_size);
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      const gcs = profiler.stop().statistics;
      for (const gc of gcs) peak = Math.max(peak, gc.beforeGC.heapStatistics.usedHeapSize);
      return Math.max(peak, v8.getHeapStatistics().used_heap_size);
    },
  };
}

/** Resolves when no registration arrived for `quietMs`; returns when the last one arrived. */
async function lastRegistration(registrations: Registration[], arrivedAt: () => number, quietMs = 100): Promise<number> {
  let seen = -1;
  let quietSince = performance.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (registrations.length !== seen) {
      seen = registrations.length;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return arrivedAt();
    }
  }
}

/** The part of a registration part 4's stand-in program needs (tools/benchmarks/stand-in.ts). */
export type DumpedRegistration = Pick<Registration, "type" | "name" | "inputs" | "urn" | "dependencies" | "outputs">;

async function sample(tenants: number, dumpTo?: string): Promise<ProgramSample> {
  const deployed = generatedDeployedVersions(tenants);
  const tenantVersions = Object.fromEntries(
    Object.entries(deployed).map(([tenant, version]) => [tenant, { deployed: version, target: version, controlPlaneSteps: [], workerSteps: [] }]),
  );
  const registrations = await installRecordingMocks("capi-fleet", baseStack, false, { tenantVersions });
  let lastAt = 0;
  const push = registrations.push.bind(registrations);
  registrations.push = (...items: Registration[]) => {
    lastAt = performance.now();
    return push(...items);
  };
  const { values, secretKeys } = generatedStackConfig(readStackConfig(baseStack), tenants, fakeHcloudToken);

  const loadAverage = os.loadavg()[0] ?? 0;
  const heap = heapTracker();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  // As infra/index.ts does.
  pulumi.runtime.setAllConfig(values, secretKeys);
  const config = loadFleetConfig();
  const upgrades = planTenantUpgradesOrStop(config, await readDeployedTenantVersions());
  const outputs = createFleet(config, `capi-fleet-${baseStack}`, upgrades);
  await valueOf(outputs.managementKubeconfig);
  const end = await lastRegistration(registrations, () => lastAt);
  const cpu = process.cpuUsage(cpuStart);
  const peakHeapBytes = heap.stop();

  // Next to this file, not the working directory: the mocks moved that to the program's (tests/support/engine-pwd.ts).
  const policyConfig = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "policies", "config", `${baseStack}.json`), "utf8")) as Record<string, unknown>;
  const resources = engineViewOfRegistrations(registrations);
  const policyStart = performance.now();
  const violations = await evaluate(allRules, resources, policyConfig);
  const policyMs = performance.now() - policyStart;

  const policyMsByRule: Record<string, number> = {};
  for (const rule of allRules) {
    const ruleStart = performance.now();
    await evaluate([rule], resources, policyConfig);
    policyMsByRule[rule.name] = performance.now() - ruleStart;
  }
  if (dumpTo !== undefined) {
    // Secret inputs arrive unwrapped: the file is private and lives in part 4's scratch directory.
    const dumped: DumpedRegistration[] = registrations.map(({ type, name, inputs, urn, dependencies, outputs }) => ({ type, name, inputs, urn, dependencies, outputs }));
    writeFileSync(dumpTo, JSON.stringify(dumped), { mode: 0o600 });
  }
  const byPolicy: Record<string, number> = {};
  for (const violation of violations) byPolicy[violation.policy] = (byPolicy[violation.policy] ?? 0) + 1;

  return {
    tenants,
    resources: resources.forResourceRules.length,
    dependencyEdges: registrations.reduce((sum, registration) => sum + registration.dependencies.length, 0),
    registrationMs: end - start,
    // Includes the quiet period lastRegistration waits for, which costs next to no CPU.
    registrationCpuMs: (cpu.user + cpu.system) / 1000,
    loadAverage,
    peakHeapBytes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    policyMs,
    policyMsByRule,
    violations: {
      mandatory: violations.filter((violation) => violation.level === "mandatory").length,
      advisory: violations.filter((violation) => violation.level === "advisory").length,
      byPolicy,
    },
  };
}

// program-run <tenants> [--dump FILE]: --dump also writes the registrations (part 4's stand-in).
const [tenantsArg, dumpFlag, dumpTo] = process.argv.slice(2);
const tenants = Number(tenantsArg);
if (!Number.isInteger(tenants) || tenants < 1 || (dumpFlag !== undefined && (dumpFlag !== "--dump" || !dumpTo))) {
  console.error("usage: program-run <tenants> [--dump FILE]");
  process.exit(2);
}
sample(tenants, dumpTo).then(
  (result) => {
    console.log(JSON.stringify(result));
    // The Pulumi runtime keeps handles open; the sample is done.
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
