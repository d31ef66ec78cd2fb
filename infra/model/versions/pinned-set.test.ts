import { describe, expect, it } from "vitest";
import { catalog, type Catalog } from "./catalog";
import { catalogSummary, catalogSummaryMarkdown } from "./pinned-set";

/** Every string the catalog holds, at any depth: the pins a row may show. */
function catalogStrings(value: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (typeof node === "string") found.add(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === "object" && node !== null) Object.values(node).forEach(walk);
  };
  walk(value);
  return found;
}

/** The cells of a Markdown table row (GFM: leading and trailing pipes, cells split on `|`). */
function cells(line: string): string[] {
  expect(line.startsWith("| ") && line.endsWith(" |"), line).toBe(true);
  return line.slice(2, -2).split(" | ");
}

/** A catalog whose CAPI pin moved to another release line. */
function withClusterApi(version: string): Catalog {
  const copy = structuredClone(catalog) as unknown as { clusterApi: { version: string } };
  copy.clusterApi.version = version;
  return copy as unknown as Catalog;
}

describe("catalogSummary", () => {
  it("has one row per component, each with a pin the catalog holds and a reason", () => {
    const rows = catalogSummary();
    const pins = catalogStrings(catalog);
    expect(new Set(rows.map((row) => row.component)).size).toBe(rows.length);
    for (const row of rows) {
      expect(row.component.trim(), JSON.stringify(row)).not.toBe("");
      expect(row.why.trim(), row.component).not.toBe("");
      expect(row.why, row.component).not.toMatch(/undefined|NaN|\[object/);
      // A row may list several pins (the tenant versions): each is a catalog value, none glued to the next.
      for (const pin of row.version.split(", ")) expect(pins, `${row.component}: ${pin}`).toContain(pin);
    }
    expect(rows.find((row) => row.version.includes(", "))?.version.split(", ")).toEqual(catalog.tenantKubernetesVersions);
  });

  it("cites the kubelet-api-admin minimum of the pinned CAPI's own release line", () => {
    const capi = (c: Catalog) => catalogSummary(c).find((row) => row.version === c.clusterApi.version);
    for (const [line, minimum] of Object.entries(catalog.kubeletApiAdminRule.minimumClusterApi)) {
      expect(capi(withClusterApi(`v${line}.99`))?.why, line).toContain(`≥ ${minimum} `);
    }
    // A line the table does not cover cites no minimum, and differs from a covered line's text only there.
    const beyond = capi(withClusterApi("v9.99.0"))?.why ?? "";
    const covered = capi(withClusterApi(`v${Object.keys(catalog.kubeletApiAdminRule.minimumClusterApi)[0] ?? ""}.99`))?.why ?? "";
    expect(beyond).not.toContain("kubelet-api-admin");
    expect(beyond).toBe(covered.replace(/; [^;]*kubelet-api-admin[^;]*/, ""));
  });
});

describe("catalogSummaryMarkdown", () => {
  it("is a GFM table: a header, a delimiter row of as many cells, then each row's cells in order", () => {
    const [header = "", delimiter = "", ...body] = catalogSummaryMarkdown().split("\n");
    const columns = cells(header);
    expect(columns).toHaveLength(3);
    expect(columns.every((cell) => cell.trim() !== "")).toBe(true);
    // A GFM delimiter cell is dashes, optionally with colons at either end.
    expect(cells(delimiter).map((cell) => /^:?-{3,}:?$/.test(cell))).toEqual(columns.map(() => true));
    expect(body.map(cells)).toEqual(catalogSummary().map((row) => [row.component, `\`${row.version}\``, row.why]));
  });
});
