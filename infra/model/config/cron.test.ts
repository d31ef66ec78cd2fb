import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { buildGoProgram } from "../../../tests/support/go-programs";
import { cronScheduleProblem } from "./cron";

// management.backups.schedule against the parser that runs it: k3s schedules its etcd snapshots
// with robfig/cron's standard parser (k3s-io/k3s: pkg/etcd/etcd.go; github.com/robfig/cron/v3@v3.0.1:
// parser.go `ParseStandard`), built here with the Go module proxy (tests/go/robfig-cron-parse).
// The config check may be stricter than robfig, never looser: whatever it accepts, k3s accepts.

let parser: string;

beforeAll(() => {
  parser = buildGoProgram("robfig-cron-parse").binary;
}, 900_000);

/** robfig's verdict per expression: true = accepted. */
function robfigAccepts(expressions: readonly string[]): boolean[] {
  const result = spawnSync(parser, [], { input: expressions.join("\n") + "\n", encoding: "utf8", timeout: 30_000 });
  const lines = result.stdout.trimEnd().split("\n");
  expect(lines).toHaveLength(expressions.length);
  return lines.map((line) => line === "ok");
}

const handPicked = [
  "0 */6 * * *", "*/15 * * * *", "30 2 * * sun", "0 0 1 jan,jul *", "0 0 * * MON-FRI", "5-10/2 0,12 1-15 * ?", "@daily", "@hourly",
  // whitespace as strings.Fields reads it; the bounds of every field; numbers and names in the named fields
  " 0 */6 * * *", "0  */6\t* * * ", "0 0 1 1 0", "59 23 31 12 6", "0 0 1 5 *", "0 0 * * 3", "0 0 * JAN-mar sun-sat",
  // malformed items: two slashes, two hyphens, a non-numeric step, values that are not numbers
  "1/2/3 * * * *", "1-2-3 * * * *", "0 5/1x * * *", "5a * * * *", "a5 * * * *", "123 * * * *", "0 0 * foo *", "0 0 * * funday",
  "0 24 * * *", "60 * * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 7", "0 */0 * * *", "0 5-1 * * *", "0 */6 * *", "0 */6 * * * *", "@every", "", "x * * * *",
];

const token = fc.oneof(
  fc.constantFrom("*", "?", "jan", "dec", "sun", "sat", "MON", "foo"),
  fc.integer({ min: 0, max: 70 }).map(String),
);
const item = fc
  .tuple(token, fc.option(token, { nil: undefined }), fc.option(fc.integer({ min: 0, max: 70 }), { nil: undefined }))
  .map(([low, high, step]) => `${low}${high === undefined ? "" : `-${high}`}${step === undefined ? "" : `/${step}`}`);
const field = fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => items.join(","));
const expression = fc.oneof(
  fc.array(field, { minLength: 4, maxLength: 6 }).map((fields) => fields.join(" ")),
  fc.constantFrom("@daily", "@weekly", "@monthly", "@yearly", "@annually", "@midnight", "@hourly", "@every 1h", "@reboot"),
);

/** Expressions the check accepts but robfig refuses (must stay empty). */
function looserThanRobfig(check: (text: string) => string | undefined, expressions: readonly string[]): string[] {
  const verdicts = robfigAccepts(expressions);
  return expressions.filter((text, index) => check(text) === undefined && !verdicts[index]);
}

describe("cronScheduleProblem's messages", () => {
  it("name the field, and offer names only where the field takes them", () => {
    const month = cronScheduleProblem("0 0 * foo *") ?? "";
    const minute = cronScheduleProblem("x * * * *") ?? "";
    expect(month).toMatch(/month field "foo" .*or a name/);
    expect(minute).toMatch(/minute field "x" [^;]*number;/);
    expect(minute).not.toMatch(/or a name/);
  });
});

describe("management.backups.schedule against robfig/cron (what k3s runs)", () => {
  it("agrees with robfig on hand-picked schedules", () => {
    const robfig = robfigAccepts(handPicked);
    expect(handPicked.map((text, index) => [text, cronScheduleProblem(text) === undefined, robfig[index]])).toEqual(
      handPicked.map((text, index) => [text, robfig[index], robfig[index]]),
    );
  });

  it("accepts nothing robfig refuses, over generated expressions", () => {
    const samples = fc.sample(expression, { numRuns: 3000, seed: 20261201 });
    expect(looserThanRobfig(cronScheduleProblem, samples)).toEqual([]);
    // The sample is not trivial: it holds schedules both accept.
    expect(samples.filter((text) => cronScheduleProblem(text) === undefined).length).toBeGreaterThan(20);
  });

  it("negative control: a check that accepts too much is caught", () => {
    const tooLoose = (text: string) => (text.trim().split(/\s+/).length === 5 ? undefined : "no");
    expect(looserThanRobfig(tooLoose, fc.sample(expression, { numRuns: 500, seed: 1 })).length).toBeGreaterThan(0);
  });
});
