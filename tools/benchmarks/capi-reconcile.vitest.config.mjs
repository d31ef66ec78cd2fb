import { defineConfig } from "vitest/config";

// Part 5 of `npm run bench` (tools/benchmarks/capi-reconcile.run.ts), run on its own: it is
// not a test, so the project's vitest config (npm test) does not include it.
export default defineConfig({
  test: {
    include: ["tools/benchmarks/capi-reconcile.run.ts"],
    pool: "forks",
    reporters: ["default"],
  },
});
