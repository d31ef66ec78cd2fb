import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { intersectRanges, managementKubernetesConstraints } from "../../infra/model/versions/compatibility";
import { describeRange } from "../../infra/model/versions/kubernetes-version";
import { catalogSummaryMarkdown } from "../../infra/model/versions/pinned-set";
import { repoRoot } from "../support/stack-files";

// The README is the front door (short, linking every page); docs/platform.md holds the
// pinned-versions table generated from the catalog.

const begin = "<!-- catalog:begin (generated from infra/model/versions/catalog.ts; tests/repo/readme.test.ts checks it) -->";
const end = "<!-- catalog:end -->";
const platformPage = path.join(repoRoot, "docs", "platform.md");

/** The pinned-versions table between the markers, or undefined when the markers are missing. */
export function readmeCatalogTable(markdown: string): string | undefined {
  const start = markdown.indexOf(begin);
  const stop = markdown.indexOf(end);
  return start < 0 || stop < start ? undefined : markdown.slice(start + begin.length, stop).trim();
}

describe("the pinned-versions table in docs/platform.md", () => {
  it("is exactly the catalog's (regenerate it from catalogSummaryMarkdown() after a catalog change)", () => {
    const page = readFileSync(platformPage, "utf8");
    expect(readmeCatalogTable(page)).toBe(catalogSummaryMarkdown());
  });

  it("negative control: a catalog bump without regenerating the table fails that check", () => {
    const page = readFileSync(platformPage, "utf8");
    // The real catalog, changed in place as a version bump would change it.
    const caph = catalog.caph as { version: string };
    const pinned = caph.version;
    caph.version = "v9.9.9";
    try {
      expect(readmeCatalogTable(page)).not.toBe(catalogSummaryMarkdown());
    } finally {
      caph.version = pinned;
    }
    expect(readmeCatalogTable(page)).toBe(catalogSummaryMarkdown());
    // The page without its markers.
    expect(readmeCatalogTable(page.replace(begin, ""))).toBeUndefined();
  });
});

describe("the management range sentence in docs/platform.md", () => {
  const sentence = /today \*\*([^*]+)\*\* for k3s and\s+\*\*([^*]+)\*\* for an existing cluster/;

  it("names the ranges the catalog's constraints allow together, per mode", () => {
    const page = readFileSync(platformPage, "utf8");
    const found = sentence.exec(page);
    expect(found, "the sentence under «Pinned versions»").not.toBeNull();
    expect({ k3s: found![1], existing: found![2] }).toEqual({
      k3s: describeRange(intersectRanges(managementKubernetesConstraints("hetzner"))!),
      existing: describeRange(intersectRanges(managementKubernetesConstraints("existing"))!),
    });
  });
});

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown file's headings (outside code blocks), GitHub's `-1`, `-2` for repeats. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} +(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative link targets of a Markdown file (outside code blocks and code spans). */
export function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, "``");
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

/** What is wrong with each relative link of `file` (a path under `root`): a missing file, or a missing heading. */
export function brokenLinks(root: string, file: string, read: (absolute: string) => string | undefined): string[] {
  const source = read(path.join(root, file));
  if (source === undefined) return [`${file}: cannot be read`];
  return relativeLinks(source).flatMap((link) => {
    const [target = "", anchor] = link.split("#", 2);
    const absolute = target === "" ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), target);
    const text = read(absolute);
    if (text === undefined && !(target !== "" && existsSync(absolute))) return [`${file}: ${link}: no such file`];
    if (anchor === undefined || !absolute.endsWith(".md")) return [];
    return headingAnchors(text ?? "").has(anchor) ? [] : [`${file}: ${link}: no heading with anchor #${anchor}`];
  });
}

const readRepoFile = (absolute: string): string | undefined => {
  try {
    return readFileSync(absolute, "utf8");
  } catch {
    return undefined;
  }
};

const docsPages = readdirSync(path.join(repoRoot, "docs"))
  .filter((name) => name.endsWith(".md"))
  .sort();

describe("the README as the front door", () => {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

  it("is at most 200 lines", () => {
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(200);
  });

  it("links every page in docs/", () => {
    expect(docsPages.length).toBeGreaterThan(5);
    const linked = new Set(relativeLinks(readme).map((link) => link.split("#")[0]));
    expect(docsPages.filter((page) => !linked.has(`docs/${page}`))).toEqual([]);
  });

  it("has the sections in order: two commands, a minimal fleet, day-2 work, what is verified, layout", () => {
    const order = ["## Two commands", "## A minimal fleet", "## Day-2 work", "## What is verified", "## Layout"].map((heading) => readme.indexOf(`\n${heading}`));
    expect(order.every((index) => index > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});

describe("relative links in README.md, policies/README.md and docs/*.md", () => {
  it("point at files that exist, and at headings that exist", () => {
    const files = ["README.md", "policies/README.md", ...docsPages.map((page) => `docs/${page}`)];
    expect(files.flatMap((file) => brokenLinks(repoRoot, file, readRepoFile))).toEqual([]);
  });

  it("negative control: a missing file, a missing heading and a link into a code block are told apart", () => {
    const pages: Record<string, string> = {
      "/r/README.md": [
        "# Title",
        "[ok](docs/a.md#the-pages-title-v2) [ok too](#title) [gone](docs/b.md) [bad anchor](docs/a.md#nope) [self](#missing)",
        "`[not a link](docs/c.md)` [web](https://example.com/x.md#y)",
        "```sh",
        "[in a block](docs/d.md)",
        "```",
      ].join("\n"),
      "/r/docs/a.md": "# The page's title: `v2`!\n",
    };
    expect(brokenLinks("/r", "README.md", (absolute) => pages[absolute])).toEqual([
      "README.md: docs/b.md: no such file",
      "README.md: docs/a.md#nope: no heading with anchor #nope",
      "README.md: #missing: no heading with anchor #missing",
    ]);
  });

  it("slugs headings as GitHub does", () => {
    expect(headingSlug("10. Upgrade the management cluster")).toBe("10-upgrade-the-management-cluster");
    expect(headingSlug("k3s upgrades in place (`components/k3s-upgrades/`)")).toBe("k3s-upgrades-in-place-componentsk3s-upgrades");
    expect(headingSlug("When the management cluster must reach a tenant's registries")).toBe("when-the-management-cluster-must-reach-a-tenants-registries");
    expect([...headingAnchors("# A\n## A\n```\n# B\n```\n")]).toEqual(["a", "a-1"]);
  });
});
