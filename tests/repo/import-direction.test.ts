import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { directionProblems, importCycles, importEdges, modelLayers, resolveRelative, type ImportEdge } from "../support/import-graph";
import { repoRoot } from "../support/stack-files";

/**
 * The direction of travel (docs/architecture.md, *Layout*): the composition root imports the
 * components, the components and the policy pack import the model, and inside the model each
 * concern imports only the ones below it. Read from the checkout's real import statements.
 */

const sourceFiles = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "infra", "components", "policies", "scripts", "tools", "tests"], {
  cwd: repoRoot,
  encoding: "utf8",
})
  .split("\n")
  .filter((file) => /\.(ts|mts|mjs)$/.test(file) && !file.includes("node_modules/"));

describe("the program's imports", () => {
  it("run in one direction: no upward import between the model's concerns or the program's folders", () => {
    expect(directionProblems(importEdges(repoRoot, sourceFiles))).toEqual([]);
  });

  it("form no circle", () => {
    expect(importCycles(importEdges(repoRoot, sourceFiles))).toEqual([]);
  });

  it("come from files the scanner sees: the model's concerns are exactly the folders of infra/model", () => {
    const folders = readdirSync(path.join(repoRoot, "infra/model"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual([...modelLayers].sort());
    // The graph is not empty: the model's own imports are found (a scanner that found none would pass everything).
    const edges = importEdges(repoRoot, sourceFiles);
    expect(edges.some(({ from, to }) => from.startsWith("infra/model/tenant/") && to.startsWith("infra/model/config/"))).toBe(true);
    expect(edges.some(({ from, to }) => from.startsWith("components/") && to.startsWith("infra/model/"))).toBe(true);
  });
});

describe("the rules, on planted imports", () => {
  const edge = (from: string, to: string): ImportEdge => ({ from, to });

  it.each([
    ["a lower concern importing a higher one", edge("infra/model/config/x.ts", "infra/model/tenant/y.ts"), "config/ sits below tenant/"],
    ["the versions importing the platform", edge("infra/model/versions/x.ts", "infra/model/platform/y.ts"), "versions/ sits below platform/"],
    ["a contract file importing anything", edge("infra/model/contract/x.ts", "infra/model/versions/catalog.ts"), "a contract file imports nothing"],
    ["the model importing a component", edge("infra/model/tenant/x.ts", "components/tenant-cluster/index.ts"), "infra/model/ may import only infra/model/"],
    ["a component importing the composition root", edge("components/caren/index.ts", "infra/fleet.ts"), "components/ may import only components/, infra/model/"],
    ["the policy pack importing a component", edge("policies/rules/x.ts", "components/policy-facts.ts"), "policies/ may import only policies/, infra/model/"],
    ["program code importing test code", edge("infra/model/config/x.ts", "tests/support/stack-files.ts"), "imports test code"],
    ["a user's command importing development tooling", edge("scripts/plan.ts", "tools/bench.ts"), "scripts/ may import only scripts/, components/, infra/model/"],
    ["a file in a folder the order does not know", edge("infra/model/misc/x.ts", "infra/model/versions/catalog.ts"), "not a concern of the model's order"],
  ])("%s is refused", (_, planted, message) => {
    const problems = directionProblems([planted]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });

  it.each([
    ["a higher concern importing a lower one", edge("infra/model/tenant/x.ts", "infra/model/config/y.ts")],
    ["a file importing its own concern", edge("infra/model/platform/x.ts", "infra/model/platform/y.ts")],
    ["the composition root importing a component", edge("infra/fleet.ts", "components/caren/index.ts")],
    ["a test importing from anywhere", edge("infra/model/config/x.test.ts", "tests/support/stack-files.ts")],
    ["a script reading the contract", edge("scripts/fleet-backup.mjs", "infra/model/contract/outputs.ts")],
    ["development tooling driving the tests' mocks", edge("tools/benchmarks/program-run.ts", "tests/support/pulumi-mocks.ts")],
  ])("%s is allowed", (_, allowed) => {
    expect(directionProblems([allowed])).toEqual([]);
  });

  it("finds a circle, and only the files on it", () => {
    const cycles = importCycles([edge("a.ts", "b.ts"), edge("b.ts", "c.ts"), edge("c.ts", "a.ts"), edge("c.ts", "d.ts"), edge("e.ts", "e.ts")]);
    expect(cycles).toEqual(expect.arrayContaining([["a.ts", "b.ts", "c.ts"], ["e.ts"]]));
    expect(cycles).toHaveLength(2);
    expect(importCycles([edge("a.ts", "b.ts"), edge("b.ts", "c.ts")])).toEqual([]);
  });

  it("resolves specifiers as the repository's files are named", () => {
    const files = new Set(["infra/model/versions/catalog.ts", "policies/rules.ts", "components/helm-release/index.ts", "components/kube-client.mjs"]);
    const exists = (file: string) => files.has(file);
    expect(resolveRelative("infra/model/config/x.ts", "../versions/catalog", exists)).toBe("infra/model/versions/catalog.ts");
    expect(resolveRelative("policies/rules/x.ts", "../rules", exists)).toBe("policies/rules.ts");
    expect(resolveRelative("components/caren/index.ts", "../helm-release", exists)).toBe("components/helm-release/index.ts");
    expect(resolveRelative("tests/x.mts", "../infra/model/versions/catalog.js", exists)).toBe("infra/model/versions/catalog.ts");
    expect(resolveRelative("scripts/x.mjs", "../components/kube-client.mjs", exists)).toBe("components/kube-client.mjs");
    expect(resolveRelative("scripts/x.mjs", "node:path", exists)).toBeUndefined();
  });
});
