// The one way tests get upstream material (a Go module's files at an exact version), in order:
// 1. the Go module proxy: `go mod download` fetches what the module cache lacks (never cache-only);
// 2. only where the proxy refuses the module: the project's unmodified data copy of the same files
//    in `../shared/upstream/<name>` next to the checkout, read in place, never copied;
// 3. otherwise `unavailable`, carrying the proxy's answer.
// An unreachable proxy, a missing `go` or a download that times out is no refusal: it throws, so
// the test fails loudly instead of skipping. A test that gets `unavailable` hands it to
// `skipIfDeclared` (tests/support/unverified.ts): it skips only if tests/unverified.json declares it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { checkoutRoot } from "./stack-files";

/** Files found (`via` says where from), or why they are not to be had. */
export type Upstream = { readonly dir: string; readonly via: string; readonly dataCopy: boolean } | { readonly unavailable: string };

/** A directory of an upstream Go module at an exact version. */
export interface UpstreamFiles {
  readonly module: string;
  readonly version: string;
  /** The directory inside the module ("" for its root). */
  readonly path: string;
  /**
   * Where `../shared/upstream` keeps the same files, byte for byte, for a module the proxy
   * refuses (relative to `../shared/upstream`; its README names repository, tag and commit).
   */
  readonly shared?: string;
}

/**
 * The data copies' folder: `../shared/upstream` next to the checkout. CAPI_FLEET_SHARED_UPSTREAM
 * points it elsewhere (the negative control "without ../shared" sets a folder that does not exist).
 */
export function sharedUpstreamRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env["CAPI_FLEET_SHARED_UPSTREAM"] ?? path.resolve(checkoutRoot, "..", "shared", "upstream");
}

/** True when the go command's message says the proxy refused the module version (not: unreachable). */
export function isRefusal(message: string): boolean {
  return /\b(403 Forbidden|404 Not Found|410 Gone)\b|not available|unknown revision|invalid version/.test(message);
}

/** What the proxy answered for one module version: its directory in the module cache, or its refusal. */
export type ModuleAnswer = { readonly dir: string } | { readonly refused: string };

const answers = new Map<string, ModuleAnswer>();

/** How long one download may take (kube-apiserver's dependencies are the largest, about a minute). */
const downloadTimeoutMs = 10 * 60_000;

/**
 * `go mod download -json module@version`: the module's directory (downloaded when missing), or the
 * proxy's refusal. Throws for anything else (no go, no network, a timeout), saying what happened.
 */
export function downloadModule(module: string, version: string, env: NodeJS.ProcessEnv = process.env): ModuleAnswer {
  const key = `${module}@${version}`;
  const known = answers.get(key);
  if (known) return known;
  // Outside any module, so no go.mod of ours (or of a mutation sandbox) is consulted.
  const cwd = mkdtempSync(path.join(tmpdir(), "capi-fleet-upstream-"));
  try {
    const run = (toolchain?: string) =>
      spawnSync("go", ["mod", "download", "-json", key], {
        cwd,
        encoding: "utf8",
        timeout: downloadTimeoutMs,
        env: { ...env, GOFLAGS: "-mod=mod", ...(toolchain ? { GOTOOLCHAIN: toolchain } : {}) },
      });
    let download = run();
    // A module whose go.mod needs a newer Go than the machine's: go says so and, with
    // GOTOOLCHAIN=local, stops; that toolchain comes from the proxy too (golang.org/toolchain).
    const newer = /requires go (?:>=|\\u003e=) (\d+\.\d+(?:\.\d+)?)/.exec(download.stdout)?.[1];
    if (newer) download = run(`go${newer}`);
    if (download.error) {
      const missing = (download.error as NodeJS.ErrnoException).code === "ENOENT";
      throw new Error(
        missing
          ? `${key}: go is not on PATH; the tests download upstream modules with it (Go ≥ 1.25, the Go module proxy)`
          : `${key}: go mod download failed: ${download.error.message}`,
      );
    }
    let parsed: { Dir?: string; Error?: string };
    try {
      parsed = JSON.parse(download.stdout) as { Dir?: string; Error?: string };
    } catch {
      throw new Error(`${key}: go mod download printed no JSON (exit ${download.status}): ${download.stderr.trim() || download.stdout.trim()}`);
    }
    let answer: ModuleAnswer;
    if (parsed.Dir && existsSync(parsed.Dir)) answer = { dir: parsed.Dir };
    else if (parsed.Error && isRefusal(parsed.Error)) answer = { refused: `${key}: the Go module proxy (${goProxy(env)}) refuses it: ${parsed.Error.trim().replace(/\s*\n\s*/g, " ")}` };
    else throw new Error(`${key}: go mod download failed, and not by a refusal of the proxy (${goProxy(env)}): ${parsed.Error ?? download.stderr.trim()}`);
    answers.set(key, answer);
    return answer;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

function goProxy(env: NodeJS.ProcessEnv): string {
  const configured = spawnSync("go", ["env", "GOPROXY"], { encoding: "utf8", env });
  return configured.stdout.trim() || "GOPROXY unset";
}

/** The files of `files`: from the proxy, else the data copy for a refused module, else why not. */
export function upstreamDir(files: UpstreamFiles, env: NodeJS.ProcessEnv = process.env): Upstream {
  const answer = downloadModule(files.module, files.version, env);
  if ("dir" in answer) {
    const dir = path.join(answer.dir, files.path);
    if (!existsSync(dir)) throw new Error(`${files.module}@${files.version} has no ${files.path}`);
    return { dir, via: `${files.module}@${files.version}${files.path ? `: ${files.path}` : ""} (Go module proxy)`, dataCopy: false };
  }
  if (files.shared === undefined) return { unavailable: answer.refused };
  const copy = path.join(sharedUpstreamRoot(env), files.shared);
  if (existsSync(copy)) return { dir: copy, via: `${answer.refused}; read the data copy ${files.shared} of ${files.path} instead`, dataCopy: true };
  return { unavailable: `${answer.refused}; and there is no data copy at ${copy}` };
}

/** The module's root directory at an exact version (proxy, then a data copy of its whole tree, else why not). */
export function goModule(module: string, version: string, env: NodeJS.ProcessEnv = process.env): Upstream {
  return upstreamDir({ module, version, path: "" }, env);
}

/** The directory of an answer, or an error naming what needed it and why it is unavailable. */
export function dirOrThrow(what: string, answer: Upstream): string {
  if ("unavailable" in answer) throw new Error(`${what}: ${answer.unavailable}`);
  return answer.dir;
}
