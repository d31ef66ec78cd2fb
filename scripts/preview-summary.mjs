#!/usr/bin/env node
// @ts-check
/**
 * The pull request's one comment about the fleet: each stack's changes and policy violations, from
 * the engine's own event log of each stack's preview (`pulumi preview --event-log`).
 *
 * Why the event log: `pulumi preview --json` drops every policy event ("we don't handle policy
 * events in JSON serialization": github.com/pulumi/pulumi/pkg/v3@v3.248.0,
 * backend/display/json.go, ShowPreviewDigest), while the event log carries them as `policyEvent`
 * lines, next to the `summaryEvent` with the change counts (sdk/v3@v3.248.0:
 * go/common/apitype/events.go, PolicyEvent and SummaryEvent).
 *
 *   node scripts/preview-summary.mjs report --stack S --command preview --exit-code N --events FILE
 *       one stack's report (JSON) from its event log; what each preview job uploads
 *   node scripts/preview-summary.mjs comment --reports DIR [--costs FILE]
 *       the comment (Markdown) from the reports in DIR (one <stack>.json each), for every stack
 *       of stacks/ (a stack without a report is listed as such), and the fleet's monthly cost
 *       before and after the change from FILE (`npm run plan -- --cost-report FILE`)
 *
 * Exit codes: 0 written; 1 unreadable input; 2 bad usage.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fleetStacks } from "./fleet-stacks.mjs";

const program = "preview-summary";
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const usage = `usage: node scripts/${program}.mjs report --stack <stack> --command <preview|up> --exit-code <n> --events <event log>
       node scripts/${program}.mjs comment --reports <directory> [--costs <file>] [--root <repository>]`;

/** The first line of the comment: the sticky-comment action finds its earlier comment by it. */
export const commentMarker = "<!-- capi-fleet: stack previews -->";

/**
 * @typedef {{ policy: string, level: string, resource: string, message: string }} Violation
 * @typedef {{
 *   stack: string,
 *   command: string,
 *   exitCode: number,
 *   changes: Record<string, number> | undefined,
 *   policyPacks: Record<string, string>,
 *   violations: Violation[],
 *   errors: string[],
 * }} StackReport
 *   `changes`: the summary event's counts by operation (undefined: the engine never got that far);
 *   `policyPacks`: the packs that ran, name → version (the summary event's `PolicyPacks`).
 * @typedef {{ now: string, after: string, change: string }} CostRow
 * @typedef {{
 *   currency: string,
 *   refreshed: boolean,
 *   fleet: CostRow,
 *   movers: (CostRow & { tenant: string, stack: string })[],
 *   stacks: (CostRow & { stack: string, nowUnknown?: string, unpriced: string[] })[],
 *   unpricedStacks: { stack: string, problems: { path: string, message: string }[] }[],
 *   notKnownInAdvance: string[],
 * }} FleetCostReport  what `npm run plan -- --cost-report` writes (infra/model/costs/cost-report.ts)
 */

/** Colour markup of the engine (`<{%fg 1%}>`) and ANSI escapes. */
function plain(/** @type {string} */ text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/<\{%[^%]*%\}>/g, "").replace(/\u001b\[[0-9;]*m/g, "").trim();
}

/** `type::name` of a URN; "" for the stack itself (stack-wide rules file their violations there). */
export function resourceOf(/** @type {string} */ urn) {
  const [, , qualifiedType = "", name = ""] = urn.split("::");
  const type = qualifiedType.split("$").pop() ?? "";
  return urn && type !== "pulumi:pulumi:Stack" ? `${type}::${name}` : "";
}

/**
 * What one stack's event log says: change counts, policy violations, errors.
 * @param {string} eventLog the JSON lines `--event-log` wrote
 * @returns {Pick<StackReport, "changes" | "policyPacks" | "violations" | "errors">}
 */
export function readEventLog(eventLog) {
  /** @type {Record<string, number> | undefined} */
  let changes;
  /** @type {Record<string, string>} */
  let policyPacks = {};
  /** @type {Violation[]} */
  const violations = [];
  /** @type {string[]} */
  const errors = [];
  for (const line of eventLog.split("\n")) {
    if (!line.trim()) continue;
    const event = /** @type {Record<string, any>} */ (JSON.parse(line));
    if (event.summaryEvent) {
      changes = { ...event.summaryEvent.resourceChanges };
      // PascalCase in the event, unlike its other fields (apitype.SummaryEvent says why).
      policyPacks = { ...event.summaryEvent.PolicyPacks };
    } else if (event.policyEvent) {
      const { resourceUrn = "", message = "", policyName = "", enforcementLevel = "" } = event.policyEvent;
      violations.push({ policy: policyName, level: enforcementLevel, resource: resourceOf(resourceUrn), message: plain(message) });
    } else if (event.diagnosticEvent?.severity === "error" && !event.diagnosticEvent.ephemeral) {
      errors.push(plain(`${event.diagnosticEvent.prefix ?? ""}${event.diagnosticEvent.message ?? ""}`));
    }
  }
  return { changes, policyPacks, violations, errors };
}

/** The operations of the summary event (apitype OpType) the table counts, one column each. */
const columns = ["create", "update", "replace", "delete"];

/** Markdown text: no HTML from a message reaches the comment, and no cell is split. */
function escape(/** @type {string} */ text) {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("|", "\\|");
}

/**
 * The cost section of the comment.
 * @param {FleetCostReport} costs
 */
export function formatCosts(costs) {
  const title = `#### Monthly cost (${escape(costs.currency)}, net of VAT; autoscaled pools as min–max)`;
  if (!costs.refreshed) {
    return [title, "", "The price table holds no prices yet: refresh it with `HCLOUD_TOKEN=… npm run prices -- --refresh` (docs/operations.md, Costs).", ""].join("\n");
  }
  const lines = [title, "", `All stacks: ${costs.fleet.now} now, ${costs.fleet.after} after: **${costs.fleet.change}**`, ""];
  if (costs.movers.length > 0) {
    lines.push("| Largest movers | Stack | Now | After | Change |", "|---|---|--:|--:|--:|");
    lines.push(...costs.movers.map((mover) => `| ${escape(mover.tenant)} | ${escape(mover.stack)} | ${mover.now} | ${mover.after} | **${mover.change}** |`), "");
  } else {
    lines.push("No tenant's cost changes.", "");
  }
  const stackRows = costs.stacks.map((stack) => `| ${escape(stack.stack)} | ${stack.now} | ${stack.after} | ${stack.change} |${stack.nowUnknown ? ` now unknown: ${escape(stack.nowUnknown)}` : ""}`);
  lines.push(`<details><summary>By stack</summary>\n\n| Stack | Now | After | Change | |\n|---|--:|--:|--:|---|\n${stackRows.join("\n")}\n\n</details>`, "");
  for (const { stack, problems } of costs.unpricedStacks) {
    lines.push(`⚠️ ${escape(stack)} cannot be priced: ${problems.map((problem) => `\`${escape(problem.path)}\`: ${escape(problem.message)}`).join("; ")}`, "");
  }
  const unpriced = [...new Set(costs.stacks.flatMap((stack) => stack.unpriced))];
  if (unpriced.length > 0) lines.push(`Not priced (totals are lower bounds): ${escape(unpriced.join(", "))}.`, "");
  lines.push(`Not known in advance, not included: ${escape(costs.notKnownInAdvance.join("; "))}.`, "");
  return lines.join("\n");
}

/**
 * The PR comment for `stacks` (in their order), from the reports found, and the cost section when there is one.
 * @param {string[]} stacks
 * @param {Map<string, StackReport>} reports
 * @param {FleetCostReport} [costs]
 */
export function formatComment(stacks, reports, costs) {
  const rows = [];
  const details = [];
  let failed = 0;
  for (const stack of stacks) {
    const report = reports.get(stack);
    if (!report) {
      failed++;
      rows.push(`| ${escape(stack)} | ⚠️ no report: the preview job stopped before the preview (see its log) | | | | | |`);
      continue;
    }
    const ok = report.exitCode === 0;
    if (!ok) failed++;
    const mandatory = report.violations.filter((violation) => violation.level === "mandatory").length;
    const advisory = report.violations.length - mandatory;
    const counts = columns.map((op) => (report.changes ? String(report.changes[op] ?? 0) : ""));
    const violationText = report.violations.length === 0 ? "none" : [mandatory ? `${mandatory} mandatory` : "", advisory ? `${advisory} advisory` : ""].filter(Boolean).join(", ");
    rows.push(`| ${escape(stack)} | ${ok ? "✅ passed" : "❌ failed"} | ${counts.join(" | ")} | ${violationText} |`);
    if (report.violations.length > 0 || (!ok && report.errors.length > 0)) {
      const lines = report.violations.map(
        (violation) => `- **${escape(violation.level)}** \`${escape(violation.policy)}\`${violation.resource ? ` on \`${escape(violation.resource)}\`` : " (stack)"}: ${escape(violation.message).replaceAll("\n", " ")}`,
      );
      if (!ok) lines.push(...report.errors.slice(0, 5).map((error) => `- error: ${escape(error).replaceAll("\n", " ")}`));
      details.push(`<details><summary>${escape(stack)}</summary>\n\n${lines.join("\n")}\n\n</details>`);
    }
  }
  const heading = `### Pulumi preview of ${stacks.length} stack${stacks.length === 1 ? "" : "s"}: ${failed === 0 ? "all passed" : `${failed} failed`}`;
  const table = ["| Stack | Result | Create | Update | Replace | Delete | Policy violations |", "|---|---|--:|--:|--:|--:|---|", ...rows];
  return [commentMarker, heading, "", ...table, "", ...details, ...(costs ? [formatCosts(costs)] : [])].join("\n");
}

/** @param {string[]} args @returns {Record<string, string>} */
function options(args) {
  /** @type {Record<string, string>} */
  const values = {};
  for (let index = 0; index < args.length; index += 2) {
    const key = args[index] ?? "";
    const value = args[index + 1];
    if (!key.startsWith("--") || value === undefined) throw new UsageError(`expected --option value pairs, got ${args.slice(index).join(" ")}`);
    values[key.slice(2)] = value;
  }
  return values;
}

class UsageError extends Error {}

/** @param {Record<string, string>} values @param {string[]} required */
function need(values, required) {
  const missing = required.filter((key) => values[key] === undefined);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((key) => `--${key}`).join(", ")}`);
}

/** @param {string[]} argv */
function main(argv) {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h") {
    console.log(usage);
    return 0;
  }
  const values = options(rest);
  if (command === "report") {
    need(values, ["stack", "command", "exit-code", "events"]);
    const exitCode = Number(values["exit-code"]);
    if (!Number.isInteger(exitCode)) throw new UsageError(`--exit-code ${values["exit-code"] ?? ""}: not an integer`);
    const events = values.events ?? "";
    // No event log: the CLI stopped before the engine started (login, stack selection); the job log says why.
    const read = existsSync(events) ? readEventLog(readFileSync(events, "utf8")) : { changes: undefined, policyPacks: {}, violations: [], errors: [`no event log at ${events}: the command stopped before the engine ran`] };
    /** @type {StackReport} */
    const report = { stack: values.stack ?? "", command: values.command ?? "", exitCode, ...read };
    console.log(JSON.stringify(report, undefined, 2));
    return 0;
  }
  if (command === "comment") {
    need(values, ["reports"]);
    const costs = values.costs === undefined ? undefined : /** @type {FleetCostReport} */ (JSON.parse(readFileSync(values.costs, "utf8")));
    const dir = values.reports ?? "";
    /** @type {Map<string, StackReport>} */
    const reports = new Map();
    for (const file of existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: "utf8" }) : []) {
      if (!file.endsWith(".json")) continue;
      const report = /** @type {StackReport} */ (JSON.parse(readFileSync(path.join(dir, file), "utf8")));
      reports.set(report.stack, report);
    }
    console.log(formatComment(fleetStacks(values.root ? path.resolve(values.root) : repoRoot).stacks, reports, costs));
    return 0;
  }
  throw new UsageError(command === undefined ? "no command" : `unknown command ${command}`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${program}: ${error.message}\n${usage}`);
    process.exitCode = 2;
  }
}
