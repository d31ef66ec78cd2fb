import * as pulumi from "@pulumi/pulumi";
import * as runtimeConfig from "@pulumi/pulumi/runtime/config";
import { configKeys, FleetConfigError, type StackConfigInput } from "./model/config/stack-config";
import { parseFleetConfig, parseShardConfig, type FleetConfig, type ShardConfig } from "./model/stack/validate-fleet-config";


/**
 * `isConfigSecret` is exported by the SDK's runtime but marked internal; it is the only
 * way to tell whether a key was set with `--secret`, which we insist on for credentials.
 */
const isConfigSecret = (key: string): boolean =>
  (runtimeConfig as unknown as { isConfigSecret: (configKey: string) => boolean }).isConfigSecret(key);

/**
 * Reads and validates the whole stack config. Call it before creating any resource: on
 * bad input it stops the program with every problem listed and nothing registered.
 * Placeholder secrets are accepted in previews (with a warning) and refused by `up`.
 */
export function loadFleetConfig(): FleetConfig {
  return validated(parseFleetConfig);
}

/**
 * The stack's role and config: a shard stack (`managementStack` set: its tenants run on another
 * stack's management cluster) or a stack with a management cluster (and maybe tenants), as
 * {@link loadFleetConfig}.
 */
export function loadStackConfig(): { role: "shard"; config: ShardConfig } | { role: "fleet"; config: FleetConfig } {
  return configKeys.managementStack in pulumi.runtime.allConfig() ? { role: "shard", config: validated(parseShardConfig) } : { role: "fleet", config: loadFleetConfig() };
}

function validated<C extends { stack: string; warnings: readonly { path: string; message: string }[]; placeholderSecrets: readonly string[] }>(parse: (input: StackConfigInput) => C): C {
  const values = pulumi.runtime.allConfig();
  const secretKeys = new Set(Object.keys(values).filter((key) => isConfigSecret(key)));
  let config: C;
  try {
    config = parse({
      stack: pulumi.getStack(),
      values,
      secretKeys,
      allowPlaceholderSecrets: pulumi.runtime.isDryRun(),
    });
  } catch (error) {
    if (error instanceof FleetConfigError) {
      // RunError prints the message alone, without a stack trace of our own code.
      throw new pulumi.RunError(error.message);
    }
    throw error;
  }
  for (const warning of config.warnings) {
    void pulumi.log.warn(`Config for stack "${config.stack}": ${warning.path}: ${warning.message}`);
  }
  if (config.placeholderSecrets.length > 0) {
    void pulumi.log.warn(
      `These secrets still hold committed placeholders, which is fine for a preview but will stop pulumi up: ${config.placeholderSecrets.join(", ")}`,
    );
  }
  return config;
}
