// The skip ledger: tests/unverified.json lists each check that may go unverified, with the
// upstream reason. A test whose upstream material is unavailable calls `skipIfDeclared`: it is
// skipped (with the reason on screen) only when the ledger declares it; otherwise it fails with
// the reason. The run's reporter (tests/support/summary-reporter.mts) also fails the run for any other
// skip the ledger does not declare, and for a ledger entry whose test ran (a stale entry).
// CAPI_FLEET_ALLOW_UNVERIFIED=1 turns both into warnings for local work; CI refuses it.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { TestContext } from "vitest";
import { repoRoot } from "./stack-files";
import { downloadModule } from "./upstream";

/** One check the ledger allows to go unverified. */
export interface LedgerEntry {
  /** The test file, relative to the repository root. */
  readonly file: string;
  /** The test's full name: its describe titles and its own, joined by " > ". */
  readonly test: string;
  /** The upstream material it needs and cannot get here, and why (what the proxy answers). */
  readonly reason: string;
  /**
   * The Go module (`module@version`) whose refusal by the proxy is the reason. Where the proxy
   * serves it (the public proxy may), the entry does not apply: the test must run there.
   */
  readonly upstream?: string;
  /**
   * An environment variable that hands the test its material (a source checkout, a binary built
   * by hand): when it is set the test must run, so the entry neither excuses a skip nor goes stale.
   */
  readonly unlessEnv?: string;
}

/** Whether the Go module proxy refuses `module@version` (asked once per process; tests/support/upstream.ts). */
export function proxyRefuses(moduleAtVersion: string): boolean {
  const at = moduleAtVersion.lastIndexOf("@");
  return "refused" in downloadModule(moduleAtVersion.slice(0, at), moduleAtVersion.slice(at + 1));
}

/** How an entry's conditions are judged (injectable for the ledger's own tests). */
export interface LedgerContext {
  readonly env?: NodeJS.ProcessEnv;
  readonly refuses?: (moduleAtVersion: string) => boolean;
}

/** Whether an entry applies here: its variable is not set and the proxy refuses its module. */
function applies(entry: LedgerEntry, context: LedgerContext): boolean {
  const env = context.env ?? process.env;
  if (entry.unlessEnv && env[entry.unlessEnv]) return false;
  return entry.upstream === undefined || (context.refuses ?? proxyRefuses)(entry.upstream);
}

export const ledgerFile = path.join(repoRoot, "tests", "unverified.json");

/** The ledger's entries (validated: each names a file, a test and a reason). */
export function readLedger(file = ledgerFile): LedgerEntry[] {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as { checks?: unknown };
  if (!Array.isArray(parsed.checks)) throw new Error(`${file}: expected { "checks": [ … ] }`);
  return parsed.checks.map((entry: Partial<LedgerEntry>, index) => {
    for (const key of ["file", "test", "reason"] as const) {
      if (typeof entry[key] !== "string" || entry[key] === "") throw new Error(`${file}: checks[${index}].${key} must be a non-empty string`);
    }
    if (entry.upstream !== undefined && !/^[^@\s]+@v\S+$/.test(entry.upstream)) throw new Error(`${file}: checks[${index}].upstream must be module@version`);
    return entry as LedgerEntry;
  });
}

/** A test file's path relative to the repository root, with "/" separators. */
export const repoRelative = (file: string) => path.relative(repoRoot, file).split(path.sep).join("/");

/** The ledger key of a test: its file relative to the repository, and its full name. */
export const ledgerKey = (file: string, fullName: string) => `${repoRelative(file)} > ${fullName}`;

/** The entry that excuses a skip of this test here and now, if any (see `applies`). */
export function excusingEntry(ledger: readonly LedgerEntry[], file: string, fullName: string, context: LedgerContext = {}): LedgerEntry | undefined {
  const key = ledgerKey(file, fullName);
  return ledger.find((entry) => `${entry.file} > ${entry.test}` === key && applies(entry, context));
}

/** Whether failures of the ledger are only warned about (local work; never under CI). */
export function unverifiedAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env["CAPI_FLEET_ALLOW_UNVERIFIED"] !== "1") return false;
  if (env["CI"]) throw new Error("CAPI_FLEET_ALLOW_UNVERIFIED=1 is for local work; CI must not set it");
  return true;
}

/** A test's full name as vitest's reporters give it (describe titles and the test's, joined by " > "). */
function fullNameOf(task: TestContext["task"]): string {
  const names: string[] = [task.name];
  for (let suite = task.suite; suite && suite.name; suite = suite.suite) names.unshift(suite.name);
  return names.join(" > ");
}

/**
 * Skips the running test because `reason` (its upstream material is unavailable), if the ledger
 * declares it; otherwise fails it with the reason (or, with CAPI_FLEET_ALLOW_UNVERIFIED=1, skips
 * with a warning). Never returns normally: call it as `return skipIfDeclared(context, reason)`.
 */
export function skipIfDeclared(context: TestContext, reason: string): never {
  const file = context.task.file.filepath;
  const name = fullNameOf(context.task);
  const entry = excusingEntry(readLedger(), file, name);
  if (entry) {
    console.warn(`UNVERIFIED (declared in tests/unverified.json): ${ledgerKey(file, name)}: ${reason}`);
    context.skip(`UNVERIFIED: ${reason}`);
  }
  const message = `this check could not run and tests/unverified.json does not declare it: ${reason}`;
  if (unverifiedAllowed()) {
    console.warn(`UNVERIFIED (allowed by CAPI_FLEET_ALLOW_UNVERIFIED=1): ${ledgerKey(file, name)}: ${reason}`);
    context.skip(`UNVERIFIED (undeclared): ${reason}`);
  }
  throw new Error(message);
}

/** One test as the run ended it. */
export interface RunTest {
  /** Absolute path of its file. */
  readonly file: string;
  readonly fullName: string;
  readonly state: "passed" | "failed" | "skipped" | "pending";
  /** The note `context.skip(note)` gave, if any. */
  readonly note?: string;
}

/** What the ledger says of a run. */
export interface LedgerVerdict {
  /** Skips the ledger declares, with the note the test gave. */
  readonly declared: readonly { key: string; note: string; reason: string }[];
  /** Skips it does not declare: each fails the run. */
  readonly undeclared: readonly { key: string; note: string }[];
  /** Entries whose test ran, or is gone, in a file that ran: each fails the run. */
  readonly stale: readonly { key: string; why: string }[];
}

/**
 * The ledger's verdict on a run. Only files that ran are judged. With a test-name filter, tests
 * the filter left out (skipped without a note) and entries it did not reach are not judged.
 */
export function ledgerVerdict(tests: readonly RunTest[], ledger: readonly LedgerEntry[], options: LedgerContext & { nameFilter?: boolean } = {}): LedgerVerdict {
  const declared: { key: string; note: string; reason: string }[] = [];
  const undeclared: { key: string; note: string }[] = [];
  for (const test of tests.filter((candidate) => candidate.state === "skipped" || candidate.state === "pending")) {
    if (options.nameFilter && test.note === undefined) continue;
    const entry = excusingEntry(ledger, test.file, test.fullName, options);
    const key = ledgerKey(test.file, test.fullName);
    if (entry) declared.push({ key, note: test.note ?? "(no reason given)", reason: entry.reason });
    else undeclared.push({ key, note: test.note ?? "(skipped with no reason: it.skip, skipIf or todo)" });
  }
  const byKey = new Map(tests.map((test) => [ledgerKey(test.file, test.fullName), test]));
  const filesRun = new Set(tests.map((test) => repoRelative(test.file)));
  const stale: { key: string; why: string }[] = [];
  for (const entry of ledger) {
    if (!filesRun.has(entry.file) || !applies(entry, options)) continue;
    const key = `${entry.file} > ${entry.test}`;
    const test = byKey.get(key);
    if (!test) {
      if (!options.nameFilter) stale.push({ key, why: "no test of that name ran in that file" });
    } else if (test.state === "passed" || test.state === "failed") {
      stale.push({ key, why: `it ran (${test.state}): remove the entry` });
    }
  }
  return { declared, undeclared, stale };
}
