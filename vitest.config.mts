import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{infra,components,policies,tests}/**/*.test.{ts,mts}"],
    // Pulumi's runtime keeps per-process state (mocks, config); one file per worker keeps it isolated.
    pool: "forks",
    testTimeout: 30_000,
    reporters: ["default", "./tests/summary-reporter.mts"],
  },
});
