import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { carenChartDir } from "../../../tests/support/caren-variables";
import { skipIfDeclared } from "../../../tests/support/unverified";
import { catalog } from "../versions/catalog";
import { carenHelmAddonsConfigMap, ciliumHelmAddonEntry, helmAddonEntryText } from "./caren-helm-addons";

// CAREN's chart values at the catalog's release, through the resolver (tests/support/caren-variables.ts
// `carenChartDir`; nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// charts/cluster-api-runtime-extensions-nutanix/values.yaml).

describe("CAREN's helm-addons ConfigMap", () => {
  it("is the one CAREN's chart creates and hands its manager by default", (context) => {
    const chart = carenChartDir();
    if ("unavailable" in chart) return skipIfDeclared(context, chart.unavailable);
    const values = parse(readFileSync(path.join(chart.dir, "values.yaml"), "utf8")) as { helmAddonsConfigMap?: string };
    expect(values.helmAddonsConfigMap).toBe(carenHelmAddonsConfigMap);
  });

  it("holds the fleet's Cilium as one YAML document that reads back to the catalog's chart, version and repository", () => {
    const text = helmAddonEntryText(ciliumHelmAddonEntry());
    expect(parse(text)).toEqual(ciliumHelmAddonEntry());
    expect(Object.values(parse(text) as Record<string, string>).sort()).toEqual([catalog.cilium.chart, catalog.cilium.version, catalog.cilium.repository].sort());
    // Another Cilium reads back as itself, not as the catalog's.
    const other = { chart: "cilium", version: "1.2.3-rc.1", repository: "oci://registry.example/cilium" };
    expect(Object.values(parse(helmAddonEntryText(ciliumHelmAddonEntry(other))) as Record<string, string>).sort()).toEqual(Object.values(other).sort());
  });
});
