#!/usr/bin/env node
// @ts-check
/**
 * Writes CI's mutation baseline (`.ci/mutation-baseline.json`, read by tools/mutation-gate.mjs)
 * from the incremental report of `npm run mutation` (reports/stryker-incremental.json, or the file
 * given), without what reusing a result does not need:
 * - the coverage of killed mutants: StrykerJS reuses a killed mutant while one of its killing tests
 *   still covers it (`@stryker-mutator/core`: src/mutants/incremental-differ.ts,
 *   `mutantCanBeReused`, which adds `killedBy` to the covering tests it compares); the coverage of
 *   every other mutant stays, as a new covering test makes it run again;
 * - status reasons (test failure text, compiler errors), which only the HTML report shows.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "..");

/**
 * The baseline of a StrykerJS incremental report (a mutation-testing-report-schema document).
 * @param {{ files: Record<string, { mutants: Record<string, unknown>[] }> }} report
 */
export function compactBaseline(report) {
  const files = Object.fromEntries(
    Object.entries(report.files).map(([name, file]) => [
      name,
      {
        ...file,
        mutants: file.mutants.map((mutant) => {
          const kept = { ...mutant };
          delete kept["statusReason"];
          if (kept["status"] === "Killed") delete kept["coveredBy"];
          return kept;
        }),
      },
    ]),
  );
  return { ...report, files };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const from = path.resolve(repoRoot, process.argv[2] ?? "reports/stryker-incremental.json");
  const to = path.join(repoRoot, ".ci", "mutation-baseline.json");
  const report = JSON.parse(readFileSync(from, "utf8"));
  writeFileSync(to, JSON.stringify(compactBaseline(report)));
  console.log(`${path.relative(repoRoot, to)} written from ${path.relative(repoRoot, from)}`);
}
