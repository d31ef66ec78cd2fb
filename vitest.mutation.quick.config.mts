// The first pass of `npm run mutation` (tools/mutation.mjs): only the unit tests of the mutated
// code (infra/model, policies), which take seconds and never run the whole program. Mutants they
// kill keep that result; the second pass (vitest.mutation.config.mts, the whole suite) re-runs
// every other mutant against all the tests that cover it, so the final score is the whole suite's.
// The split only saves time: a mutant a unit test kills never starts an API server, CAPI's
// managers or the Pulumi engine.
import type { ViteUserConfig } from "vitest/config";
import whole from "./vitest.mutation.config.mjs";

// Not mergeConfig: it would append to the whole suite's `include`, not replace it.
const wholeTest = whole["test"] as ViteUserConfig["test"];
// Plus the one test that can judge the autoscaler's Role (infra/model/platform/cluster-autoscaler.ts): its
// rules against a real API server, about 15 s, covering no other file; without it the gate could
// never reuse the whole pass's verdict on those rules.
const include = ["{infra/model,policies}/**/*.test.ts", "tests/in-the-loop/cluster-autoscaler-rbac.test.ts"];
export default { ...whole, test: { ...wholeTest, include } } satisfies ViteUserConfig;
