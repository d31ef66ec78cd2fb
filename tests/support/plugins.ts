import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./stack-files";

/** The plugin version a provider SDK asks the engine for (the `pulumi` block of its package.json). */
export function sdkPluginVersion(name: string): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, "node_modules", "@pulumi", name, "package.json"), "utf8")) as { pulumi: { version: string } }).pulumi.version;
}

/** Writes `<dir>/pulumi-resource-command`, which starts the stand-in command plugin (tests/support/fakes/command-plugin.mjs) with this Node; returns its path. */
export function writeCommandPluginStandIn(dir: string): string {
  const wrapper = path.join(dir, "pulumi-resource-command");
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${path.join(repoRoot, "tests", "support", "fakes", "command-plugin.mjs")}" "$@"\n`, { mode: 0o755 });
  return wrapper;
}

/** The fields of each row of tools/toolchain's PLUGINS block (NAME VERSION MODULE PIN), comments left out. */
export function toolchainPluginRows(script: string): string[][] {
  const block = /^PLUGINS='\n([\s\S]*?)^'/m.exec(script)?.[1] ?? "";
  return block
    .split("\n")
    .filter((line) => line.trim() && !line.trim().startsWith("#"))
    .map((line) => line.trim().split(/\s+/));
}

/** The Go module and pin tools/toolchain builds a provider plugin from (its PLUGINS block). */
export function pluginModule(name: string): { module: string; pin: string } {
  const row = toolchainPluginRows(readFileSync(path.join(repoRoot, "tools", "toolchain"), "utf8")).find((fields) => fields[0] === name);
  if (!row || row.length < 4) throw new Error(`tools/toolchain has no PLUGINS row for ${name}`);
  return { module: row[2]!, pin: row[3]! };
}
