#!/usr/bin/env node
// @ts-check
/**
 * CI's mutation gate (`.ci/run`): mutation-tests only what a change touches, against the
 * committed incremental report `.ci/mutation-baseline.json` (a StrykerJS incremental file, written
 * by `npm run mutation`).
 *
 * The change: the working tree against MUTATION_GATE_BASE (default `HEAD^1`: on a pull request's
 * merge commit the whole pull request, on main the last commit). Without that commit (a shallow
 * clone) the change is everything whose content differs from the copy in the report.
 * Touched files: every file StrykerJS mutates (`mutate` in stryker.config.mjs) that the change
 * modifies or adds, the subject of every changed test file (`x.ts` for `x.test.ts`), and every file
 * with a mutant that a changed or removed test file covered when the report was made. StrykerJS
 * then runs on exactly those files (`--mutate`), seeded with the report's results for them: only
 * mutants in changed code, covered by changed tests, or without a result in the report run (the
 * quick pass of `npm run mutation`, tools/mutation.mjs); the others keep the report's result.
 * It exits 1 when the mutation score of those files together, or of any one of them, is below
 * `thresholds.break` (stryker.config.mjs), and prints the score per file.
 *
 * `--list` prints the touched files and stops. MUTATION_GATE_MINUTES (default 45) bounds the run,
 * so CI stays within its 90 minutes. Not seen as a change: test helpers without tests of their own
 * (tests/support/ and other files that are not *.test.ts). Exit codes: 0 passed or nothing touched; 1 below the
 * threshold, out of time or StrykerJS failed; 2 no baseline.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import config from "../stryker.config.mjs";
import { runPass } from "./mutation.mjs";

const repoRoot = path.resolve(import.meta.dirname, "..");
const baselineFile = ".ci/mutation-baseline.json";
const gateIncrementalFile = "reports/mutation-gate-incremental.json";

/**
 * @typedef {{ source: string, mutants: { coveredBy?: string[], killedBy?: string[] }[] }} ReportFile
 * @typedef {{ source: string, tests: { id: string }[] }} ReportTestFile
 * @typedef {{ files: Record<string, ReportFile>, testFiles?: Record<string, ReportTestFile> }} Report
 */

/** Files of the checkout (tracked, and untracked ones git does not ignore), relative to its root. */
function checkoutFiles() {
  const result = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`git ls-files failed: ${result.stderr}`);
  return result.stdout.split("\0").filter((file) => file !== "" && existsSync(path.join(repoRoot, file)));
}

/** Whether StrykerJS mutates `file`: it matches a `mutate` pattern and no `!` pattern after it. */
function isMutated(/** @type {string} */ file) {
  let mutated = false;
  for (const pattern of config.mutate ?? []) {
    if (pattern === undefined) continue;
    if (pattern.startsWith("!")) {
      if (path.matchesGlob(file, pattern.slice(1))) mutated = false;
    } else if (path.matchesGlob(file, pattern)) {
      mutated = true;
    }
  }
  return mutated;
}

const read = (/** @type {string} */ file) => readFileSync(path.join(repoRoot, file), "utf8");

/**
 * Files the change modifies or adds, relative to the checkout: against `base` when git knows that
 * commit, else (undefined) the caller compares contents with the report.
 */
function changedSince(/** @type {string} */ base) {
  const known = spawnSync("git", ["rev-parse", "--verify", "--quiet", `${base}^{commit}`], { cwd: repoRoot });
  if (known.status !== 0) return undefined;
  const diff = spawnSync("git", ["diff", "--name-only", "-z", base], { cwd: repoRoot, encoding: "utf8" });
  if (diff.status !== 0) throw new Error(`git diff ${base} failed: ${diff.stderr}`);
  const untracked = spawnSync("git", ["ls-files", "--others", "--exclude-standard", "-z"], { cwd: repoRoot, encoding: "utf8" });
  return new Set([...diff.stdout.split("\0"), ...untracked.stdout.split("\0")].filter((file) => file !== ""));
}

/**
 * The files the gate mutation-tests, each with why. `changed` is the change's file list, or
 * undefined to compare every file with the report's copy.
 */
export function touchedFiles(/** @type {Report} */ report, /** @type {string[]} */ files, /** @type {Set<string> | undefined} */ changed) {
  const differs = (/** @type {string} */ file, /** @type {string | undefined} */ reportCopy) =>
    changed ? changed.has(file) : reportCopy !== read(file);
  /** @type {Map<string, string>} */
  const touched = new Map();
  for (const file of files.filter(isMutated)) {
    if (differs(file, report.files[file]?.source)) touched.set(file, report.files[file] ? "changed" : "changed, not in the baseline");
  }
  const present = new Set(files);
  /** @type {Map<string, string>} test id -> its file */
  const changedTests = new Map();
  for (const [testFile, { source, tests }] of Object.entries(report.testFiles ?? {})) {
    // Changed or removed: git lists removed files too; without git, a file the report has and the checkout lacks.
    if (changed ? !changed.has(testFile) : present.has(testFile) && source === read(testFile)) continue;
    for (const test of tests) changedTests.set(test.id, testFile);
  }
  // A changed test file's own subject (`x.test.ts` tests `x.ts`), even where the report has no
  // result for it yet.
  for (const testFile of files.filter((file) => /\.test\.m?ts$/.test(file))) {
    const subject = testFile.replace(/\.test\.(m?ts)$/, ".$1");
    if (touched.has(subject) || !present.has(subject) || !isMutated(subject)) continue;
    if (differs(testFile, report.testFiles?.[testFile]?.source)) touched.set(subject, `tested by ${testFile}, which changed`);
  }
  for (const [file, { mutants }] of Object.entries(report.files)) {
    if (touched.has(file) || !present.has(file) || !isMutated(file)) continue;
    const testFile = mutants
      .flatMap((mutant) => [...(mutant.coveredBy ?? []), ...(mutant.killedBy ?? [])])
      .map((id) => changedTests.get(id))
      .find((found) => found !== undefined);
    if (testFile) touched.set(file, `covered by ${testFile}, which changed`);
  }
  return touched;
}

function main() {
  const baseline = path.join(repoRoot, baselineFile);
  if (!existsSync(baseline)) {
    console.error(`mutation gate: ${baselineFile} is missing; write it with a full run (docs/testing.md, "Mutation testing")`);
    return 2;
  }
  /** @type {Report} */
  const report = JSON.parse(readFileSync(baseline, "utf8"));
  const base = process.env["MUTATION_GATE_BASE"] ?? "HEAD^1";
  const changed = changedSince(base);
  const against = changed ? base : `${baselineFile} (no commit ${base} here)`;
  const touched = touchedFiles(report, checkoutFiles(), changed);
  if (touched.size === 0) {
    console.log(`mutation gate: no mutated file or covering test changed since ${against}; nothing to run`);
    return 0;
  }
  console.log(`mutation gate: ${touched.size} file(s) touched since ${against}; break below ${config.thresholds?.break ?? "none"}%:`);
  for (const [file, why] of touched) console.log(`  ${file}: ${why}`);
  if (process.argv.includes("--list")) return 0;
  mkdirSync(path.join(repoRoot, path.dirname(gateIncrementalFile)), { recursive: true });
  // Only the touched files' results: StrykerJS scores every file its incremental report holds.
  const seed = { ...report, files: Object.fromEntries(Object.entries(report.files).filter(([file]) => touched.has(file))) };
  writeFileSync(path.join(repoRoot, gateIncrementalFile), JSON.stringify(seed));
  const minutes = Number(process.env["MUTATION_GATE_MINUTES"] ?? "45");
  const passArgs = ["--mutate", [...touched.keys()].join(","), "--incrementalFile", gateIncrementalFile];
  // The quick pass of `npm run mutation` (tools/mutation.mjs): the unit tests of infra/model
  // and policies. The whole pass would start the Pulumi engine or an API server for
  // every surviving mutant, minutes each here: beyond CI's budget (docs/testing.md).
  const result = runPass("quick", passArgs, { timeout: minutes * 60_000, killSignal: "SIGINT" });
  if (result.signal || (result.error && "code" in result.error && result.error.code === "ETIMEDOUT")) {
    console.error(`mutation gate: stopped after ${minutes} minutes (MUTATION_GATE_MINUTES), CI's budget for it. The baseline lacks results for the touched files' mutants: refresh ${baselineFile} (docs/testing.md, "Mutation testing").`);
    return 1;
  }
  if (result.error) throw result.error;
  if (result.status !== 0) return result.status ?? 1;
  // StrykerJS's break applies to the touched files together, where a well-tested file that a
  // changed test merely covers can hide the file the change weakened: each file must reach it too.
  /** @type {{ files: Record<string, { mutants: { status: string }[] }> }} */
  const mutationReport = JSON.parse(readFileSync(path.join(repoRoot, config.jsonReporter?.fileName ?? "reports/mutation/mutation.json"), "utf8"));
  const below = filesBelow(mutationReport, config.thresholds?.break ?? 0);
  for (const { file, score } of below) console.error(`mutation gate: ${file} scores ${score.toFixed(2)}%, below the break threshold ${config.thresholds?.break}%`);
  return below.length === 0 ? 0 : 1;
}

/**
 * The files whose mutation score (killed and timed out over killed, timed out, survived and
 * without coverage, as StrykerJS counts it) is below `threshold`; files without such mutants have
 * no score.
 */
export function filesBelow(/** @type {{ files: Record<string, { mutants: { status: string }[] }> }} */ report, /** @type {number} */ threshold) {
  return Object.entries(report.files).flatMap(([file, { mutants }]) => {
    const count = (/** @type {string[]} */ statuses) => mutants.filter((mutant) => statuses.includes(mutant.status)).length;
    const detected = count(["Killed", "Timeout"]);
    const valid = detected + count(["Survived", "NoCoverage"]);
    const score = (100 * detected) / valid;
    return valid > 0 && score < threshold ? [{ file, score }] : [];
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) process.exitCode = main();
