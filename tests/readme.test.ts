import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalogSummaryMarkdown } from "../infra/model/pinned-set";
import { repoRoot } from "./stack-files";

const begin = "<!-- catalog:begin (generated from infra/model/catalog.ts; tests/readme.test.ts checks it) -->";
const end = "<!-- catalog:end -->";

/** The README's pinned-versions table, or undefined when the markers are missing. */
export function readmeCatalogTable(readme: string): string | undefined {
  const start = readme.indexOf(begin);
  const stop = readme.indexOf(end);
  return start < 0 || stop < start ? undefined : readme.slice(start + begin.length, stop).trim();
}

describe("the README's version table", () => {
  it("is exactly the catalog's (regenerate it from catalogSummaryMarkdown() after a catalog change)", () => {
    const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
    expect(readmeCatalogTable(readme)).toBe(catalogSummaryMarkdown());
  });

  it("would notice a stale version (negative control)", () => {
    const stale = `${begin}\n${catalogSummaryMarkdown().replace(/`v\d+\.\d+\.\d+`/, "`v0.0.1`")}\n${end}`;
    expect(readmeCatalogTable(stale)).not.toBe(catalogSummaryMarkdown());
    expect(readmeCatalogTable("no markers")).toBeUndefined();
  });
});
