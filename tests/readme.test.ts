import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { intersectRanges, managementKubernetesConstraints } from "../infra/model/versions/compatibility";
import { describeRange } from "../infra/model/versions/kubernetes-version";
import { catalogSummaryMarkdown } from "../infra/model/versions/pinned-set";
import { repoRoot } from "./stack-files";

const begin = "<!-- catalog:begin (generated from infra/model/versions/catalog.ts; tests/readme.test.ts checks it) -->";
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

  it("negative control: a catalog bump without regenerating the README fails that check", () => {
    const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
    // The real catalog, changed in place as a version bump would change it.
    const caph = catalog.caph as { version: string };
    const pinned = caph.version;
    caph.version = "v9.9.9";
    try {
      expect(readmeCatalogTable(readme)).not.toBe(catalogSummaryMarkdown());
    } finally {
      caph.version = pinned;
    }
    expect(readmeCatalogTable(readme)).toBe(catalogSummaryMarkdown());
    // The README without its markers.
    expect(readmeCatalogTable(readme.replace(begin, ""))).toBeUndefined();
  });
});

describe("the README's management range sentence", () => {
  const sentence = /today \*\*([^*]+)\*\* for k3s and\s+\*\*([^*]+)\*\* for an existing cluster/;

  it("names the ranges the catalog's constraints allow together, per mode", () => {
    const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
    const found = sentence.exec(readme);
    expect(found, "the sentence under «Pinned versions»").not.toBeNull();
    expect({ k3s: found![1], existing: found![2] }).toEqual({
      k3s: describeRange(intersectRanges(managementKubernetesConstraints("hetzner"))!),
      existing: describeRange(intersectRanges(managementKubernetesConstraints("existing"))!),
    });
  });
});
