// The small Go programs under tests/go/ that tests use as oracles (Go's net.ParseCIDR, robfig/cron,
// CAPI's template rendering and upgrade planner): built from the Go module cache (go.sum is written
// in the temporary copy), once per source content, and kept in ~/.cache/capi-fleet as the other
// built tools are. The proxy is asked only when the caller allows it and the cache lacks a module.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { repoRoot } from "./stack-files";

/** The cache directory of built tools (CAPI_FLEET_CACHE, else ~/.cache/capi-fleet). */
export const cacheRoot = () => process.env["CAPI_FLEET_CACHE"] ?? path.join(process.env["XDG_CACHE_HOME"] ?? path.join(homedir(), ".cache"), "capi-fleet");

/**
 * Builds tests/go/<name>; `unavailable` says why not (say so, never guess). With `fromProxy`, a
 * build that fails offline is tried once more with the environment's GOPROXY (the Go module proxy).
 */
export function buildGoProgram(name: string, timeoutMs = 240_000, options: { fromProxy?: boolean } = {}): { binary: string } | { unavailable: string } {
  const source = path.join(repoRoot, "tests", "go", name);
  const digest = createHash("sha256");
  for (const file of readdirSync(source).sort()) digest.update(file).update(readFileSync(path.join(source, file)));
  const cacheDir = path.join(cacheRoot(), "go-programs", name, digest.digest("hex").slice(0, 16));
  const binary = path.join(cacheDir, name);
  if (existsSync(binary)) return { binary };
  const workDir = mkdtempSync(path.join(tmpdir(), `capi-fleet-${name}-`));
  try {
    cpSync(source, workDir, { recursive: true });
    const goBuild = (proxy: Record<string, string>) =>
      spawnSync("go", ["build", "-o", name, "."], { cwd: workDir, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, GOFLAGS: "-mod=mod", ...proxy } });
    let build = goBuild({ GOPROXY: "off", GOSUMDB: "off" });
    if ((build.error || build.status !== 0) && options.fromProxy) build = goBuild({});
    if (build.error || build.status !== 0) {
      const from = options.fromProxy ? "the Go module cache or proxy" : "the Go module cache";
      return { unavailable: `tests/go/${name} could not be built from ${from}: ${build.error?.message ?? build.stderr.trim()}` };
    }
    mkdirSync(cacheDir, { recursive: true });
    // Copied next to its place, then renamed: a concurrent test never runs a half-written binary.
    cpSync(path.join(workDir, name), `${binary}.${process.pid}`);
    renameSync(`${binary}.${process.pid}`, binary);
    return { binary };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
