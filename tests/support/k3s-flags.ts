import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { closestMatch } from "../../infra/model/config/text";
import { goModule } from "./upstream";

/**
 * Checks k3s flag names (config-file keys, which k3s turns into `--key` flags, and CLI flags)
 * against k3s' own flag definitions, read from its Go sources (k3s-io/k3s: pkg/cli/cmds/*.go,
 * urfave/cli flag structs). k3s skips an unknown config-file key with only a warning
 * (pkg/configfilearg/parser.go, `stripInvalidFlags`), so a misspelt key would silently do
 * nothing on the servers.
 */

/** The body of `var <name> = []cli.Flag{ … }` (brace-matched), or undefined. */
function flagListBody(source: string, listName: string): string | undefined {
  const start = new RegExp(`var\\s+${listName}\\s*=\\s*\\[\\]cli\\.Flag\\s*\\{`).exec(source);
  if (!start) return undefined;
  let depth = 1;
  for (let index = start.index + start[0].length; index < source.length; index += 1) {
    const char = source[index];
    if (char === "{") depth += 1;
    else if (char === "}") depth -= 1;
    if (depth === 0) return source.slice(start.index + start[0].length, index);
  }
  return undefined;
}

/** Go source without `//` comments (outside "…" and `…` strings). */
function withoutComments(source: string): string {
  let out = "";
  let quote: string | undefined;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    if (quote) {
      if (char === "\\" && quote === '"') {
        out += char + (source[index + 1] ?? "");
        index += 1;
        continue;
      }
      if (char === quote) quote = undefined;
    } else if (char === '"' || char === "`") {
      quote = char;
    } else if (char === "/" && source[index + 1] === "/") {
      while (index < source.length && source[index] !== "\n") index += 1;
      out += "\n";
      continue;
    }
    out += char;
  }
  return out;
}

/** Top-level elements of a Go composite literal body (split at depth-0 commas). */
function elements(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  let inString = false;
  for (const char of body) {
    if (char === '"') inString = !inString;
    if (!inString && (char === "{" || char === "(")) depth += 1;
    if (!inString && (char === "}" || char === ")")) depth -= 1;
    if (!inString && depth === 0 && char === ",") {
      parts.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter(Boolean);
}

/** Names a flag struct literal declares: `Name: "a,b"` (urfave/cli v1 aliases) and `Aliases: []string{…}`. */
function namesInLiteral(literal: string): string[] {
  const name = /\bName:\s*"([^"]+)"/.exec(literal)?.[1];
  const aliases = /\bAliases:\s*\[\]string\{([^}]*)\}/.exec(literal)?.[1];
  return [...(name ? name.split(",") : []), ...(aliases ? [...aliases.matchAll(/"([^"]+)"/g)].map((m) => m[1]!) : [])].map((n) => n.trim());
}

/** The literal assigned to a package-level flag variable `Ident = &cli.XFlag{…}` in any of the sources. */
function variableLiteral(sources: readonly string[], ident: string): string | undefined {
  for (const source of sources) {
    const start = new RegExp(`(?:^|\\s)${ident}\\s*=\\s*&?cli\\.\\w+\\s*\\{`, "m").exec(source);
    if (!start) continue;
    let depth = 1;
    for (let index = start.index + start[0].length; index < source.length; index += 1) {
      if (source[index] === "{") depth += 1;
      else if (source[index] === "}") depth -= 1;
      if (depth === 0) return source.slice(start.index, index + 1);
    }
  }
  return undefined;
}

/**
 * Every flag name of one of k3s' flag lists (`ServerFlags`, `EtcdSnapshotFlags`), given the Go
 * sources of package pkg/cli/cmds. Throws when the list or a variable it names is not found,
 * so a changed source layout fails loudly instead of checking against nothing.
 */
export function k3sFlagNames(rawSources: readonly string[], listName: string): Set<string> {
  const sources = rawSources.map(withoutComments);
  const body = sources.map((source) => flagListBody(source, listName)).find((found) => found !== undefined);
  if (body === undefined) throw new Error(`k3s sources: no "var ${listName} = []cli.Flag{…}"`);
  const names = new Set<string>();
  for (const element of elements(body)) {
    const literal = /^&?cli\.\w+\s*\{/.test(element) ? element : variableLiteral(sources, element);
    if (literal === undefined) throw new Error(`k3s sources: ${listName} names ${element}, whose definition was not found`);
    const found = namesInLiteral(literal);
    if (found.length === 0) throw new Error(`k3s sources: no Name in ${element}`);
    for (const name of found) names.add(name);
  }
  return names;
}

/** The keys the etcd S3 config Secret is read with (pkg/etcd/s3/config_secret.go: `secret.Data["…"]`). */
export function k3sConfigSecretKeys(source: string): Set<string> {
  return new Set([...source.matchAll(/\.Data\["([^"]+)"\]/g)].map((match) => match[1]!));
}

/**
 * Problems with flag names against the known ones: each unknown name, with the closest known
 * one. Config-file keys may end in "+" (append to the value of earlier files: parser.go).
 */
export function unknownK3sFlags(names: readonly string[], known: ReadonlySet<string>, where: string): string[] {
  return names
    .map((name) => name.replace(/^--?/, "").replace(/\+$/, "").split("=")[0]!)
    .filter((name) => !known.has(name))
    .map((name) => {
      const suggestion = closestMatch(name, [...known]);
      return `${where}: k3s has no flag "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""}`;
    });
}

/** Where the k3s sources were found, or why none were. */
export type K3sSource = { readonly dir: string; readonly origin: string } | { readonly unavailable: string };

/**
 * The k3s sources at the catalog's release: `K3S_SOURCE_DIR` (a checkout of that tag), else the
 * Go module through the resolver (tests/support/upstream.ts). The proxy here refuses github.com/k3s-io/k3s
 * and there is no data copy, so without K3S_SOURCE_DIR the answer is the proxy's refusal.
 */
export function locateK3sSource(version: string, env: NodeJS.ProcessEnv = process.env): K3sSource {
  const explicit = env.K3S_SOURCE_DIR;
  if (explicit) {
    return existsSync(path.join(explicit, "pkg", "cli", "cmds", "server.go"))
      ? { dir: explicit, origin: `K3S_SOURCE_DIR=${explicit} (taken to be ${version})` }
      : { unavailable: `K3S_SOURCE_DIR=${explicit} has no pkg/cli/cmds/server.go` };
  }
  const module = goModule("github.com/k3s-io/k3s", version, env);
  return "dir" in module ? { dir: module.dir, origin: module.via } : { unavailable: `k3s ${version}'s flag definitions: ${module.unavailable}` };
}

/** The Go sources of pkg/cli/cmds and pkg/etcd/s3/config_secret.go under a k3s source tree. */
export function readK3sSources(dir: string): { cmds: string[]; configSecret: string | undefined } {
  const cmdsDir = path.join(dir, "pkg", "cli", "cmds");
  const cmds = readdirSync(cmdsDir)
    .filter((file) => file.endsWith(".go") && !file.endsWith("_test.go"))
    .map((file) => readFileSync(path.join(cmdsDir, file), "utf8"));
  const secretFile = path.join(dir, "pkg", "etcd", "s3", "config_secret.go");
  return { cmds, configSecret: existsSync(secretFile) ? readFileSync(secretFile, "utf8") : undefined };
}
