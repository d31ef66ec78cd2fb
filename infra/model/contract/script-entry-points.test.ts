import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { scriptEntryPoints } from "./script-entry-points";

// What Node.js runs for each entry point: the file, and the component program it imports.
const importedPrograms = (script: string): string[] =>
  [...readFileSync(path.join(repoRoot, script), "utf8").matchAll(/^import (?:[^"]+ from )?"(\.\.\/components\/[^"]+\.mjs)";$/gm)].map((match) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(script), match[1]!)),
  );

describe("the scripts' entry points", () => {
  it.each(Object.entries(scriptEntryPoints))("%s (%s) is a file in scripts/ that imports its component's program", (_, script) => {
    expect(path.posix.dirname(script)).toBe("scripts");
    const programs = importedPrograms(script);
    expect(programs).toHaveLength(1);
    expect(readdirSync(path.join(repoRoot, path.dirname(programs[0]!)))).toContain(path.basename(programs[0]!));
  });

  it("lists every file of scripts/ that only starts a component's program", () => {
    const starters = readdirSync(path.join(repoRoot, "scripts"))
      .filter((name) => name.endsWith(".mjs"))
      .map((name) => `scripts/${name}`)
      // The users' commands import only the shared Kubernetes client from components/.
      .filter((script) => importedPrograms(script).some((program) => program !== "components/kube-client.mjs"));
    expect(starters.sort()).toEqual(Object.values(scriptEntryPoints).sort());
  });
});
