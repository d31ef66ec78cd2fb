import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Makes the policy pack startable by the real engine from this toolchain: the buildable Node
 * language host (the v3.68.0 fallback) has no RunPlugin, which `--policy-pack policies` needs, so
 * the pack is linked into `packDir` under a runtime without a language host ("nodejs-legacy"),
 * and `binDir` gets the `pulumi-analyzer-policy-nodejs-legacy` shim the engine then looks for on
 * PATH; it runs @pulumi/pulumi's run-policy-pack with this Node. Both dirs must exist; `packDir`
 * must lie inside the repository so TypeScript finds the repo's node_modules/@types.
 * Used by tests/in-the-loop/policy-pack-engine.test.ts and the bench's stand-in preview.
 */
export function linkLegacyPolicyPack(repoRoot: string, packDir: string, binDir: string): void {
  for (const entry of ["index.ts", "rules.ts", "lib", "rules", "package.json"]) {
    symlinkSync(path.join(repoRoot, "policies", entry), path.join(packDir, entry));
  }
  writeFileSync(path.join(packDir, "tsconfig.json"), JSON.stringify({ extends: path.join(repoRoot, "tsconfig.json") }));
  writeFileSync(path.join(packDir, "PulumiPolicy.yaml"), "runtime: nodejs-legacy\n");
  const runPolicyPack = path.join(repoRoot, "node_modules", "@pulumi", "pulumi", "cmd", "run-policy-pack");
  writeFileSync(path.join(binDir, "pulumi-analyzer-policy-nodejs-legacy"), `#!/bin/sh\nexec "${process.execPath}" "${runPolicyPack}" "$1" "$2"\n`, { mode: 0o755 });
}

/**
 * A scratch engine workspace under `parent` (program/, pack/ with the pack linked as above,
 * bin/, state/ as a file backend, home/ as PULUMI_HOME) and the environment that runs the
 * toolchain's CLI (in `cliCache`/bin) offline there, without plugin downloads.
 */
export function offlineEngineScratch(repoRoot: string, parent: string, cliCache: string, passphrase: string): { scratch: string; env: NodeJS.ProcessEnv } {
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(path.join(parent, "run-"));
  for (const dir of ["program", "pack", "bin", "state", "home"]) mkdirSync(path.join(scratch, dir));
  linkLegacyPolicyPack(repoRoot, path.join(scratch, "pack"), path.join(scratch, "bin"));
  const env = {
    ...process.env,
    PATH: [path.join(scratch, "bin"), path.join(cliCache, "bin"), path.dirname(process.execPath), process.env.PATH ?? ""].join(":"),
    PULUMI_HOME: path.join(scratch, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(scratch, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: passphrase,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  return { scratch, env };
}
