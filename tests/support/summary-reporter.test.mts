import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import type { TestModule } from "vitest/node";
import PlainSummaryReporter from "./summary-reporter.mjs";
import { readLedger } from "./unverified.js";

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const repoRoot = path.resolve(import.meta.dirname, "..", "..");

function fakeModule(file: string, tests: { name: string; state: string; note?: string }[]): TestModule {
  const cases = tests.map(({ name, state, note }) => ({ fullName: name, result: () => ({ state, note }) }));
  return { moduleId: path.join(repoRoot, file), children: { allTests: () => cases.values() } } as unknown as TestModule;
}

it("prints the plain closing line, counting failures and skips (negative control)", () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  // The ledger's own entries, skipped with their reasons: declared, so they fail nothing.
  const declared = readLedger().map((entry) => fakeModule(entry.file, [{ name: entry.test, state: "skipped", note: "UNVERIFIED: refused" }]));
  new PlainSummaryReporter().onTestRunEnd([fakeModule("tests/a.test.ts", [{ name: "a", state: "passed" }, { name: "b", state: "failed" }]), ...declared]);
  expect(log).toHaveBeenLastCalledWith(`\n1 passed, 1 failed, ${declared.length} skipped`);
  expect(process.exitCode).toBeUndefined();
});

it("fails the run for a skip the ledger does not declare, and counts it as failed", () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.stubEnv("CAPI_FLEET_ALLOW_UNVERIFIED", "");
  new PlainSummaryReporter().onTestRunEnd([fakeModule("tests/a.test.ts", [{ name: "a", state: "passed" }, { name: "b", state: "skipped", note: "UNVERIFIED: module refused" }])]);
  expect(log.mock.calls.map((call) => String(call[0])).join("\n")).toMatch(/FAILED: checks that did not run[^]*tests\/a\.test\.ts > b\n\s+UNVERIFIED: module refused/);
  expect(log).toHaveBeenLastCalledWith("\n1 passed, 1 failed, 1 skipped");
  expect(process.exitCode).toBe(1);
  vi.unstubAllEnvs();
});
