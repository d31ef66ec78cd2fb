import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends every run with a plain "N passed, N failed, N skipped" line, which CI tooling that
 * does not know vitest's own summary format can read.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === "passed" || state === "failed") counts[state] += 1;
        else counts.skipped += 1;
      }
    }
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
