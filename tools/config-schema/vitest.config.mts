import { defineConfig } from "vitest/config";

// `npm run config-schema`: a generator, not a test, so `npm test` does not include it.
export default defineConfig({
  test: {
    include: ["tools/config-schema/write.run.ts"],
    reporters: ["default"],
  },
});
