import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { checkoutRoot } from "../../tests/stack-files";
import { catalog } from "./catalog";
import { carenHelmAddonsConfigMap, ciliumHelmAddonEntry, helmAddonEntryText } from "./caren-helm-addons";

// CAREN's chart values at the catalog's release, from the project's upstream data copy next to the
// checkout (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// charts/cluster-api-runtime-extensions-nutanix/values.yaml); unverified when it is not there.
const chartValuesFile = path.resolve(checkoutRoot, "..", "shared", "upstream", `caren-${catalog.caren.chart.version}`, "chart", "values.yaml");

describe("CAREN's helm-addons ConfigMap", () => {
  it("is the one CAREN's chart creates and hands its manager by default", (context) => {
    if (!existsSync(chartValuesFile)) return context.skip(`UNVERIFIED: ${chartValuesFile} is not there`);
    const values = parse(readFileSync(chartValuesFile, "utf8")) as { helmAddonsConfigMap?: string };
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
