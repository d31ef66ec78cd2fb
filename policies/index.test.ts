import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it, vi } from "vitest";
import { allRules } from "./rules";

// The real PolicyPack constructor starts the gRPC server the engine talks to; here it only records its arguments.
const constructed = vi.hoisted(() => [] as unknown[][]);
vi.mock("@pulumi/policy", () => ({
  PolicyPack: function PolicyPack(...args: unknown[]) {
    constructed.push(args);
  },
}));

describe("the pack's entry point", () => {
  it("constructs one pack with every rule, named after the program it guards (the engine prints it as <name>@v<version>)", async () => {
    await import("./index.js");
    const project = (parse(readFileSync(path.join(__dirname, "..", "Pulumi.yaml"), "utf8")) as { name: string }).name;
    expect(constructed).toEqual([[project, { policies: allRules }]]);
  });
});
