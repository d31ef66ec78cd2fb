import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Makes the policy pack startable by the real engine from this toolchain: the buildable Node
 * language host (the v3.68.0 fallback) has no RunPlugin, which `--policy-pack policies` needs, so
 * the pack is linked into `packDir` under a runtime without a language host ("nodejs-legacy"),
 * and `binDir` gets the `pulumi-analyzer-policy-nodejs-legacy` shim the engine then looks for on
 * PATH; it runs @pulumi/pulumi's run-policy-pack with this Node. Both dirs must exist; `packDir`
 * must lie inside the repository so TypeScript finds the repo's node_modules/@types.
 * Used by tests/policy-pack-engine.test.ts and the bench's stand-in preview.
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
