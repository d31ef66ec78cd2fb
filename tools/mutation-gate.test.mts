// The mutation gate's per-file rule (tools/mutation-gate.mjs): StrykerJS's own break applies to
// the touched files together, so a weakened file must fail even next to a well-tested one.
import { describe, expect, it } from "vitest";
import { filesBelow } from "./mutation-gate.mjs";

const file = (statuses: string[]) => ({ mutants: statuses.map((status) => ({ status })) });

describe("filesBelow", () => {
  it("names the weakened file that the aggregate score would hide", () => {
    const report = { files: { "big.ts": file(Array<string>(19).fill("Killed")), "weak.ts": file(["Killed", "Survived"]) } };
    expect(filesBelow(report, 70)).toEqual([{ file: "weak.ts", score: 50 }]);
  });

  it("counts timeouts as detected, no coverage as not, and ignores ignored and compile errors", () => {
    const report = { files: { "a.ts": file(["Timeout", "Killed", "Killed", "NoCoverage", "Ignored", "CompileError"]) } };
    expect(filesBelow(report, 75)).toEqual([]);
    expect(filesBelow(report, 75.01)).toEqual([{ file: "a.ts", score: 75 }]);
  });

  it("gives no score to a file without scored mutants", () => {
    expect(filesBelow({ files: { "static.ts": file(["Ignored", "CompileError"]) } }, 70)).toEqual([]);
  });
});
