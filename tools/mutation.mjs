#!/usr/bin/env node
// @ts-check
/**
 * `npm run mutation`: StrykerJS (stryker.config.mjs) in two passes over the same incremental
 * report, so that the score is the whole suite's without running the whole suite for every mutant.
 *
 * 1. Quick pass (`CAPI_FLEET_MUTATION_PASS=quick`, vitest.mutation.quick.config.mts): the unit
 *    tests of infra/model and policies. Most mutants die here in a second or two.
 * 2. Whole pass (vitest.mutation.config.mts, the suite of `npm test`): StrykerJS reuses a killed
 *    mutant's result only while the test that killed it still covers it unchanged
 *    (`@stryker-mutator/core`: src/mutants/incremental-differ.ts, `mutantCanBeReused`), and runs
 *    again every survivor, mutant without coverage or ignored mutant that a test of the whole suite
 *    covers, against all of its covering tests.
 *
 * Arguments go to both passes (`--mutate infra/model/config/cidr.ts`, `--incrementalFile ...`, `--force`
 * on the first only). Exit code: the whole pass's.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "..");
const stryker = path.join(repoRoot, "node_modules", ".bin", "stryker");
const args = process.argv.slice(2);

/**
 * Runs one pass of StrykerJS and returns spawnSync's result (`options`: e.g. a timeout).
 * `--force` would discard the first pass's results, so callers give it to the first only.
 */
export function runPass(
  /** @type {"quick" | "whole"} */ pass,
  /** @type {string[]} */ passArgs,
  /** @type {import("node:child_process").SpawnSyncOptions} */ options = {},
) {
  console.log(`\n== mutation testing, ${pass} pass: stryker run ${passArgs.join(" ")}`);
  const env = { ...process.env, CAPI_FLEET_MUTATION_PASS: pass };
  return spawnSync(stryker, ["run", ...passArgs], { cwd: repoRoot, stdio: "inherit", env, ...options });
}

/** The exit code of a pass; throws when it could not start. */
function statusOf(/** @type {{ error?: Error, status: number | null }} */ result) {
  if (result.error) throw result.error;
  return result.status ?? 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const quick = statusOf(runPass("quick", args));
  // A quick pass below the break threshold is not a failure: the whole pass decides.
  if (quick !== 0 && quick !== 1) process.exitCode = quick;
  else process.exitCode = statusOf(runPass("whole", args.filter((arg) => arg !== "--force")));
}
