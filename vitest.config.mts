import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["infra/**/*.test.ts", "components/**/*.test.ts", "policies/**/*.test.ts", "tests/**/*.test.ts"],
    // Pulumi's runtime keeps per-process state (mocks, config); one file per worker keeps it isolated.
    pool: "forks",
    testTimeout: 30_000,
  },
});
