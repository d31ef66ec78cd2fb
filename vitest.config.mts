import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { slotsPerStrykerWorker } from "./tests/support/ports.js";

export default defineConfig({
  test: {
    include: ["{infra,components,policies,scripts,tools,tests}/**/*.test.{ts,mts}"],
    // Pulumi's runtime keeps per-process state (mocks, config); one file per worker keeps it isolated.
    pool: "forks",
    // Most test files spend their time waiting on the servers and engines they start, so one worker
    // per core: vitest's default (cores - 1) is a single worker on a two-core CI machine. Each worker
    // takes its ports from a block of its own (tests/support/ports.ts), hence the upper bound.
    maxWorkers: Math.min(slotsPerStrykerWorker - 1, Math.max(2, availableParallelism())),
    testTimeout: 30_000,
    reporters: ["default", "./tests/support/summary-reporter.mts"],
  },
});
