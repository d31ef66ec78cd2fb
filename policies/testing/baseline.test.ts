import { describe, expect, it } from "vitest";
import { allRules } from "../rules";
import { baselineFleet, shardFleet } from "./baseline";
import { evaluate } from "./harness";

describe("the baseline fleet", () => {
  it("passes every rule, so each rule test's single mutation is what fails it", async () => {
    expect(await evaluate(allRules, baselineFleet())).toEqual([]);
  });

  it("passes every rule as a shard stack's tenants, with the platform imported from the management stack", async () => {
    expect(await evaluate(allRules, shardFleet())).toEqual([]);
  });
});
