// `npm run plan -- --stack <name>`: prints each tenant's upgrade campaign for a stack, from
// the versions that run to the versions its stack file asks for, with no cloud access. The
// stack file first goes through the program's whole config validation (secrets are checked
// for presence and --secret, not decrypted): a config the program refuses is refused here too.
// Which versions run comes from the stack's own `tenantVersions` output: read from a local
// file backend's state when there is one, from --deployed-from, or per tenant from
// --deployed (later sources win); tenants without one are planned as new clusters.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { catalog } from "../infra/model/versions/catalog";
import { isUpgradeProblem, planTenantUpgrade, deployedVersionsFrom } from "../infra/model/versions/tenant-upgrades";
import { formatUpgradeCampaign } from "../infra/model/versions/upgrade-report";
import { stackConfigFromFile } from "../infra/model/config/stack-file";
import { configKeys, FleetConfigError, parseFleetConfig, parseShardConfig, projectName } from "../infra/model/config/validate-fleet-config";
import { tenantVersionsOutputName } from "../infra/model/versions/tenant-upgrades";
import { parseKubernetesVersion } from "../infra/model/versions/kubernetes-version";

const usage = `usage: npm run plan -- --stack <name> [--deployed <tenant>=<version> ...] [--deployed-from <file>|-]

  --stack          stack whose stacks/Pulumi.<name>.yaml holds the target versions
  --deployed       what a tenant runs now, e.g. --deployed analytics=${catalog.tenantKubernetesVersions[0]}
  --deployed-from  JSON from \`pulumi stack output tenantVersions --json\` (- reads stdin)

Without them, deployed versions come from the stack's state when it is in a local file
backend (PULUMI_BACKEND_URL=file://…, or .pulumi-state as npm run preview uses). Tenants
without a deployed version are planned as new clusters.`;

class UsageError extends Error {}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      stack: { type: "string" },
      deployed: { type: "string", multiple: true },
      "deployed-from": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  // scripts/plan runs this from the repository root.
  const stacksDir = path.resolve("stacks");
  const stacks = readdirSync(stacksDir)
    .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
    .filter((name): name is string => name !== undefined);
  if (!values.stack || !stacks.includes(values.stack)) {
    throw new UsageError(`${values.stack ? `no stack file stacks/Pulumi.${values.stack}.yaml` : "--stack is required"}; stacks: ${stacks.join(", ")}`);
  }
  const tenants = readTenants(values.stack, path.join(stacksDir, `Pulumi.${values.stack}.yaml`));
  const deployed = new Map<string, string>();
  const sources: string[] = [];
  const local = readLocalState(values.stack);
  sources.push(local.note);
  local.versions.forEach((version, tenant) => deployed.set(tenant, version));
  if (values["deployed-from"]) {
    const source = values["deployed-from"];
    const text = readFileSync(source === "-" ? 0 : source, "utf8");
    const { versions, ignored } = deployedVersionsFrom(JSON.parse(text) as unknown);
    if (ignored.length > 0) {
      console.error(`plan: ignoring malformed entries in ${source}: ${ignored.join(", ")}`);
    }
    versions.forEach((version, tenant) => deployed.set(tenant, version));
    sources.push(`${source === "-" ? "stdin" : source} (${versions.size} tenant(s))`);
  }
  for (const entry of values.deployed ?? []) {
    const [tenant = "", version = ""] = entry.split("=");
    if (!parseKubernetesVersion(version)) {
      throw new UsageError(`--deployed ${entry}: expected <tenant>=vMAJOR.MINOR.PATCH`);
    }
    deployed.set(tenant, version);
    sources.push(`--deployed ${tenant}`);
  }
  const names = tenants.map((tenant) => tenant.name);
  const unknown = [...deployed.keys()].filter((tenant) => !names.includes(tenant));
  if (unknown.length > 0) {
    throw new UsageError(`no tenant named ${unknown.join(", ")} in stack ${values.stack}; tenants: ${names.join(", ")}`);
  }
  const results = tenants.map((tenant) => planTenantUpgrade(tenant.name, deployed.get(tenant.name), tenant.kubernetesVersion));
  console.log(`Deployed versions from: ${sources.join("; ")}`);
  console.log(formatUpgradeCampaign(values.stack, catalog.tenantKubernetesVersions, results));
  return results.some(isUpgradeProblem) ? 1 : 0;
}

/**
 * The `tenantVersions` output in the stack's checkpoint, when the stack lives in a local
 * file backend (`<root>/.pulumi/stacks/<project>/<stack>.json[.gz]`). Other backends need
 * the CLI, so they are left to --deployed-from.
 */
function readLocalState(stack: string): { versions: Map<string, string>; note: string } {
  const backend = process.env.PULUMI_BACKEND_URL ?? `file://${path.resolve(".pulumi-state")}`;
  if (!backend.startsWith("file://")) {
    return { versions: new Map(), note: `no local state (backend ${backend}; pipe \`pulumi stack output tenantVersions --json\` into --deployed-from -)` };
  }
  const file = path.join(backend.slice("file://".length).replace(/^~(?=\/)/, process.env.HOME ?? "~"), ".pulumi", "stacks", projectName, `${stack}.json`);
  const found = [file, `${file}.gz`].find((candidate) => existsSync(candidate));
  if (!found) {
    return { versions: new Map(), note: `no state at ${file}` };
  }
  const raw = readFileSync(found);
  const checkpoint = JSON.parse((found.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8")) as {
    checkpoint?: { latest?: { resources?: { type?: string; outputs?: Record<string, unknown> }[] } };
  };
  const stackResource = checkpoint.checkpoint?.latest?.resources?.find((resource) => resource.type === "pulumi:pulumi:Stack");
  const { versions, ignored } = deployedVersionsFrom(stackResource?.outputs?.[tenantVersionsOutputName]);
  const skipped = ignored.length > 0 ? `, ignored malformed ${ignored.join(", ")}` : "";
  return { versions, note: `state ${found} (${versions.size} tenant(s)${skipped})` };
}

/** Thrown when the stack file fails the program's validation; its message is the program's own. */
class ConfigError extends Error {}

/**
 * The stack file's tenants, after the program's whole config validation (infra/config.ts runs
 * the same parseFleetConfig), so a config that `pulumi preview` would stop on stops here too.
 * A shard stack (`managementStack` set) goes through the shard's validation and plans its own tenants.
 */
function readTenants(stack: string, file: string) {
  let config;
  try {
    const input = stackConfigFromFile(stack, parse(readFileSync(file, "utf8")));
    config = configKeys.managementStack in input.values ? parseShardConfig(input) : parseFleetConfig(input);
  } catch (error) {
    if (error instanceof FleetConfigError) {
      throw new ConfigError(error.message);
    }
    throw error;
  }
  for (const warning of config.warnings) {
    console.error(`plan: warning: ${warning.path}: ${warning.message}`);
  }
  return config.tenants;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exitCode = 1;
  } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    console.error(`plan: ${(error as Error).message}\n\n${usage}`);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
