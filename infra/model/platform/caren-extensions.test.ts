import semver from "semver";
import { describe, expect, it } from "vitest";
import { carenExtensionNames } from "./caren-extensions";
import { catalog } from "../versions/catalog";
import { carenPatchGeneration } from "../versions/compatibility";

// GeneratePatches names are versioned: the generation each CAREN release registers
// (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix: pkg/handlers/<p>/mutation/metapatch_handler.go).
describe("carenPatchGeneration", () => {
  it.each([
    ["v0.33.4", 4],
    ["v0.40.0", 5],
    ["v0.41.8", 5],
    ["v0.45.0", 6],
    ["v0.47.0", 6],
    ["v0.50.0", 6],
  ])("CAREN %s registers configpatch generation v%i", (version, generation) => {
    expect(carenPatchGeneration(version)).toBe(generation);
  });

  it.each([
    ["v0.51.0", /CAREN v0\.51\.0 has no entry in the extension-name table/],
    ["v0.44.0", /has no entry/],
    ["v0.42.1", /has no entry/],
    ["0.50.0", /is not a release tag such as v/],
    ["latest", /is not a release tag/],
  ])("refuses %s rather than guessing", (version, message) => {
    expect(() => carenPatchGeneration(version)).toThrow(message);
  });

  it("lists the releases it knows, range by range, when it refuses one", () => {
    const message = (() => {
      try {
        carenPatchGeneration("v0.51.0");
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    })();
    const known = /\(known: (.+?)\)\. /.exec(message)?.[1]?.split("; ") ?? [];
    expect(known.length).toBeGreaterThan(1);
    // Each listed range is one the table answers for, and together they cover every release it knows.
    for (const [version, generation] of [["v0.33.4", 4], ["v0.41.8", 5], ["v0.50.0", 6]] as const) {
      expect(known.filter((range) => semver.satisfies(version, range)), version).toHaveLength(1);
      expect(carenPatchGeneration(version)).toBe(generation);
    }
    expect(message).toContain("metapatch_handler.go");
  });
});

describe("carenExtensionNames", () => {
  it("names the v0.50.0 generic handlers with hook suffixes and the ExtensionConfig", () => {
    const names = carenExtensionNames("v0.50.0");
    expect(names.extensionConfig).toBe("cluster-api-runtime-extensions-nutanix");
    expect(names.clusterConfigVariables("generic")).toBe("genericclusterconfigvars-dv.cluster-api-runtime-extensions-nutanix");
    expect(names.clusterPatches("generic")).toBe("genericclusterv6configpatch-gp.cluster-api-runtime-extensions-nutanix");
    expect(names.workerPatches("generic")).toBe("genericworkerv6configpatch-gp.cluster-api-runtime-extensions-nutanix");
  });

  it("names the v0.41.8 handlers one generation earlier", () => {
    const names = carenExtensionNames("v0.41.8");
    expect(names.clusterPatches("generic")).toBe("genericclusterv5configpatch-gp.cluster-api-runtime-extensions-nutanix");
    expect(names.workerPatches("docker")).toBe("dockerworkerv5configpatch-gp.cluster-api-runtime-extensions-nutanix");
  });

  it("names the docker schema handlers", () => {
    const names = carenExtensionNames("v0.50.0");
    expect(names.clusterConfigVariables("docker")).toBe("dockerclusterconfigvars-dv.cluster-api-runtime-extensions-nutanix");
    expect(names.workerConfigVariables("docker")).toBe("dockerworkerconfigvars-dv.cluster-api-runtime-extensions-nutanix");
  });

  it("defaults to the catalog's CAREN release and chart name", () => {
    const names = carenExtensionNames();
    expect(names.extensionConfig).toBe(catalog.caren.chart.chart);
    expect(names.patchGeneration).toBe(carenPatchGeneration(catalog.caren.chart.version));
    expect(names.clusterPatches("generic")).toMatch(/^genericclusterv\d+configpatch-gp\./);
  });

  it("never produces the blog-post names (no suffix, v7 on a released CAREN)", () => {
    const all = ["generic", "docker"].flatMap((provider) => {
      const names = carenExtensionNames("v0.50.0");
      const p = provider as "generic" | "docker";
      return [names.clusterConfigVariables(p), names.clusterPatches(p), names.workerPatches(p)];
    });
    for (const name of all) {
      expect(name).toMatch(/-(dv|gp)\.cluster-api-runtime-extensions-nutanix$/);
      expect(name).not.toContain("v7");
    }
  });
});
