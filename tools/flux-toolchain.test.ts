import { mkdtempSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { buildWithoutProxy, runToolchainScript, scratchDir } from "../tests/support/script-harness";

// tools/flux-toolchain without building anything: its versions come from the catalog (no second
// literal), a missing Go fails at once, and an unreachable proxy fails fast without leaving a
// half-built cache that looks finished. The build itself runs in tests/in-the-loop/flux-in-the-loop.test.ts.

const scratch = scratchDir("flux-toolchain-test");
const run = (args: string[], env: Record<string, string> = {}, withGo = true) => runToolchainScript("flux-toolchain", args, env, withGo);

describe("tools/flux-toolchain", () => {
  it("takes both controller versions from the catalog, and keys its cache on them", () => {
    const { code, output } = run(["pins"]);
    expect(code).toBe(0);
    const { sourceController, kustomizeController } = catalog.flux.controllers;
    expect(output).toContain(`source-controller: ${sourceController}\nkustomize-controller: ${kustomizeController}\n`);
    expect(output).toMatch(new RegExp(`^pinset-key: s${sourceController.replace(/\./g, "\\.")}-k${kustomizeController.replace(/\./g, "\\.")}-[0-9a-f]{12}$`, "m"));
  });

  it("builds the Flux Operator at the catalog's chart version, under a cache key of its own", () => {
    const { code, output } = run(["pins"]);
    expect(code).toBe(0);
    const version = `v${catalog.flux.operatorChart.version}`;
    expect(output).toContain(`flux-operator: ${version}\n`);
    expect(output).toMatch(new RegExp(`^operator-key: o${version.replace(/\./g, "\\.")}-[0-9a-f]{12}$`, "m"));
  });

  it("fails at once without Go, naming what is needed", () => {
    const { code, output } = run(["build"], { CAPI_FLEET_CACHE: mkdtempSync(path.join(scratch, "cache-")) }, false);
    expect(code).toBe(1);
    expect(output).toContain("Go is missing: install Go >= 1.26");
  });

  it("fails fast when the Go module proxy cannot serve the module, leaving nothing that looks built", () => {
    const { code, output, ms, doneMarkers } = buildWithoutProxy("flux-toolchain", scratch);
    expect(code).toBe(1);
    expect(output).toContain(`could not download github.com/fluxcd/source-controller@${catalog.flux.controllers.sourceController} from the Go module proxy`);
    expect(ms).toBeLessThan(30_000);
    expect(doneMarkers).toEqual([]);
  });

});
