import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { deployedServerTypesFrom, resizeRunbookSection, serverTypeChangeProblem } from "./management-server-type";

// What the stack's last `managementServerTypes` output records, and the refusal of another
// `management.serverType` (infra/management-server-type.test.ts runs it through the program).

describe("what the record says", () => {
  const record = (entries: Record<string, string>) => deployedServerTypesFrom(entries).serverTypes;

  it("names each server still on another type, mid-resize", () => {
    const problem = serverTypeChangeProblem(record({ "f-mgmt-2": "cx33", "f-mgmt-1": "cx43", "f-mgmt-3": "cx33" }), "cx43");
    expect(problem).toMatch(/^"cx43" differs from the type the servers run \(f-mgmt-1: cx43, f-mgmt-2: cx33, f-mgmt-3: cx33\)/);
    expect(problem).toContain("keep the type they run");
    expect(serverTypeChangeProblem(record({ "f-mgmt-1": "cx43", "f-mgmt-2": "cx43" }), "cx43")).toBeUndefined();
  });

  it.each([["a list", ["cx33"]], ["an empty mapping", {}], ["a type that is not text", { "f-mgmt-1": 33 }], ["an empty type", { "f-mgmt-1": "" }], ["one good and one bad type", { "f-mgmt-1": "cx33", "f-mgmt-2": 33 }], ["a string", "cx33"], ["a number", 33]])("ignores %s, saying so", (_label, output) => {
    expect(deployedServerTypesFrom(output)).toEqual({ serverTypes: undefined, ignored: true });
  });
});

describe("a type change against the record", () => {
  it("reads a first deployment (no output) as nothing recorded, not as ignored", () => {
    expect(deployedServerTypesFrom(undefined)).toEqual({ serverTypes: undefined, ignored: false });
    expect(deployedServerTypesFrom(null)).toEqual({ serverTypes: undefined, ignored: false });
    expect(deployedServerTypesFrom({ "f-mgmt-1": "cx33" })).toEqual({ serverTypes: new Map([["f-mgmt-1", "cx33"]]), ignored: false });
  });

  it("accepts any type when nothing is recorded, and the type the servers run", () => {
    expect(serverTypeChangeProblem(undefined, "cx43")).toBeUndefined();
    expect(serverTypeChangeProblem(new Map([["f-mgmt-1", "cx33"]]), "cx33")).toBeUndefined();
  });

  it("refuses another type, naming the one to keep and the runbook section", () => {
    expect(serverTypeChangeProblem(new Map([["f-mgmt-1", "cx33"]]), "cx43")).toBe(
      '"cx43" differs from the type the servers run (f-mgmt-1: cx33), and Pulumi does not resize running servers: ' +
        "the provider would power off every server at once to change its type and grow its disk for good; " +
        `keep "cx33", resize them one at a time by hand and record it with \`pulumi up --refresh\` (${resizeRunbookSection}), then set the new type`,
    );
  });

  it("names a runbook section that exists", () => {
    const [page, title] = resizeRunbookSection.split(", ");
    const headings = readFileSync(path.join(repoRoot, page!), "utf8").match(/^#+ .*$/gm) ?? [];
    expect(headings.some((heading) => heading.endsWith(title!.replaceAll("*", "")))).toBe(true);
  });
});
