import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { catalog } from "../infra/model/catalog";
import { repoRoot } from "./stack-files";

// scripts/capi-toolchain without building anything: its version comes from the catalog (no second
// literal), a bad version or a missing Go fails at once with a clear message, and an unreachable
// proxy fails fast without leaving a half-built cache that looks finished.

const scratch = mkdtempSync(path.join(tmpdir(), "capi-toolchain-test-"));
afterAll(() => {
  // Module caches are read-only by design; make them removable first.
  spawnSync("chmod", ["-R", "u+w", scratch]);
  rmSync(scratch, { recursive: true, force: true });
});

const goDir = (() => {
  const found = spawnSync("bash", ["-c", "command -v go"], { encoding: "utf8" }).stdout.trim();
  return found ? path.dirname(found) : "";
})();

function run(args: string[], env: Record<string, string> = {}, withGo = true) {
  const started = Date.now();
  const result = spawnSync("bash", [path.join(repoRoot, "scripts", "capi-toolchain"), ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { HOME: process.env.HOME ?? "/root", PATH: [...(withGo && goDir ? [goDir] : []), "/usr/bin", "/bin"].join(":"), ...env },
    timeout: 60_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}`, ms: Date.now() - started };
}

describe("scripts/capi-toolchain", () => {
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

  it.runIf(goDir)("fails fast when the Go module proxy cannot serve the module, leaving nothing that looks built", () => {
    const cache = mkdtempSync(path.join(scratch, "cache-"));
    const { code, output, ms } = run(["build"], {
      GOPROXY: "off",
      GOFLAGS: "",
      GOMODCACHE: mkdtempSync(path.join(scratch, "gomod-")),
      GOCACHE: mkdtempSync(path.join(scratch, "gocache-")),
      CAPI_FLEET_CACHE: cache,
    });
    expect(code).toBe(1);
    expect(output).toContain(`could not download sigs.k8s.io/cluster-api@${catalog.clusterApi.version} from the Go module proxy`);
    expect(ms).toBeLessThan(30_000);
    expect(readdirSync(cache, { recursive: true, encoding: "utf8" }).filter((file) => file.includes(".done"))).toEqual([]);
  });
});
