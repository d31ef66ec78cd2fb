// The small Go programs under tests/go/ that tests use as oracles (Go's net.ParseCIDR, robfig/cron,
// CAPI's template rendering and upgrade planner): built with the Go module proxy (go downloads what
// the module cache lacks; go.sum is written in the temporary copy), once per source content, and
// kept in ~/.cache/capi-fleet as the other built tools are. Every caller builds what it uses, so no
// result depends on which test file ran first; a build that fails throws, with go's reason.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { repoRoot } from "./stack-files";

/** The cache directory of built tools (CAPI_FLEET_CACHE, else ~/.cache/capi-fleet). */
export const cacheRoot = () => process.env["CAPI_FLEET_CACHE"] ?? path.join(process.env["XDG_CACHE_HOME"] ?? path.join(homedir(), ".cache"), "capi-fleet");

/** Builds tests/go/<name> (or finds it built) and returns the binary; throws with go's reason when it cannot. */
export function buildGoProgram(name: string, timeoutMs = 900_000): { binary: string } {
  const source = path.join(repoRoot, "tests", "go", name);
  const digest = createHash("sha256");
  for (const file of readdirSync(source).sort()) digest.update(file).update(readFileSync(path.join(source, file)));
  const cacheDir = path.join(cacheRoot(), "go-programs", name, digest.digest("hex").slice(0, 16));
  const binary = path.join(cacheDir, name);
  if (existsSync(binary)) return { binary };
  const workDir = mkdtempSync(path.join(tmpdir(), `capi-fleet-${name}-`));
  try {
    cpSync(source, workDir, { recursive: true });
    const build = spawnSync("go", ["build", "-o", name, "."], { cwd: workDir, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, GOFLAGS: "-mod=mod" } });
    if (build.error || build.status !== 0) {
      throw new Error(`tests/go/${name} could not be built with the Go module proxy: ${build.error?.message ?? build.stderr.trim()}`);
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
