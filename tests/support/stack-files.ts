import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { configKeys } from "../../infra/model/config/stack-config";

/** Repository root, for reading committed files in tests. */
export const repoRoot = path.resolve(__dirname, "..", "..");

/**
 * The checkout the suite runs from. StrykerJS runs it from a sandbox copy inside the checkout
 * (`.stryker-tmp/sandbox-*`, stryker.config.mjs); what sits next to the checkout is not next to that copy.
 */
export const checkoutRoot = repoRoot.replace(/[\\/]\.stryker-tmp[\\/]sandbox-[^\\/]+$/, "");

/** A stack file's config as the Pulumi runtime would hand it to the program. */
export interface RuntimeConfig {
  values: Record<string, string>;
  secretKeys: string[];
}

/**
 * Reads `stacks/Pulumi.<stack>.yaml` like the engine does: objects become JSON strings and
 * keys holding `secure:` values are secret. Tests cannot decrypt, so each secure leaf
 * becomes `secretValue(pathOfLeaf)` — by default a well-formed fake hcloud token.
 */
export function readStackConfig(
  stack: string,
  secretValue: (leafPath: string) => string = fakeHcloudToken,
): RuntimeConfig {
  const file = parse(readFileSync(path.join(repoRoot, "stacks", `Pulumi.${stack}.yaml`), "utf8")) as {
    config: Record<string, unknown>;
  };
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [key, raw] of Object.entries(file.config)) {
    const found = { secret: false };
    const decrypt = (value: unknown, at: string): unknown => {
      if (value && typeof value === "object" && !Array.isArray(value)) {
        const entries = Object.entries(value as Record<string, unknown>);
        if (entries.length === 1 && entries[0]![0] === "secure") {
          found.secret = true;
          return secretValue(at);
        }
        return Object.fromEntries(entries.map(([k, v]) => [k, decrypt(v, `${at}.${k}`)]));
      }
      return Array.isArray(value) ? value.map((v, i) => decrypt(v, `${at}[${i}]`)) : value;
    };
    const value = decrypt(raw, key);
    values[key] = typeof value === "string" ? value : JSON.stringify(value);
    if (found.secret) {
      secretKeys.push(key);
    }
  }
  return { values, secretKeys };
}

/** A syntactically valid hcloud token, different per leaf. */
export function fakeHcloudToken(leafPath: string): string {
  const seed = Buffer.from(leafPath).toString("hex").replace(/[^a-z0-9]/gi, "");
  return (seed + "x".repeat(64)).slice(0, 64);
}

/**
 * Edits a stack's config values so that its first tenant's first pool is sized by Karpenter
 * (experimental), as a stack file would say it: no `replicas`, `autoscaling.provider: karpenter`
 * with a CPU limit, and the tenant's provider image.
 */
export function withKarpenterPool(values: Record<string, string>): void {
  const tenants = JSON.parse(values[configKeys.tenants]!) as { workers: Record<string, unknown>[]; karpenter?: unknown }[];
  const pool = tenants[0]!.workers[0]!;
  delete pool.replicas;
  pool.autoscaling = { provider: "karpenter", cpuLimit: 8 };
  tenants[0]!.karpenter = { image: "registry.example.com/karpenter-clusterapi-controller:v0.2.0" };
  values[configKeys.tenants] = JSON.stringify(tenants);
}
