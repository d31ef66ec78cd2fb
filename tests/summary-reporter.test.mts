import { afterEach, expect, it, vi } from "vitest";
import type { TestModule } from "vitest/node";
import PlainSummaryReporter from "./summary-reporter.mjs";

afterEach(() => {
  vi.restoreAllMocks();
});

function fakeModule(states: string[]): TestModule {
  const tests = states.map((state) => ({ result: () => ({ state }) }));
  return { children: { allTests: () => tests.values() } } as unknown as TestModule;
}

it("prints the plain closing line, counting failures and skips (negative control)", () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  new PlainSummaryReporter().onTestRunEnd([fakeModule(["passed", "failed"]), fakeModule(["passed", "skipped", "pending"])]);
  expect(log).toHaveBeenCalledWith("\n2 passed, 1 failed, 2 skipped");
});
