import { mkdtempSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { buildWithoutProxy, runToolchainScript, scratchDir } from "../tests/support/script-harness";

// tools/capi-toolchain without building anything: its version comes from the catalog (no second
// literal), a bad version or a missing Go fails at once with a clear message, and an unreachable
// proxy fails fast without leaving a half-built cache that looks finished.

const scratch = scratchDir("capi-toolchain-test");
const run = (args: string[], env: Record<string, string> = {}, withGo = true) => runToolchainScript("capi-toolchain", args, env, withGo);

describe("tools/capi-toolchain", () => {
  it("takes its version from the catalog, and the cache key from the version and the pins", () => {
    const { code, output } = run(["pins"]);
    expect(code).toBe(0);
    expect(output).toContain(`version: ${catalog.clusterApi.version}\n`);
    expect(output).toMatch(new RegExp(`^pinset-key: ${catalog.clusterApi.version.replace(/\./g, "\\.")}-[0-9a-f]{12}$`, "m"));
    // The same version passed explicitly gives the same key; another version another one.
    expect(run(["pins", catalog.clusterApi.version]).output).toBe(output);
    expect(run(["pins", "v1.0.0"]).output).not.toContain(`version: ${catalog.clusterApi.version}`);
  });

  it("refuses a version that is not a release tag (negative control)", () => {
    const { code, output } = run(["pins", "1.12"]);
    expect(code).toBe(1);
    expect(output).toContain("no usable CAPI version (got '1.12')");
  });

  it("fails at once without Go, naming what is needed", () => {
    const { code, output } = run(["build"], { CAPI_FLEET_CACHE: mkdtempSync(path.join(scratch, "cache-")) }, false);
    expect(code).toBe(1);
    expect(output).toContain("Go is missing: install Go >= 1.24");
  });

  it("fails fast when the Go module proxy cannot serve the module, leaving nothing that looks built", () => {
    const { code, output, ms, doneMarkers } = buildWithoutProxy("capi-toolchain", scratch);
    expect(code).toBe(1);
    expect(output).toContain(`could not download sigs.k8s.io/cluster-api@${catalog.clusterApi.version} from the Go module proxy`);
    expect(ms).toBeLessThan(30_000);
    expect(doneMarkers).toEqual([]);
  });

});
