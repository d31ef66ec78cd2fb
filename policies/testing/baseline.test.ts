import { describe, expect, it } from "vitest";
import { allRules } from "../rules";
import { baselineFleet } from "./baseline";
import { evaluate } from "./harness";

describe("the baseline fleet", () => {
  it("passes every rule, so each rule test's single mutation is what fails it", async () => {
    expect(await evaluate(allRules, baselineFleet())).toEqual([]);
  });
});
