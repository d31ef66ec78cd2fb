import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/stack-files";
import { toolchainPluginRows } from "../support/plugins";

// Repository rules that review tends to miss: versions live in the catalog only, and the
// domain model stays free of Pulumi so the policy pack can share it.

const catalogFile = "infra/model/versions/catalog.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith(".d.ts") && !file.includes("node_modules"))
    .map((file) => path.join(dir, file));
}

/** Quoted version literals such as "v1.34.6", "1.2.3" or "v1.34.6+k3s1". */
export function versionLiterals(text: string): string[] {
  return [...text.matchAll(/["'`]v?\d+\.\d+\.\d+(\+k3s\d+)?["'`]/g)].map((match) => match[0]);
}

/** Imports of any @pulumi package. */
export function pulumiImports(text: string): string[] {
  return [...text.matchAll(/(?:from|import|require\()\s*["'](@pulumi\/[^"']+)["']/g)].map((match) => match[1]!);
}

describe("version literals", () => {
  it("appear only in the catalog", () => {
    const offenders = [...sourceFiles("infra"), ...sourceFiles("components"), ...sourceFiles("policies")]
      .filter((file) => file !== catalogFile)
      .flatMap((file) => versionLiterals(readFileSync(path.join(repoRoot, file), "utf8")).map((literal) => `${file}: ${literal}`));
    expect(offenders).toEqual([]);
  });

  it("are detected (negative control)", () => {
    expect(versionLiterals('const capi = "v1.12.11"; const k3s = `v1.34.6+k3s1`;')).toEqual(['"v1.12.11"', "`v1.34.6+k3s1`"]);
    expect(versionLiterals('const cidr = "10.0.0.0/16"; const ip = "10.0.1.10";')).toEqual([]);
    expect(versionLiterals(readFileSync(path.join(repoRoot, catalogFile), "utf8")).length).toBeGreaterThan(3);
  });
});

describe("the domain model", () => {
  it("imports no Pulumi package", () => {
    const offenders = sourceFiles("infra/model").flatMap((file) =>
      pulumiImports(readFileSync(path.join(repoRoot, file), "utf8")).map((name) => `${file}: ${name}`),
    );
    expect(offenders).toEqual([]);
  });

  it("would be caught importing one (negative control)", () => {
    expect(pulumiImports('import * as pulumi from "@pulumi/pulumi";\nconst k = require("@pulumi/kubernetes");')).toEqual([
      "@pulumi/pulumi",
      "@pulumi/kubernetes",
    ]);
    expect(pulumiImports(readFileSync(path.join(repoRoot, "infra/config.ts"), "utf8"))).toContain("@pulumi/pulumi");
  });
});

/** `name version` of each row in tools/toolchain's PLUGINS block. */
export function toolchainPlugins(script: string): string[] {
  return toolchainPluginRows(script).map((fields) => fields.slice(0, 2).join(" "));
}

describe("the offline toolchain", () => {
  const requireFromRepo = (name: string) =>
    JSON.parse(readFileSync(path.join(repoRoot, "node_modules", name, "package.json"), "utf8")) as {
      pulumi?: { resource?: boolean; name?: string; version?: string };
    };

  it("pins one plugin per provider SDK in package.json, at the SDK's exact plugin version; other rows serve a named test", () => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const providers = Object.keys(manifest.dependencies)
      .map((name) => requireFromRepo(name).pulumi)
      .filter((block) => block?.resource === true)
      .map((block) => `${block?.name ?? ""} ${block?.version ?? ""}`)
      .sort();
    expect(providers.length).toBeGreaterThan(0);
    const rows = toolchainPlugins(readFileSync(path.join(repoRoot, "tools", "toolchain"), "utf8"));
    expect(rows.filter((row) => providers.includes(row)).sort()).toEqual(providers);
    // A row no SDK asks for must name the test that uses it.
    const testOnly = rows.filter((row) => !providers.includes(row)).map((row) => row.replace(" ", "@"));
    const engineTest = readFileSync(path.join(repoRoot, "tests", "in-the-loop", "policy-pack-real-engine.test.ts"), "utf8");
    expect(testOnly.filter((row) => !engineTest.includes(`"${row}"`))).toEqual([]);
  });

  it("reads the pins block (negative control)", () => {
    const sample = "PLUGINS='\n# NAME VERSION\nkubernetes    4.31.0   mod   pin\n'\n";
    expect(toolchainPlugins(sample)).toEqual(["kubernetes 4.31.0"]);
    expect(toolchainPlugins(sample)).not.toContain("kubernetes 4.32.0");
  });
});
