import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { repoRoot } from "./stack-files";

// Shared by the tests that run repo scripts as processes against local TLS servers.

/** A throwaway CA and a server certificate for 127.0.0.1, made with openssl in a new temp dir. */
export function localServerCertificate(prefix: string): { dir: string; caPem: string; certPem: string; keyPem: string } {
  const dir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl("req", "-x509", ...ecKey, "-keyout", "server-ca.key", "-out", "server-ca.crt", "-days", "1", "-subj", "/CN=server-ca");
  openssl("req", ...ecKey, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=server");
  writeFileSync(path.join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "server-ca.crt", "-CAkey", "server-ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "server.ext");
  const read = (name: string) => readFileSync(path.join(dir, name), "utf8");
  return { dir, caPem: read("server-ca.crt"), certPem: read("server.crt"), keyPem: read("server.key") };
}

/** What a script run printed and how it ended. */
export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
  elapsedMs: number;
}

/** Runs a Node script with only PATH and the given environment, killed after `timeoutMs`. */
export function runNodeScript(script: string, env: Record<string, string>, timeoutMs = 20_000, args: readonly string[] = []): Promise<ScriptRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: timeoutMs });
    const run = { stdout: "", stderr: "", output: "" };
    child.stdout.on("data", (chunk: Buffer) => ((run.stdout += chunk.toString()), (run.output += chunk.toString())));
    child.stderr.on("data", (chunk: Buffer) => ((run.stderr += chunk.toString()), (run.output += chunk.toString())));
    child.on("close", (code) => {
      resolve({ code, ...run, elapsedMs: Date.now() - started });
    });
  });
}

/** The directory of the `go` on PATH ("" without Go): toolchain-script tests put only it on PATH. */
export const goDir = (() => {
  const found = spawnSync("bash", ["-c", "command -v go"], { encoding: "utf8" }).stdout.trim();
  return found ? path.dirname(found) : "";
})();

/**
 * A temp dir removed after the file's tests; Go's module caches in it are read-only by design,
 * so they are made removable first.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  afterAll(() => {
    spawnSync("chmod", ["-R", "u+w", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/**
 * Runs a Go toolchain script of the repository (`tools/<script>`) with only HOME, the system
 * bins and (unless `withGo` is false) Go on PATH, plus `env`: a test decides what it can reach.
 */
export function runToolchainScript(script: string, args: string[], env: Record<string, string> = {}, withGo = true): { code: number | null; output: string; ms: number } {
  const started = Date.now();
  const result = spawnSync("bash", [path.join(repoRoot, "tools", script), ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { HOME: process.env.HOME ?? "/root", PATH: [...(withGo && goDir ? [goDir] : []), "/usr/bin", "/bin"].join(":"), ...env },
    timeout: 60_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}`, ms: Date.now() - started };
}

/**
 * Runs a toolchain script's `build` with the Go module proxy off and empty Go and tool caches:
 * it must fail fast, and leave no `.done` marker that would make a later run think it built.
 */
export function buildWithoutProxy(script: string, scratch: string): { code: number | null; output: string; ms: number; doneMarkers: string[] } {
  const cache = mkdtempSync(path.join(scratch, "cache-"));
  const result = runToolchainScript(script, ["build"], {
    GOPROXY: "off",
    GOFLAGS: "",
    GOMODCACHE: mkdtempSync(path.join(scratch, "gomod-")),
    GOCACHE: mkdtempSync(path.join(scratch, "gocache-")),
    CAPI_FLEET_CACHE: cache,
  });
  return { ...result, doneMarkers: readdirSync(cache, { recursive: true, encoding: "utf8" }).filter((file) => file.includes(".done")) };
}

