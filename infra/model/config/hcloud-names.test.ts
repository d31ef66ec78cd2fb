// Warnings, not problems, for server types and images outside the catalog's lists (hcloud-names.ts).
import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import { baseline, existingMode, pool0, toInput } from "../../../tests/support/fleet-config-fixtures";
import { parseFleetConfig } from "../stack/validate-fleet-config";

describe("parseFleetConfig", () => {
  it("warns, without refusing, about server types and images this release does not know", () => {
    const raw = baseline();
    raw.management.serverType = "cx99";
    raw.tenants[0]!.image = "my-snapshot";
    ((raw.tenants[1]!.workers as Record<string, unknown>[])[0]!).machineType = "cax99";
    const config = parseFleetConfig(toInput(raw));
    expect(config.warnings.map((warning) => warning.path)).toEqual(["management.serverType", "tenants[0].image", "tenants[1].workers[0].machineType"]);
    expect(config.warnings[0]!.message).toContain("hcloud server-type list");
    expect(parseFleetConfig(toInput(baseline())).warnings).toEqual([]);
  });
});

describe("parseFleetConfig: errors name the key path, the value and what is allowed", () => {
  it("warns about a pool's own image and the management image, and never about existing mode's absent servers", () => {
    const raw = baseline();
    raw.management.image = "my-management-snapshot";
    pool0(raw, 1).image = "my-pool-snapshot";
    const warnings = parseFleetConfig(toInput(raw)).warnings;
    expect(warnings.map((warning) => warning.path)).toEqual(["management.image", "tenants[1].workers[0].image"]);
    for (const warning of warnings) expect(warning.message).toContain(catalog.hcloud.systemImages.join(", "));
    pool0(raw, 1).image = catalog.hcloud.systemImages[0];
    raw.management.image = catalog.hcloud.systemImages[0];
    expect(parseFleetConfig(toInput(raw)).warnings).toEqual([]);
    const existing = baseline();
    existingMode(existing);
    expect(parseFleetConfig(toInput(existing)).warnings).toEqual([]);
  });
});

describe("parseFleetConfig: messages name the value and the key to change", () => {
  it("warns about an unknown control-plane server type at its key", () => {
    const raw = baseline();
    (raw.tenants[1]!.controlPlane as Record<string, unknown>).machineType = "cx99";
    expect(parseFleetConfig(toInput(raw)).warnings.map((warning) => warning.path)).toEqual(["tenants[1].controlPlane.machineType"]);
  });
});
