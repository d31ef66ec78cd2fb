// `npm run plan -- --stack <name>`: prints each tenant's upgrade campaign for a stack, from
// the versions that run to the versions its stack file asks for, with no cloud access. The
// stack file first goes through the program's whole config validation (secrets are checked
// for presence and --secret, not decrypted): a config the program refuses is refused here too.
// Which versions run comes from the stack's own `tenantVersions` output: read from a local
// file backend's state when there is one, from --deployed-from, or per tenant from
// --deployed (later sources win); tenants without one are planned as new clusters.
//
// Then the stack's monthly cost, now (the stack file at --base, default HEAD) and after (the
// stack file as it is), at the price table's prices (infra/model/costs); `--cost-report <file>`
// writes that for every stack as JSON instead, for the pull request's comment.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { catalog } from "../infra/model/versions/catalog";
import { isUpgradeProblem, planTenantUpgrade, deployedVersionsFrom } from "../infra/model/versions/tenant-upgrades";
import { formatUpgradeCampaign } from "../infra/model/versions/upgrade-report";
import { stackConfigFromFile } from "../infra/model/config/stack-file";
import { configKeys, FleetConfigError, projectName } from "../infra/model/config/stack-config";
import { parseFleetConfig, parseShardConfig } from "../infra/model/stack/validate-fleet-config";
import { parseKubernetesVersion } from "../infra/model/versions/kubernetes-version";
import { fleetCostReport, formatStackCost, stackCostChange, type StackCostChange } from "../infra/model/costs/cost-report";
import { parsePriceTable, priceTable, type PriceTable } from "../infra/model/costs/price-table";
import { isUnrefreshed, unpricedProblems, type CostedStack } from "../infra/model/costs/stack-cost";
import { stackOutputs } from "../infra/model/contract/outputs";

const usage = `usage: npm run plan -- --stack <name> [--deployed <tenant>=<version> ...] [--deployed-from <file>|-] [--base <git ref>] [--prices <file>]
       npm run plan -- --cost-report <file> [--base <git ref>] [--prices <file>]

  --stack          stack whose stacks/Pulumi.<name>.yaml holds the target versions
  --deployed       what a tenant runs now, e.g. --deployed analytics=${catalog.tenantKubernetesVersions[0]}
  --deployed-from  JSON from \`pulumi stack output tenantVersions --json\` (- reads stdin)
  --base           the commit whose stack files are "now" in the cost (default HEAD)
  --prices         a price table to use instead of infra/model/costs/hcloud-prices.json
  --cost-report    write every stack's cost, now and after, as JSON (for the PR comment);
                   stacks that cannot be priced are listed in it with their config paths

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
      base: { type: "string" },
      prices: { type: "string" },
      "cost-report": { type: "string" },
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
    .filter((name): name is string => name !== undefined)
    .sort();
  const table = values.prices ? readPriceTable(values.prices) : priceTable;
  const base = values.base ?? "HEAD";
  if (values["cost-report"]) {
    const changes = stacks.map((stack) => costChangeOf(stack, path.join(stacksDir, `Pulumi.${stack}.yaml`), base, table));
    const report = fleetCostReport(
      changes.flatMap((entry) => ("change" in entry ? [entry.change] : [])),
      changes.flatMap((entry) => ("problems" in entry ? [entry] : [])),
      table,
    );
    writeFileSync(values["cost-report"], `${JSON.stringify(report, undefined, 2)}\n`);
    // Stacks that cannot be priced are in the report (the comment shows their config paths).
    return 0;
  }
  if (!values.stack || !stacks.includes(values.stack)) {
    throw new UsageError(`${values.stack ? `no stack file stacks/Pulumi.${values.stack}.yaml` : "--stack is required"}; stacks: ${stacks.join(", ")}`);
  }
  const stackFile = path.join(stacksDir, `Pulumi.${values.stack}.yaml`);
  const { tenants } = readStack(values.stack, readFileSync(stackFile, "utf8"));
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
  const cost = costChangeOf(values.stack, stackFile, base, table);
  if ("problems" in cost) {
    console.error(cost.problems.map((problem) => `${problem.path}: ${problem.message}`).join("\n"));
    return 1;
  }
  console.log("");
  console.log(formatStackCost(cost.change, table, { now: `stacks/Pulumi.${values.stack}.yaml at ${base}`, after: "the stack file as it is" }));
  return results.some(isUpgradeProblem) ? 1 : 0;
}

/** A price table file (`--prices`), checked like the committed one. */
function readPriceTable(file: string): PriceTable {
  try {
    return parsePriceTable(JSON.parse(readFileSync(file, "utf8")) as unknown);
  } catch (error) {
    throw new UsageError(`--prices ${file}: ${(error as Error).message}`);
  }
}

/** The stack file at a git ref, or why there is none. */
function stackFileAt(ref: string, file: string): { text: string } | { missing: string } {
  const relative = `./${path.relative(process.cwd(), file).split(path.sep).join("/")}`;
  const git = (...args: string[]) => spawnSync("git", args, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  const tree = git("rev-parse", "--verify", "--quiet", `${ref}^{tree}`);
  if (tree.error) return { missing: `git is not available: ${tree.error.message}` };
  if (tree.status !== 0) return { missing: `${ref} is not a commit of this repository` };
  if (git("cat-file", "-e", `${ref}:${relative}`).status !== 0) return { missing: `the stack file is new since ${ref}` };
  return { text: git("show", `${ref}:${relative}`).stdout };
}

/**
 * A stack's cost now (its file at `base`) and after (its file as it is). A price table that
 * prices some types but not one this stack uses is a config problem, with its path: the cost
 * cannot be known. An empty table (never refreshed) is not: the plan says so.
 */
function costChangeOf(stack: string, file: string, base: string, table: PriceTable): { change: StackCostChange } | { stack: string; problems: { path: string; message: string }[] } {
  const after = readStack(stack, readFileSync(file, "utf8"), true);
  if (!isUnrefreshed(table)) {
    const problems = unpricedProblems(after, table);
    if (problems.length > 0) return { stack, problems };
  }
  const old = stackFileAt(base, file);
  if ("missing" in old) return { change: stackCostChange(stack, old.missing, after, table) };
  try {
    return { change: stackCostChange(stack, readStack(stack, old.text, true), after, table) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { change: stackCostChange(stack, `its file at ${base} fails today's validation`, after, table) };
  }
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
  const { versions, ignored } = deployedVersionsFrom(stackResource?.outputs?.[stackOutputs.tenantVersions]);
  const skipped = ignored.length > 0 ? `, ignored malformed ${ignored.join(", ")}` : "";
  return { versions, note: `state ${found} (${versions.size} tenant(s)${skipped})` };
}

/** Thrown when the stack file fails the program's validation; its message is the program's own. */
class ConfigError extends Error {}

/**
 * The stack file's tenants (and management cluster), after the program's whole config validation
 * (infra/config.ts runs the same parseFleetConfig), so a config that `pulumi preview` would stop on
 * stops here too. A shard stack (`managementStack` set) goes through the shard's validation and
 * plans its own tenants. `quiet`: no warnings (the file at the cost's base).
 */
function readStack(stack: string, text: string, quiet = false): CostedStack {
  let config;
  try {
    const input = stackConfigFromFile(stack, parse(text));
    config = configKeys.managementStack in input.values ? parseShardConfig(input) : parseFleetConfig(input);
  } catch (error) {
    if (error instanceof FleetConfigError) {
      throw new ConfigError(error.message);
    }
    throw error;
  }
  if (!quiet) {
    for (const warning of config.warnings) {
      console.error(`plan: warning: ${warning.path}: ${warning.message}`);
    }
  }
  return { tenants: config.tenants, ...("management" in config ? { management: config.management } : {}) };
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
