// The suite as `npm test` runs it, in the order StrykerJS wants (stryker.config.mjs).
import { configDefaults, mergeConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import base from "./vitest.config.mjs";

/**
 * Runs test files shortest first (by the durations vitest recorded; files it has no record of
 * last). vitest's own order is longest first, which suits parallel workers; under StrykerJS one
 * worker runs a mutant's covering tests and stops at the first failure, so a quick unit test
 * gets to kill the mutant before a file that starts a real API server, CAPI's managers or the
 * Pulumi engine does.
 */
class ShortestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const duration = (spec: TestSpecification): number =>
      this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? Number.POSITIVE_INFINITY;
    return Promise.resolve(
      [...files].sort((a, b) => {
        const [da, db] = [duration(a), duration(b)];
        return da === db ? a.moduleId.localeCompare(b.moduleId) : da < db ? -1 : 1;
      }),
    );
  }
}

// Instrumented code with per-test coverage runs a few times slower (the initial run of program
// tests under mocks took over 30 s on a shared machine); Stryker bounds each mutant run itself.
// The deletion-order test is left out: its negative control races the garbage collector's discovery
// sync (about 30 s) against a 65 s bound, which the sequential, instrumented run missed on a busy
// machine, and one failed test in Stryker's initial run stops the whole run. It still runs in `npm test`.
export default mergeConfig(base, {
  test: {
    sequence: { sequencer: ShortestFirstSequencer },
    testTimeout: 180_000,
    hookTimeout: 300_000,
    exclude: [...configDefaults.exclude, "tests/in-the-loop/capi-deletion-order.test.ts"],
  },
});
