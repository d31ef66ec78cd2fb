import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./stack-files";

/** The plugin version a provider SDK asks the engine for (the `pulumi` block of its package.json). */
export function sdkPluginVersion(name: string): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, "node_modules", "@pulumi", name, "package.json"), "utf8")) as { pulumi: { version: string } }).pulumi.version;
}

/** Writes `<dir>/pulumi-resource-command`, which starts the stand-in command plugin (tests/fakes/command-plugin.mjs) with this Node; returns its path. */
export function writeCommandPluginStandIn(dir: string): string {
  const wrapper = path.join(dir, "pulumi-resource-command");
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${path.join(repoRoot, "tests", "fakes", "command-plugin.mjs")}" "$@"\n`, { mode: 0o755 });
  return wrapper;
}
