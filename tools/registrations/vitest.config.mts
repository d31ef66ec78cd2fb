import { defineConfig } from "vitest/config";

// `npm run registrations -- <directory>`: not a test, so `npm test` does not include it.
export default defineConfig({
  test: {
    include: ["tools/registrations/snapshot.run.ts"],
    pool: "forks",
    // One stack per file run would need three processes; each case installs its own mocks instead.
    isolate: true,
    testTimeout: 300_000,
    reporters: ["default"],
  },
});
