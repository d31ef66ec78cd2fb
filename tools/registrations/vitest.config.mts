import { defineConfig } from "vitest/config";

// `npm run registrations -- <directory>`: not a test, so `npm test` does not include it.
export default defineConfig({
  test: {
    include: ["tools/registrations/snapshot.run.ts"],
    pool: "forks",
    testTimeout: 300_000,
    reporters: ["default"],
  },
});
