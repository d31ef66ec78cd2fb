import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { repoRoot } from "../support/stack-files";

// The GitHub Actions workflows: actionlint (built from the Go module proxy by tools/actionlint) must
// pass on them and must fail on a broken one, and the workflows must keep their promises for the
// stacks scripts/fleet-stacks.mjs finds — every stack previewed on PRs with its policy config and
// summed up in one comment, deployed on main (shards after their management stack, prod after dev),
// and checked for drift on a schedule.

const scratch = mkdtempSync(path.join(tmpdir(), "workflows-test-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const workflowsDir = path.join(repoRoot, ".github", "workflows");
const actionlintScript = path.join(repoRoot, "tools", "actionlint");

function actionlint(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync("bash", [actionlintScript, ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env,
    // A cold build (module download + compile) takes ~20 s on two idle cores; the script bounds it itself.
    timeout: 900_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

// ---- the stack discovery, run as the workflows run it ------------------------------------------

interface StackRun {
  stack: string;
  environment: string;
}

interface Fleet {
  stacks: string[];
  management: string[];
  previews: StackRun[];
  shards: Record<string, StackRun[]>;
}

const fleetStacksScript = path.join(repoRoot, "scripts", "fleet-stacks.mjs");

/** scripts/fleet-stacks.mjs on `root`, as the fleet-stacks workflow runs it (with --github-output). */
function discover(root: string): { code: number | null; fleet: Fleet; outputs: Record<string, string>; stderr: string } {
  const outputFile = path.join(mkdtempSync(path.join(scratch, "github-output-")), "output");
  writeFileSync(outputFile, "");
  const result = spawnSync(process.execPath, [fleetStacksScript, "--github-output", "--root", root], { encoding: "utf8", env: { ...process.env, GITHUB_OUTPUT: outputFile } });
  const outputs = Object.fromEntries(
    readFileSync(outputFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return { code: result.status, fleet: (result.status === 0 ? JSON.parse(result.stdout) : undefined) as Fleet, outputs, stderr: result.stderr };
}

/** A repository with these stack files (`managementStack` for a shard) and a policy config for each. */
function fleetRoot(stacks: Record<string, { managementStack?: string }>, options: { withoutPolicyConfig?: string } = {}): string {
  const root = mkdtempSync(path.join(scratch, "fleet-"));
  mkdirSync(path.join(root, "stacks"));
  mkdirSync(path.join(root, "policies", "config"), { recursive: true });
  for (const [stack, { managementStack }] of Object.entries(stacks)) {
    const config = managementStack === undefined ? { "capi-fleet:tenants": [] } : { "capi-fleet:managementStack": managementStack, "capi-fleet:tenants": [] };
    writeFileSync(path.join(root, "stacks", `Pulumi.${stack}.yaml`), stringifyYaml({ config }));
    if (stack !== options.withoutPolicyConfig) writeFileSync(path.join(root, "policies", "config", `${stack}.json`), "{}\n");
  }
  return root;
}

// ---- structural rules ------------------------------------------------------------------------------

interface Step {
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

interface Job {
  uses?: string;
  with?: Record<string, unknown>;
  needs?: string | string[];
  if?: string;
  environment?: unknown;
  strategy?: { matrix?: Record<string, unknown> };
  concurrency?: { group?: string; "cancel-in-progress"?: boolean };
  permissions?: Record<string, string>;
  outputs?: Record<string, string>;
  steps?: Step[];
  "timeout-minutes"?: number;
}

interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

/** The workflows the rules below are about, by file name without `.yml`. */
export type Workflows = Record<"pulumi-stack" | "fleet-stacks" | "pull-request" | "deploy" | "drift" | "tests", Workflow>;

const reusable = "./.github/workflows/pulumi-stack.yml";
const discovery = "./.github/workflows/fleet-stacks.yml";

/**
 * A stand-in for GitHub's expression evaluator, for the only forms the workflows use on the
 * discovery's outputs: `${{ fromJSON(needs.<job>.outputs.<name>) }}`, optionally followed by
 * `.<key>` and `[0] != null`. Anything else is refused, so a new form cannot pass unevaluated.
 */
function evaluate(expression: string, outputs: Record<string, Record<string, string>>): unknown {
  const match = /^\$\{\{\s*fromJSON\(needs\.([\w-]+)\.outputs\.([\w-]+)\)((?:\.[\w-]+)?)(\[0\] != null)?\s*\}\}$/.exec(expression.trim());
  if (!match) throw new Error(`expression not understood by this test: ${expression}`);
  const [, job = "", name = "", key = "", firstNotNull] = match;
  const text = outputs[job]?.[name];
  if (text === undefined) throw new Error(`${expression}: no output ${name} of job ${job}`);
  let value = JSON.parse(text) as unknown;
  if (key) value = (value as Record<string, unknown>)[key.slice(1)] ?? null;
  return firstNotNull ? Array.isArray(value) && value[0] !== undefined : value;
}

/** One call of the reusable Pulumi workflow, expanded over the job's matrix. */
interface PulumiCall {
  job: string;
  stack: string;
  with: Record<string, unknown>;
  needs: string[];
  concurrency: Job["concurrency"];
}

/**
 * The calls of pulumi-stack.yml a workflow makes for `fleet`: a job whose matrix comes from the
 * discovery job is expanded over the discovery's outputs, as GitHub would; its `if` too.
 */
function pulumiCalls(workflow: Workflow, outputsOfDiscovery: Record<string, string>): PulumiCall[] {
  const discoveryJobs = Object.entries(workflow.jobs).filter(([, job]) => job.uses === discovery).map(([name]) => name);
  const outputs = Object.fromEntries(discoveryJobs.map((name) => [name, outputsOfDiscovery]));
  return Object.entries(workflow.jobs)
    .filter(([, job]) => job.uses === reusable)
    .flatMap(([name, job]) => {
      const needs = job.needs === undefined ? [] : ([] as string[]).concat(job.needs);
      if (job.if?.includes("fromJSON(") && evaluate(job.if, outputs) !== true) return [];
      const given = job.with ?? {};
      const include = job.strategy?.matrix?.include;
      const rows: Record<string, string>[] =
        include === undefined ? [{}] : typeof include === "string" ? (evaluate(include, outputs) as Record<string, string>[]) : (include as Record<string, string>[]);
      return rows.map((row) => {
        const expand = (value: unknown) => (typeof value === "string" ? value.replace(/\$\{\{ matrix\.([\w-]+) \}\}/g, (_, key: string) => row[key] ?? `<no matrix.${key}>`) : value);
        const resolved = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, expand(value)]));
        const concurrency = job.concurrency && { ...job.concurrency, group: expand(job.concurrency.group) as string };
        return { job: name, stack: String(resolved.stack), with: resolved, needs, concurrency };
      });
    });
}

/** Everything the workflows promise for `fleet` (whose discovery outputs are `outputs`), as a list of broken promises (empty = all kept). */
export function workflowProblems(workflows: Workflows, fleet: Fleet, outputs: Record<string, string>): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };

  for (const [name, workflow] of Object.entries(workflows)) {
    expect(JSON.stringify(workflow.permissions) === JSON.stringify({ contents: "read" }), `${name}: top-level permissions must be exactly contents: read`);
  }

  // The discovery: scripts/fleet-stacks.mjs, its outputs passed through.
  const discoveryJob = workflows["fleet-stacks"].jobs.stacks;
  expect(discoveryJob?.steps?.some((s) => s.id === "stacks" && s.run === "node scripts/fleet-stacks.mjs --github-output") === true, "fleet-stacks: does not run node scripts/fleet-stacks.mjs --github-output");
  for (const output of ["previews", "shards"]) {
    expect(discoveryJob?.outputs?.[output] === `\${{ steps.stacks.outputs.${output} }}`, `fleet-stacks: output ${output} is not the script's`);
  }

  // The reusable workflow: scripts/ci-pulumi (policy pack, the stack's policy config, event log), inputs wired through.
  const pulumiJob = workflows["pulumi-stack"].jobs.pulumi;
  const install = pulumiJob?.steps?.find((s) => s.uses?.startsWith("pulumi/actions@"));
  expect(install !== undefined && install.with?.command === undefined, "pulumi-stack: pulumi/actions must only install the CLI (no command)");
  const command = pulumiJob?.steps?.find((s) => s.run?.startsWith("scripts/ci-pulumi "));
  const line = command?.run?.replace(/\s+/g, " ") ?? "";
  expect(command !== undefined, "pulumi-stack: no step runs scripts/ci-pulumi");
  expect(line.startsWith('scripts/ci-pulumi "$COMMAND" "$STACK" '), "pulumi-stack: scripts/ci-pulumi is not given the command and the stack");
  expect(command?.env?.COMMAND === "${{ inputs.command }}" && command.env.STACK === "${{ inputs.stack }}", "pulumi-stack: COMMAND and STACK are not the workflow inputs");
  expect(line.includes("${{ inputs.refresh && '--refresh' || '' }}"), "pulumi-stack: refresh is not wired to the workflow input");
  expect(line.includes("${{ inputs.expect-no-changes && '--expect-no-changes' || '' }}"), "pulumi-stack: expect-no-changes is not wired to the workflow input");
  expect(line.includes('--report "$RUNNER_TEMP/report/$STACK.json"'), "pulumi-stack: no report written");
  const upload = pulumiJob?.steps?.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
  expect(
    upload?.if === "${{ always() && inputs.report }}" && upload.with?.name === "preview-report-${{ inputs.stack }}" && upload.with.path === "${{ runner.temp }}/report/${{ inputs.stack }}.json",
    "pulumi-stack: the report is not uploaded as preview-report-<stack> (always, when asked)",
  );
  expect(pulumiJob?.environment === "${{ inputs.environment }}", "pulumi-stack: the job does not run in the caller's environment");
  expect(typeof pulumiJob?.["timeout-minutes"] === "number", "pulumi-stack: no timeout-minutes");

  const fleetOf = (stack: string) => Object.entries(fleet.shards).find(([, shards]) => shards.some((shard) => shard.stack === stack))?.[0] ?? stack;

  // Pull requests: a reported preview of every stack in its fleet's preview environment, not waiting for the tests; one comment.
  const pr = workflows["pull-request"];
  expect(pr.on.pull_request !== undefined, "pull-request: not triggered by pull_request");
  expect(Object.values(pr.jobs).some((job) => job.uses === "./.github/workflows/tests.yml"), "pull-request: the tests do not run");
  const previews = pulumiCalls(pr, outputs).filter((call) => call.with.command === "preview");
  for (const stack of fleet.stacks) {
    const call = previews.find((c) => c.stack === stack);
    expect(call !== undefined, `pull-request: no preview of stack ${stack}`);
    if (!call) continue;
    expect(call.with.environment === `${fleetOf(stack)}-preview`, `pull-request: the ${stack} preview does not run in environment ${fleetOf(stack)}-preview`);
    expect(call.with.report === true, `pull-request: the ${stack} preview writes no report for the comment`);
    expect(!call.needs.includes("tests"), `pull-request: the ${stack} preview waits for the tests`);
  }
  expect(previews.length === fleet.stacks.length, `pull-request: ${previews.length} previews for ${fleet.stacks.length} stacks`);
  const [commentName, commentJob] = Object.entries(pr.jobs).find(([, job]) => job.steps?.some((s) => s.run?.startsWith("node scripts/preview-summary.mjs comment ")) === true) ?? [];
  expect(commentJob !== undefined, "pull-request: no job writes the comment (node scripts/preview-summary.mjs comment)");
  if (commentName && commentJob) {
    const previewJobs = [...new Set(previews.map((call) => call.job))];
    expect(previewJobs.every((job) => ([] as string[]).concat(commentJob.needs ?? []).includes(job)), `pull-request: ${commentName} does not wait for the previews`);
    expect(commentJob.if?.includes("always()") === true, `pull-request: ${commentName} is skipped when a preview fails`);
    expect(commentJob.permissions?.["pull-requests"] === "write", `pull-request: job ${commentName} cannot comment (pull-requests: write)`);
    expect(commentJob.steps?.some((s) => s.uses?.startsWith("actions/download-artifact@") && s.with?.pattern === "preview-report-*") === true, `pull-request: ${commentName} does not download the reports`);
    // The cost: the base commit's stack files against the merge result's, then into the comment.
    const costStep = commentJob.steps?.find((s) => s.run?.startsWith("scripts/plan --cost-report "));
    expect(costStep?.run === 'scripts/plan --cost-report "$RUNNER_TEMP/costs.json" --base "$BASE_SHA"' && costStep.env?.BASE_SHA === "${{ github.event.pull_request.base.sha }}", `pull-request: ${commentName} does not price the change against the PR's base commit`);
    expect(commentJob.steps?.some((s) => s.uses?.startsWith("actions/checkout@") && s.with?.["fetch-depth"] === 0) === true, `pull-request: ${commentName} checks out no history (the base commit's stack files)`);
    expect(commentJob.steps?.some((s) => s.run?.includes('--costs "$RUNNER_TEMP/costs.json"')) === true, `pull-request: ${commentName} leaves the cost out of the comment`);
  }

  // Main: `pulumi up` of every stack, one at a time per stack; shards after their management stack, prod after dev.
  const deploy = workflows.deploy;
  const branches = (deploy.on.push as { branches?: string[] } | undefined)?.branches ?? [];
  expect(branches.includes("main"), "deploy: not triggered by pushes to main");
  const ups = pulumiCalls(deploy, outputs).filter((call) => call.with.command === "up");
  for (const stack of fleet.stacks) {
    const environment = fleetOf(stack);
    const call = ups.find((c) => c.stack === stack && c.with.environment === environment);
    expect(call !== undefined, `deploy: no \`pulumi up\` of ${stack} in environment ${environment}`);
    if (!call) continue;
    expect(
      call.concurrency?.group === `pulumi-${stack}` && call.concurrency["cancel-in-progress"] === false,
      `deploy: ${stack} is not serialised in concurrency group pulumi-${stack} (without cancel-in-progress)`,
    );
    expect(call.needs.length > 0, `deploy: the ${stack} deployment does not wait for anything (tests)`);
    if (environment !== stack) {
      const management = ups.find((c) => c.stack === environment);
      expect(management !== undefined && call.needs.includes(management.job), `deploy: shard ${stack} does not wait for its management stack ${environment}`);
    }
  }
  const prodUp = ups.find((c) => c.stack === "prod");
  const devUp = ups.find((c) => c.stack === "dev");
  if (prodUp && devUp) expect(prodUp.needs.includes(devUp.job), "deploy: prod does not wait for dev");

  // Drift: scheduled, every stack, refresh + expect no changes.
  const drift = workflows.drift;
  const schedule = drift.on.schedule as { cron?: string }[] | undefined;
  expect(Array.isArray(schedule) && schedule.some((s) => typeof s.cron === "string"), "drift: no schedule");
  const checks = pulumiCalls(drift, outputs);
  for (const stack of fleet.stacks) {
    const call = checks.find((c) => c.stack === stack);
    expect(call !== undefined, `drift: no drift check of stack ${stack}`);
    if (!call) continue;
    expect(
      call.with.command === "preview" && call.with["expect-no-changes"] === true && call.with.refresh === true,
      `drift: the ${stack} check is not a refreshed preview with expect-no-changes`,
    );
  }

  // Tests: the repository's own CI, with Go for the toolchain builds.
  const testSteps = Object.values(workflows.tests.jobs).flatMap((job) => job.steps ?? []);
  expect(testSteps.some((s) => s.run?.trim() === "bash .ci/run"), "tests: does not run .ci/run");
  expect(testSteps.some((s) => s.uses?.startsWith("actions/setup-go@") === true), "tests: no Go for the toolchain builds");
  return problems;
}

function loadWorkflows(): Workflows {
  const load = (name: string) => parseYaml(readFileSync(path.join(workflowsDir, `${name}.yml`), "utf8")) as Workflow;
  return {
    "pulumi-stack": load("pulumi-stack"),
    "fleet-stacks": load("fleet-stacks"),
    "pull-request": load("pull-request"),
    deploy: load("deploy"),
    drift: load("drift"),
    tests: load("tests"),
  };
}

/** The management stacks deploy.yml names in a fixed job (each a fleet with environments of its own). */
function fixedDeployments(workflows: Workflows): string[] {
  return Object.values(workflows.deploy.jobs).flatMap((job) => (job.uses === reusable && typeof job.with?.stack === "string" && !job.with.stack.includes("${{") ? [job.with.stack] : []));
}

/** A management stack and three shards. */
const shardedFleet = { prod: {}, "prod-shard-a": { managementStack: "prod" }, "prod-shard-b": { managementStack: "prod" }, "prod-shard-c": { managementStack: "organization/capi-fleet/prod" } };

describe("the workflows' promises", () => {
  it("hold for every stack in stacks/", () => {
    const { code, fleet, outputs, stderr } = discover(repoRoot);
    expect(code, stderr).toBe(0);
    expect(fleet.stacks).toEqual(["dev", "prod"]);
    expect(fleet.management).toEqual(["dev", "prod"]);
    expect(workflowProblems(loadWorkflows(), fleet, outputs)).toEqual([]);
    // Every fixed deployment names a stack that has a stack file (a job for a removed stack would fail every push).
    expect(fixedDeployments(loadWorkflows()).sort()).toEqual(fleet.management);
  });

  it("hold for a management stack and three shards: four previews, drift checks and deployments, each shard after its management stack", () => {
    const { code, fleet, outputs, stderr } = discover(fleetRoot(shardedFleet));
    expect(code, stderr).toBe(0);
    expect(fleet.previews).toEqual([
      { stack: "prod", environment: "prod-preview" },
      { stack: "prod-shard-a", environment: "prod-preview" },
      { stack: "prod-shard-b", environment: "prod-preview" },
      { stack: "prod-shard-c", environment: "prod-preview" },
    ]);
    const workflows = loadWorkflows();
    expect(workflowProblems(workflows, fleet, outputs)).toEqual([]);
    expect(pulumiCalls(workflows["pull-request"], outputs).map((call) => call.stack)).toEqual(["prod", "prod-shard-a", "prod-shard-b", "prod-shard-c"]);
    expect(pulumiCalls(workflows.drift, outputs).map((call) => call.stack)).toEqual(["prod", "prod-shard-a", "prod-shard-b", "prod-shard-c"]);
    // The deploy order: prod (after dev), then its shards, all three in one matrix job that needs prod.
    const ups = pulumiCalls(workflows.deploy, outputs);
    expect(ups.map((call) => [call.stack, call.needs])).toEqual([
      ["dev", ["tests"]],
      ["prod", ["dev", "dev-shards"]],
      ["prod-shard-a", ["stacks", "prod"]],
      ["prod-shard-b", ["stacks", "prod"]],
      ["prod-shard-c", ["stacks", "prod"]],
    ]);
  });

  it("grow with the stack files: a fifth stack file is a fifth preview, drift check and deployment, with no workflow edit", () => {
    const before = readdirSync(workflowsDir).map((file) => readFileSync(path.join(workflowsDir, file), "utf8"));
    const { code, fleet, outputs } = discover(fleetRoot({ ...shardedFleet, "prod-shard-d": { managementStack: "prod" } }));
    expect(code).toBe(0);
    const workflows = loadWorkflows();
    expect(workflowProblems(workflows, fleet, outputs)).toEqual([]);
    expect(pulumiCalls(workflows["pull-request"], outputs)).toHaveLength(5);
    expect(pulumiCalls(workflows.drift, outputs)).toHaveLength(5);
    expect(pulumiCalls(workflows.deploy, outputs).find((call) => call.stack === "prod-shard-d")?.needs).toContain("prod");
    expect(readdirSync(workflowsDir).map((file) => readFileSync(path.join(workflowsDir, file), "utf8"))).toEqual(before);
  });

  it("are checked (negative controls)", () => {
    const repo = discover(repoRoot);
    const sharded = discover(fleetRoot(shardedFleet));
    const broken = (mutate: (w: Workflows) => void, { fleet, outputs } = repo) => {
      const workflows = structuredClone(loadWorkflows());
      mutate(workflows);
      return workflowProblems(workflows, fleet, outputs);
    };
    // A stack the workflows cannot reach (an output the matrix does not read).
    expect(workflowProblems(loadWorkflows(), { ...repo.fleet, stacks: [...repo.fleet.stacks, "staging"] }, repo.outputs)).toEqual([
      "pull-request: no preview of stack staging",
      "pull-request: 2 previews for 3 stacks",
      "deploy: no `pulumi up` of staging in environment staging",
      "drift: no drift check of stack staging",
    ]);
    expect(broken((w) => (w["pull-request"].jobs.preview!.strategy!.matrix!.include = [{ stack: "dev", environment: "dev-preview" }]))).toEqual([
      "pull-request: no preview of stack prod",
      "pull-request: 1 previews for 2 stacks",
    ]);
    expect(broken((w) => (w["pull-request"].jobs.preview!.needs = ["stacks", "tests"]))).toEqual([
      "pull-request: the dev preview waits for the tests",
      "pull-request: the prod preview waits for the tests",
    ]);
    expect(broken((w) => (w["pull-request"].jobs.comment!.if = "${{ needs.stacks.result == 'success' }}"))).toEqual(["pull-request: comment is skipped when a preview fails"]);
    expect(broken((w) => (w["pull-request"].jobs.comment!.steps!.find((s) => s.run?.startsWith("scripts/plan "))!.env!.BASE_SHA = "${{ github.sha }}"))).toEqual([
      "pull-request: comment does not price the change against the PR's base commit",
    ]);
    expect(broken((w) => (w.deploy.jobs.prod!.with!.environment = "dev"))).toEqual(["deploy: no `pulumi up` of prod in environment prod"]);
    expect(broken((w) => (w.deploy.jobs.prod!.needs = "tests"))).toEqual(["deploy: prod does not wait for dev"]);
    expect(broken((w) => (w.deploy.jobs["prod-shards"]!.needs = ["stacks", "tests"]), sharded)).toEqual([
      "deploy: shard prod-shard-a does not wait for its management stack prod",
      "deploy: shard prod-shard-b does not wait for its management stack prod",
      "deploy: shard prod-shard-c does not wait for its management stack prod",
    ]);
    expect(broken((w) => (w.deploy.jobs["prod-shards"]!.with!.environment = "${{ matrix.stack }}"), sharded)).toEqual([
      "deploy: no `pulumi up` of prod-shard-a in environment prod",
      "deploy: no `pulumi up` of prod-shard-b in environment prod",
      "deploy: no `pulumi up` of prod-shard-c in environment prod",
    ]);
    expect(broken((w) => delete w.drift.on.schedule)).toEqual(["drift: no schedule"]);
    expect(broken((w) => (w.drift.jobs.drift!.with!["expect-no-changes"] = false))).toEqual([
      "drift: the dev check is not a refreshed preview with expect-no-changes",
      "drift: the prod check is not a refreshed preview with expect-no-changes",
    ]);
    expect(broken((w) => (w["pulumi-stack"].jobs.pulumi!.steps!.find((s) => s.uses?.startsWith("pulumi/actions@"))!.with!.command = "preview"))).toEqual([
      "pulumi-stack: pulumi/actions must only install the CLI (no command)",
    ]);
    expect(broken((w) => (w.drift.permissions = { contents: "write" }))).toEqual(["drift: top-level permissions must be exactly contents: read"]);
    expect(() => pulumiCalls({ on: {}, jobs: { x: { uses: reusable, strategy: { matrix: { include: "${{ fromJSON(github.event.inputs.stacks) }}" } } } } }, repo.outputs)).toThrow(
      "expression not understood by this test",
    );
  });

  it("pin the Pulumi CLI to the SDK version package.json pins (one version, not two that drift)", () => {
    const step = loadWorkflows()["pulumi-stack"].jobs.pulumi!.steps!.find((s) => s.uses?.startsWith("pulumi/actions@"))!;
    const sdk = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies["@pulumi/pulumi"];
    expect(String(step.with!["pulumi-version"])).toBe(sdk);
  });

  it("include linting the workflows in .ci/run, before the tests", () => {
    const ci = readFileSync(path.join(repoRoot, ".ci", "run"), "utf8");
    const lint = ci.indexOf("\ntools/actionlint\n");
    expect(lint).toBeGreaterThan(0);
    expect(lint).toBeLessThan(ci.indexOf("\nnpm test\n"));
  });
});

describe("scripts/fleet-stacks.mjs", () => {
  it("refuses, naming the file and what is allowed: a shard of a stack with no stack file, a shard of a shard, a stack without a policy config", () => {
    const orphan = discover(fleetRoot({ prod: {}, "prod-shard-a": { managementStack: "staging" } }));
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toContain("stacks/Pulumi.prod-shard-a.yaml: capi-fleet:managementStack names staging, which has no stack file stacks/Pulumi.staging.yaml; allowed: prod");
    const nested = discover(fleetRoot({ prod: {}, a: { managementStack: "prod" }, b: { managementStack: "a" } }));
    expect(nested.code).toBe(1);
    expect(nested.stderr).toContain("stacks/Pulumi.b.yaml: capi-fleet:managementStack names a, which is itself a shard; allowed: prod");
    const unconfigured = discover(fleetRoot(shardedFleet, { withoutPolicyConfig: "prod-shard-b" }));
    expect(unconfigured.code).toBe(1);
    expect(unconfigured.stderr).toContain("stacks/Pulumi.prod-shard-b.yaml: no policy config policies/config/prod-shard-b.json");
    expect(unconfigured.outputs).toEqual({});
  });

  it("needs GITHUB_OUTPUT for --github-output, and rejects unknown arguments", () => {
    const withoutOutput = spawnSync(process.execPath, [fleetStacksScript, "--github-output"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
    expect(withoutOutput.status).toBe(2);
    expect(withoutOutput.stderr).toContain("--github-output needs GITHUB_OUTPUT");
    const unknown = spawnSync(process.execPath, [fleetStacksScript, "--all"], { encoding: "utf8" });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unexpected argument --all");
  });
});

// ---- actionlint ------------------------------------------------------------------------------------

describe("tools/actionlint", () => {
  it("fails at once without Go, naming what is needed", () => {
    // A PATH with the shell tools the script needs but no go, and an empty cache (no built binary).
    const bin = path.join(scratch, "bin-without-go");
    mkdirSync(bin);
    for (const tool of ["bash", "readlink", "dirname", "sed", "grep", "sha256sum", "cut", "head", "cat", "env", "find", "sort"]) {
      const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      if (found) symlinkSync(found, path.join(bin, tool));
    }
    const { code, output } = actionlint([], { HOME: process.env.HOME ?? "/root", PATH: bin, CAPI_FLEET_CACHE: mkdtempSync(path.join(scratch, "cache-")) });
    expect(code).toBe(1);
    expect(output).toContain("actionlint: ERROR: Go is missing: install Go >= 1.25");
  });

  it("refuses a path that does not exist", () => {
    const { code, output } = actionlint([path.join(scratch, "no-such-dir")]);
    expect(code).toBe(1);
    expect(output).toContain("no such workflow file or directory");
  });

  it("passes on the repository's workflows (builds actionlint v1.7.12 once)", { timeout: 900_000 }, () => {
    const { code, output } = actionlint([]);
    expect(output).toContain(`actionlint v1.7.12 on ${readdirSync(workflowsDir).filter((file) => file.endsWith(".yml")).length} workflow file(s)`);
    expect(output).toContain("actionlint: no problems found");
    expect(code).toBe(0);
  });

  it("fails on broken workflows with actionlint's error text (negative control)", { timeout: 900_000 }, () => {
    const dir = mkdtempSync(path.join(scratch, "broken-"));
    writeFileSync(
      path.join(dir, "broken.yml"),
      ["name: broken", "on: push", "jobs:", "  build:", "    runs-onn: ubuntu-24.04", "    steps:", '      - run: echo "${{ steps.x.outputs.y }}"', ""].join("\n"),
    );
    // A real-looking preview step with a misspelt pulumi/actions input: actionlint knows the action's inputs.
    writeFileSync(
      path.join(dir, "typo.yml"),
      [
        "name: typo",
        "on: pull_request",
        "jobs:",
        "  preview:",
        "    runs-on: ubuntu-24.04",
        "    steps:",
        "      - uses: pulumi/actions@v6",
        "        with:",
        "          command: preview",
        "          stack-name: dev",
        "          policyPack: policies",
        "",
      ].join("\n"),
    );
    const { code, output } = actionlint([dir]);
    expect(code).toBe(1);
    expect(output).toContain('unexpected key "runs-onn" for "job" section');
    expect(output).toContain('property "x" is not defined in object type {}');
    expect(output).toContain('input "policyPack" is not defined in action "pulumi/actions@v6"');
    expect(output).toContain("actionlint: problems found (exit 1)");
  });
});

// ---- scripts/ci-pulumi (the engine runs it in tests/in-the-loop/policy-pack-real-engine.test.ts) -----------

describe("scripts/ci-pulumi", () => {
  const ciPulumi = path.join(repoRoot, "scripts", "ci-pulumi");

  it("passes shellcheck (Debian's, as for the boot scripts)", () => {
    const result = spawnSync(path.join(repoRoot, "tools", "shellcheck"), [ciPulumi], { encoding: "utf8", timeout: 600_000 });
    expect(`${result.stdout}${result.stderr}`).toBe("");
    expect(result.status).toBe(0);
  });

  it("refuses bad usage before running anything: an unknown command, an unknown flag, a stack without a policy config", () => {
    // No pulumi on PATH: any of these reaching the CLI would fail differently.
    const env = { PATH: "/usr/bin:/bin" };
    const unknownCommand = spawnSync("bash", [ciPulumi, "destroy", "prod"], { encoding: "utf8", env });
    expect(unknownCommand.status).toBe(2);
    expect(unknownCommand.stderr).toContain("ci-pulumi: unknown command destroy; allowed: preview, up");
    const unknownFlag = spawnSync("bash", [ciPulumi, "preview", "prod", "--yes"], { encoding: "utf8", env });
    expect(unknownFlag.status).toBe(2);
    expect(unknownFlag.stderr).toContain("ci-pulumi: unexpected argument --yes");
    const noConfig = spawnSync("bash", [ciPulumi, "preview", "staging"], { encoding: "utf8", env });
    expect(noConfig.status).toBe(1);
    expect(noConfig.stderr).toContain("ci-pulumi: no policy config");
    expect(noConfig.stderr).toContain("policies/config/staging.json for stack staging");
  });
});
