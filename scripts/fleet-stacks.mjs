#!/usr/bin/env node
// @ts-check
/**
 * The fleet's stacks as the workflows run them, read from the stack files: every
 * `stacks/Pulumi.<stack>.yaml` is a stack; one that sets `capi-fleet:managementStack` is a shard
 * of that management stack, every other one is a management stack. So a new shard stack file
 * joins the PR previews, the deployment after its management stack, and the drift check, with
 * no workflow edit (docs/delivery.md, "The workflows").
 *
 * A shard runs in its management stack's GitHub environments (`<management>` for `up`,
 * `<management>-preview` for previews and drift): it belongs to that fleet, uses its secrets
 * and waits for its approvals.
 *
 *   node scripts/fleet-stacks.mjs                   prints the fleet as JSON
 *   node scripts/fleet-stacks.mjs --github-output   also writes what the workflows read to $GITHUB_OUTPUT (previews=, shards=)
 *
 * Exit codes: 0 listed; 1 a stack file is malformed, names a management stack without a stack
 * file, or has no policy config; 2 bad usage.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const program = "fleet-stacks";
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const usage = `usage: node scripts/${program}.mjs [--github-output] [--root <repository>]
Lists the stacks of stacks/Pulumi.<stack>.yaml: management stacks and their shards, as JSON.`;

/** The config key that makes a stack a shard (infra/model/stack/validate-fleet-config.ts, configKeys.managementStack). */
export const managementStackKey = "capi-fleet:managementStack";

/**
 * @typedef {{ stack: string, environment: string }} StackRun  one stack in one GitHub environment
 * @typedef {{
 *   stacks: string[],
 *   management: string[],
 *   previews: StackRun[],
 *   shards: Record<string, StackRun[]>,
 * }} Fleet
 *   `previews`: every stack with its preview environment (PR previews, drift);
 *   `shards`: each management stack's shards with the environment they deploy in (empty lists included).
 */

export class FleetStacksError extends Error {}

/**
 * The fleet in `root`'s stack files.
 * @param {string} root the repository (holding stacks/ and policies/config/)
 * @returns {Fleet}
 */
export function fleetStacks(root) {
  const stacksDir = path.join(root, "stacks");
  const names = readdirSync(stacksDir)
    .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
    .filter((name) => name !== undefined)
    .sort();
  /** @type {Map<string, string | undefined>} stack → its management stack (undefined: it is one) */
  const managementOf = new Map();
  const problems = [];
  for (const stack of names) {
    const file = `stacks/Pulumi.${stack}.yaml`;
    let document;
    try {
      document = parse(readFileSync(path.join(root, file), "utf8"));
    } catch (error) {
      problems.push(`${file}: not YAML: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const config = isRecord(document) && isRecord(document.config) ? document.config : {};
    const named = config[managementStackKey];
    if (named === undefined) {
      managementOf.set(stack, undefined);
    } else if (typeof named !== "string" || named === "") {
      problems.push(`${file}: ${managementStackKey} is not a stack name; allowed: stack, project/stack or organization/project/stack`);
    } else {
      // Only the stack's own name is matched: a qualified name (organization/project/stack) still names a stack file here.
      managementOf.set(stack, named.split("/").pop());
    }
    if (!existsSync(path.join(root, "policies", "config", `${stack}.json`))) {
      problems.push(`${file}: no policy config policies/config/${stack}.json; every stack is previewed and deployed with its own (copy its management stack's)`);
    }
  }
  for (const [stack, management] of managementOf) {
    if (management === undefined) continue;
    if (!managementOf.has(management)) {
      problems.push(`stacks/Pulumi.${stack}.yaml: ${managementStackKey} names ${management}, which has no stack file stacks/Pulumi.${management}.yaml; allowed: ${managementNames(managementOf).join(", ") || "(no management stack)"}`);
    } else if (managementOf.get(management) !== undefined) {
      problems.push(`stacks/Pulumi.${stack}.yaml: ${managementStackKey} names ${management}, which is itself a shard; allowed: ${managementNames(managementOf).join(", ")}`);
    }
  }
  if (problems.length > 0) throw new FleetStacksError(problems.join("\n"));

  const management = managementNames(managementOf);
  /** @param {string} stack */
  const fleetOf = (stack) => managementOf.get(stack) ?? stack;
  return {
    stacks: names,
    management,
    previews: names.map((stack) => ({ stack, environment: `${fleetOf(stack)}-preview` })),
    shards: Object.fromEntries(management.map((fleet) => [fleet, names.filter((stack) => managementOf.get(stack) === fleet).map((stack) => ({ stack, environment: fleet }))])),
  };
}

/** @param {Map<string, string | undefined>} managementOf */
function managementNames(managementOf) {
  return [...managementOf].filter(([, management]) => management === undefined).map(([stack]) => stack);
}

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** @param {string[]} args */
function main(args) {
  let root = repoRoot;
  let githubOutput = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === "--help" || arg === "-h") {
      console.log(usage);
      return 0;
    } else if (arg === "--github-output") {
      githubOutput = true;
    } else if (arg === "--root" && args[index + 1] !== undefined) {
      root = path.resolve(args[++index] ?? "");
    } else {
      console.error(`${program}: unexpected argument ${arg}\n${usage}`);
      return 2;
    }
  }
  let fleet;
  try {
    fleet = fleetStacks(root);
  } catch (error) {
    if (!(error instanceof FleetStacksError)) throw error;
    console.error(`${program}: ${error.message}`);
    return 1;
  }
  console.log(JSON.stringify(fleet, undefined, 2));
  if (githubOutput) {
    const file = process.env.GITHUB_OUTPUT;
    if (!file) {
      console.error(`${program}: --github-output needs GITHUB_OUTPUT (set by GitHub Actions in every step)`);
      return 2;
    }
    // One line per output: JSON.stringify writes no newline, so no multi-line delimiter is needed.
    appendFileSync(file, `previews=${JSON.stringify(fleet.previews)}\nshards=${JSON.stringify(fleet.shards)}\n`);
  }
  return 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
