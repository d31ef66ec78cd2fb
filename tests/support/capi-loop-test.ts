import { it } from "vitest";
import { skipIfDeclared } from "./unverified";

/** What a CAPI-in-the-loop test file tells its tests' wrapper. */
export interface LoopTestState {
  /** Why the file's tests are skipped (e.g. CAPH's CRDs are unavailable), if they are. */
  skipReason(): string | undefined;
  /** Marks the run failed, so the managers' logs are kept. */
  fail(): void;
  /** The managers' log tails, added to a failure. */
  logs(): string;
}

/**
 * `it` for tests that need Cluster API running: with the state's reason, skipped if
 * tests/unverified.json declares it and failed otherwise (tests/support/unverified.ts); a failure marks
 * the run failed and carries the managers' logs.
 */
export function loopTest(state: LoopTestState): (name: string, body: () => Promise<void>, timeoutMs: number) => void {
  return (name, body, timeoutMs) => {
    it(name, async (context) => {
      const skipReason = state.skipReason();
      if (skipReason) return skipIfDeclared(context, skipReason);
      try {
        await body();
      } catch (error) {
        state.fail();
        throw new Error(`${error instanceof Error ? error.message : String(error)}\n${state.logs()}`);
      }
    }, timeoutMs);
  };
}
