// The suite as `npm test` runs it, in the order StrykerJS wants (stryker.config.mjs).
import { mergeConfig } from "vitest/config";
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

export default mergeConfig(base, { test: { sequence: { sequencer: ShortestFirstSequencer } } });
