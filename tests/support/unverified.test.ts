import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "./stack-files";
import { excusingEntry, ledgerFile, ledgerVerdict, readLedger, unverifiedAllowed, type LedgerEntry, type RunTest } from "./unverified";

// The skip ledger's rules (tests/support/unverified.ts), each with the case that must fail.

const file = path.join(repoRoot, "tests", "x.test.ts");
const entry: LedgerEntry = { file: "tests/x.test.ts", test: "suite > needs k3s", reason: "k3s: the proxy refuses it" };
/** A test as the run ended it; a skip gives a reason unless `note` is null (it.skip, skipIf, a name filter). */
const run = (state: RunTest["state"], fullName = entry.test, note: string | null = "UNVERIFIED: 403"): RunTest =>
  state === "skipped" && note !== null ? { file, fullName, state, note } : { file, fullName, state };

describe("ledgerVerdict", () => {
  it("declares a skip the ledger lists, with the test's note and the ledger's reason", () => {
    expect(ledgerVerdict([run("skipped")], [entry], { env: {} })).toEqual({
      declared: [{ key: "tests/x.test.ts > suite > needs k3s", note: "UNVERIFIED: 403", reason: entry.reason }],
      undeclared: [],
      stale: [],
    });
  });

  it("fails a skip the ledger does not list, with a reason or without one (it.skip, skipIf)", () => {
    const verdict = ledgerVerdict([run("skipped", "suite > other"), run("skipped", "suite > bare", null)], [], { env: {} });
    expect(verdict.undeclared.map((skip) => skip.key)).toEqual(["tests/x.test.ts > suite > other", "tests/x.test.ts > suite > bare"]);
    expect(verdict.undeclared[1]!.note).toMatch(/no reason/);
  });

  it("fails an entry whose test ran (passed or failed) or is gone from a file that ran", () => {
    for (const state of ["passed", "failed"] as const) {
      expect(ledgerVerdict([run(state)], [entry], { env: {} }).stale).toEqual([{ key: "tests/x.test.ts > suite > needs k3s", why: `it ran (${state}): remove the entry` }]);
    }
    expect(ledgerVerdict([run("passed", "suite > renamed")], [entry], { env: {} }).stale[0]!.why).toMatch(/no test of that name/);
  });

  it("leaves entries of files that did not run alone", () => {
    expect(ledgerVerdict([{ ...run("passed"), file: path.join(repoRoot, "tests", "y.test.ts") }], [entry], { env: {} }).stale).toEqual([]);
  });

  it("with the entry's variable set, the test must run: its skip fails and its run is no stale entry", () => {
    const handed = { ...entry, unlessEnv: "K3S_SOURCE_DIR" };
    const env = { K3S_SOURCE_DIR: "/src/k3s" };
    expect(ledgerVerdict([run("skipped")], [handed], { env }).undeclared).toHaveLength(1);
    expect(ledgerVerdict([run("passed")], [handed], { env }).stale).toEqual([]);
    expect(excusingEntry([handed], file, entry.test, { env: {} })).toBe(handed);
    expect(excusingEntry([handed], file, entry.test, { env })).toBeUndefined();
  });

  it("an entry for a module the proxy serves here does not apply: its skip fails and its run is no stale entry", () => {
    const refusedHere = { ...entry, upstream: "github.com/k3s-io/k3s@v1.34.6+k3s1" };
    const served = { env: {}, refuses: () => false };
    const refused = { env: {}, refuses: (module: string) => module === refusedHere.upstream };
    expect(ledgerVerdict([run("skipped")], [refusedHere], served).undeclared).toHaveLength(1);
    expect(ledgerVerdict([run("passed")], [refusedHere], served).stale).toEqual([]);
    expect(ledgerVerdict([run("skipped")], [refusedHere], refused).declared).toHaveLength(1);
    expect(ledgerVerdict([run("passed")], [refusedHere], refused).stale).toHaveLength(1);
  });

  it("under a test-name filter, judges only skips that gave a reason", () => {
    const verdict = ledgerVerdict([run("skipped", "suite > filtered out", null), run("skipped", "suite > refused")], [entry], { nameFilter: true, env: {} });
    expect(verdict.undeclared.map((skip) => skip.key)).toEqual(["tests/x.test.ts > suite > refused"]);
    expect(verdict.stale).toEqual([]);
  });
});

describe("the local switch", () => {
  it("turns failures into warnings only outside CI, and CI refuses it", () => {
    expect(unverifiedAllowed({})).toBe(false);
    expect(unverifiedAllowed({ CAPI_FLEET_ALLOW_UNVERIFIED: "1" })).toBe(true);
    expect(() => unverifiedAllowed({ CAPI_FLEET_ALLOW_UNVERIFIED: "1", CI: "true" })).toThrow(/CI must not set it/);
  });
});

describe("the committed ledger", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), "ledger-"));
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it("names, for each entry, a test file that exists and a reason", () => {
    const ledger = readLedger();
    expect(ledgerFile).toBe(path.join(repoRoot, "tests", "unverified.json"));
    for (const item of ledger) {
      expect(existsSync(path.join(repoRoot, item.file)), item.file).toBe(true);
      expect(item.file).toMatch(/\.test\.m?ts$/);
      expect(item.reason.length, item.test).toBeGreaterThan(20);
    }
  });

  it("refuses an entry without a reason, or with an upstream that is no module@version (negative controls)", () => {
    const broken = path.join(scratch, "unverified.json");
    writeFileSync(broken, JSON.stringify({ checks: [{ file: "tests/x.test.ts", test: "t", reason: "" }] }));
    expect(() => readLedger(broken)).toThrow(/checks\[0\]\.reason must be a non-empty string/);
    writeFileSync(broken, JSON.stringify({ checks: [{ file: "tests/x.test.ts", test: "t", reason: "r", upstream: "github.com/k3s-io/k3s" }] }));
    expect(() => readLedger(broken)).toThrow(/checks\[0\]\.upstream must be module@version/);
  });
});
