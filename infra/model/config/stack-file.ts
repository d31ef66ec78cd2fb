import { placeholderSecretPrefix, projectName, type StackConfigInput } from "./stack-config";

/**
 * A stack file (`stacks/Pulumi.<stack>.yaml`, already parsed) as the Pulumi runtime would hand
 * its config to the program, for tools that validate it without the engine (`npm run plan`).
 * Keys without a namespace belong to the project; objects and arrays become JSON. Secure values
 * cannot be decrypted here, so each becomes a placeholder: validation then checks that every
 * secret is present and stored with `--secret`, but not its value.
 */
export function stackConfigFromFile(stack: string, document: unknown): StackConfigInput {
  const config = (document as { config?: unknown } | null)?.config;
  const entries = config && typeof config === "object" && !Array.isArray(config) ? Object.entries(config as Record<string, unknown>) : [];
  const values: Record<string, string> = {};
  const secretKeys = new Set<string>();
  for (const [rawKey, raw] of entries) {
    const key = rawKey.includes(":") ? rawKey : `${projectName}:${rawKey}`;
    const found = { secret: false };
    const open = (value: unknown): unknown => {
      if (Array.isArray(value)) {
        return value.map(open);
      }
      if (value && typeof value === "object") {
        const fields = Object.entries(value as Record<string, unknown>);
        if (fields.length === 1 && fields[0]?.[0] === "secure") {
          found.secret = true;
          return `${placeholderSecretPrefix} (encrypted in the stack file; not decrypted here)`;
        }
        return Object.fromEntries(fields.map(([field, inner]) => [field, open(inner)]));
      }
      return value;
    };
    const value = open(raw);
    values[key] = typeof value === "string" ? value : JSON.stringify(value);
    if (found.secret) {
      secretKeys.add(key);
    }
  }
  return { stack, values, secretKeys, allowPlaceholderSecrets: true };
}
