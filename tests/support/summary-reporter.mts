import type { Reporter, TestModule, Vitest } from "vitest/node";
import { ledgerFile, ledgerVerdict, readLedger, unverifiedAllowed, type RunTest } from "./unverified.js";

/**
 * Ends every run with the skip ledger's verdict (tests/support/unverified.ts) and a plain "N passed,
 * N failed, N skipped" line, which CI tooling that does not know vitest's own summary format can
 * read. A skip the ledger does not declare, or a stale entry, fails the run and counts as failed.
 */
export default class PlainSummaryReporter implements Reporter {
  private nameFilter = false;

  onInit(vitest: Vitest): void {
    this.nameFilter = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(testModules: readonly TestModule[]): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const tests: RunTest[] = [];
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const result = testCase.result();
        const state = result.state;
        if (state === "passed" || state === "failed") counts[state] += 1;
        else counts.skipped += 1;
        tests.push({ file: testModule.moduleId, fullName: testCase.fullName, state, note: state === "skipped" ? result.note : undefined });
      }
    }
    // StrykerJS runs a mutant's covering tests only: every other test is skipped by design.
    const judged = process.env["STRYKER_MUTATOR_WORKER"] === undefined;
    const violations = judged ? this.judge(tests) : 0;
    console.log(`\n${counts.passed} passed, ${counts.failed + violations} failed, ${counts.skipped} skipped`);
  }

  /** Prints the ledger's verdict; returns how many violations fail the run (0 when allowed locally). */
  private judge(tests: readonly RunTest[]): number {
    const verdict = ledgerVerdict(tests, readLedger(), { nameFilter: this.nameFilter });
    const lines: string[] = [];
    if (verdict.declared.length > 0) {
      lines.push(`\nUnverified, as ${ledgerFile.split("/").slice(-2).join("/")} declares (${verdict.declared.length}):`);
      for (const skip of verdict.declared) lines.push(`  - ${skip.key}\n      ${skip.note}\n      declared: ${skip.reason}`);
    }
    if (verdict.undeclared.length > 0) {
      lines.push(`\nFAILED: checks that did not run and tests/unverified.json does not declare (${verdict.undeclared.length}):`);
      for (const skip of verdict.undeclared) lines.push(`  - ${skip.key}\n      ${skip.note}`);
    }
    if (verdict.stale.length > 0) {
      lines.push(`\nFAILED: stale entries in tests/unverified.json (${verdict.stale.length}):`);
      for (const entry of verdict.stale) lines.push(`  - ${entry.key}: ${entry.why}`);
    }
    if (lines.length > 0) console.log(lines.join("\n"));
    const violations = verdict.undeclared.length + verdict.stale.length;
    if (violations === 0) return 0;
    if (unverifiedAllowed()) {
      console.log(`\nCAPI_FLEET_ALLOW_UNVERIFIED=1: the ${violations} ledger failures above are warnings only (never in CI).`);
      return 0;
    }
    process.exitCode = 1;
    return violations;
  }
}
