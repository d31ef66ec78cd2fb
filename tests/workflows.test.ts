import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { repoRoot } from "./stack-files";

// The GitHub Actions workflows: actionlint (built from the Go module proxy by tools/actionlint) must
// pass on them and must fail on a broken one, and the workflows must keep their promises — every stack
// previewed on PRs with its policy config, deployed on main (prod behind the `prod` environment), and
// checked for drift on a schedule.

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

// ---- structural rules ------------------------------------------------------------------------------

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

interface Job {
  uses?: string;
  with?: Record<string, unknown>;
  needs?: string | string[];
  environment?: unknown;
  strategy?: { matrix?: Record<string, unknown> };
  concurrency?: { group?: string; "cancel-in-progress"?: boolean };
  permissions?: Record<string, string>;
  steps?: Step[];
  "timeout-minutes"?: number;
}

interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

/** The workflows the rules below are about, by file name without `.yml`. */
export type Workflows = Record<"pulumi-stack" | "pull-request" | "deploy" | "drift" | "tests", Workflow>;

const reusable = "./.github/workflows/pulumi-stack.yml";

/** One call of the reusable Pulumi workflow, expanded over the job's matrix. */
interface PulumiCall {
  job: string;
  stack: string;
  with: Record<string, unknown>;
  needs: string[];
  concurrency: Job["concurrency"];
}

function pulumiCalls(workflow: Workflow): PulumiCall[] {
  return Object.entries(workflow.jobs)
    .filter(([, job]) => job.uses === reusable)
    .flatMap(([name, job]) => {
      const given = job.with ?? {};
      const matrixStacks = job.strategy?.matrix?.stack;
      const stacks = given.stack === "${{ matrix.stack }}" && Array.isArray(matrixStacks) ? (matrixStacks as string[]) : [String(given.stack)];
      const needs = job.needs === undefined ? [] : ([] as string[]).concat(job.needs);
      return stacks.map((stack) => {
        const expand = (value: unknown) => (typeof value === "string" ? value.replaceAll("${{ matrix.stack }}", stack) : value);
        const resolved = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, expand(value)]));
        const concurrency = job.concurrency && { ...job.concurrency, group: expand(job.concurrency.group) as string };
        return { job: name, stack, with: resolved, needs, concurrency };
      });
    });
}

/** Everything the workflows promise, as a list of broken promises (empty = all kept). */
export function workflowProblems(workflows: Workflows, stacks: string[]): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };

  for (const [name, workflow] of Object.entries(workflows)) {
    expect(JSON.stringify(workflow.permissions) === JSON.stringify({ contents: "read" }), `${name}: top-level permissions must be exactly contents: read`);
  }

  // The reusable workflow: policy pack and the stack's policy config on every command, inputs wired through.
  const pulumiJob = workflows["pulumi-stack"].jobs.pulumi;
  const step = pulumiJob?.steps?.find((s) => s.uses?.startsWith("pulumi/actions@"));
  const inputs = step?.with ?? {};
  expect(step !== undefined, "pulumi-stack: no pulumi/actions step");
  expect(inputs.policyPacks === "policies", "pulumi-stack: policyPacks is not `policies`");
  expect(inputs.policyPackConfigs === "policies/config/${{ inputs.stack }}.json", "pulumi-stack: policyPackConfigs is not policies/config/<stack>.json");
  for (const input of ["command", "comment-on-pr", "expect-no-changes", "refresh"]) {
    expect(inputs[input] === `\${{ inputs.${input} }}`, `pulumi-stack: ${input} is not wired to the workflow input`);
  }
  expect(pulumiJob?.environment === "${{ inputs.environment }}", "pulumi-stack: the job does not run in the caller's environment");
  expect(typeof pulumiJob?.["timeout-minutes"] === "number", "pulumi-stack: no timeout-minutes");

  // Pull requests: a commented preview of every stack, after the tests.
  const pr = workflows["pull-request"];
  expect(pr.on.pull_request !== undefined, "pull-request: not triggered by pull_request");
  const previews = pulumiCalls(pr).filter((call) => call.with.command === "preview");
  for (const stack of stacks) {
    const call = previews.find((c) => c.stack === stack);
    expect(call !== undefined, `pull-request: no preview of stack ${stack}`);
    if (!call) continue;
    expect(call.with["comment-on-pr"] === true, `pull-request: the ${stack} preview does not comment on the PR`);
    expect(call.needs.includes("tests"), `pull-request: the ${stack} preview does not wait for the tests`);
    expect(pr.jobs[call.job]?.permissions?.["pull-requests"] === "write", `pull-request: job ${call.job} cannot comment (pull-requests: write)`);
  }

  // Main: `pulumi up` of every stack in the stack's own environment, one at a time, prod after dev.
  const deploy = workflows.deploy;
  const branches = (deploy.on.push as { branches?: string[] } | undefined)?.branches ?? [];
  expect(branches.includes("main"), "deploy: not triggered by pushes to main");
  const ups = pulumiCalls(deploy).filter((call) => call.with.command === "up");
  for (const stack of stacks) {
    const call = ups.find((c) => c.stack === stack && c.with.environment === stack);
    expect(call !== undefined, `deploy: no \`pulumi up\` of ${stack} in environment ${stack}`);
    if (!call) continue;
    expect(
      call.concurrency?.group === `pulumi-${stack}` && call.concurrency["cancel-in-progress"] === false,
      `deploy: ${stack} is not serialised in concurrency group pulumi-${stack} (without cancel-in-progress)`,
    );
    expect(call.needs.length > 0, `deploy: the ${stack} deployment does not wait for anything (tests)`);
  }
  const prodUp = ups.find((c) => c.stack === "prod");
  const devUp = ups.find((c) => c.stack === "dev");
  if (prodUp && devUp) expect(prodUp.needs.includes(devUp.job), "deploy: prod does not wait for dev");

  // Drift: scheduled, every stack, refresh + expect no changes.
  const drift = workflows.drift;
  const schedule = drift.on.schedule as { cron?: string }[] | undefined;
  expect(Array.isArray(schedule) && schedule.some((s) => typeof s.cron === "string"), "drift: no schedule");
  const checks = pulumiCalls(drift);
  for (const stack of stacks) {
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

const stacks = readdirSync(path.join(repoRoot, "stacks"))
  .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
  .filter((stack): stack is string => stack !== undefined)
  .sort();

function loadWorkflows(): Workflows {
  const load = (name: string) => parseYaml(readFileSync(path.join(workflowsDir, `${name}.yml`), "utf8")) as Workflow;
  return {
    "pulumi-stack": load("pulumi-stack"),
    "pull-request": load("pull-request"),
    deploy: load("deploy"),
    drift: load("drift"),
    tests: load("tests"),
  };
}

describe("the workflows' promises", () => {
  it("hold for every stack in stacks/", () => {
    expect(stacks).toEqual(["dev", "prod"]);
    expect(workflowProblems(loadWorkflows(), stacks)).toEqual([]);
    for (const stack of stacks) expect(existsSync(path.join(repoRoot, "policies", "config", `${stack}.json`)), stack).toBe(true);
  });

  it("are checked (negative controls)", () => {
    const broken = (mutate: (w: Workflows) => void) => {
      const workflows = structuredClone(loadWorkflows());
      mutate(workflows);
      return workflowProblems(workflows, stacks);
    };
    expect(workflowProblems(loadWorkflows(), [...stacks, "staging"])).toEqual([
      "pull-request: no preview of stack staging",
      "deploy: no `pulumi up` of staging in environment staging",
      "drift: no drift check of stack staging",
    ]);
    expect(broken((w) => (w["pull-request"].jobs.preview!.strategy!.matrix!.stack = ["dev"]))).toEqual(["pull-request: no preview of stack prod"]);
    expect(broken((w) => (w.deploy.jobs.prod!.with!.environment = "dev"))).toEqual(["deploy: no `pulumi up` of prod in environment prod"]);
    expect(broken((w) => (w.deploy.jobs.prod!.needs = "tests"))).toEqual(["deploy: prod does not wait for dev"]);
    expect(broken((w) => delete w.drift.on.schedule)).toEqual(["drift: no schedule"]);
    expect(broken((w) => (w.drift.jobs.drift!.with!["expect-no-changes"] = false))).toEqual([
      "drift: the dev check is not a refreshed preview with expect-no-changes",
      "drift: the prod check is not a refreshed preview with expect-no-changes",
    ]);
    expect(
      broken((w) => (w["pulumi-stack"].jobs.pulumi!.steps!.find((s) => s.uses?.startsWith("pulumi/actions@"))!.with!.policyPackConfigs = "policies/config/prod.json")),
    ).toEqual(["pulumi-stack: policyPackConfigs is not policies/config/<stack>.json"]);
    expect(broken((w) => (w.drift.permissions = { contents: "write" }))).toEqual(["drift: top-level permissions must be exactly contents: read"]);
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
    expect(output).toContain("actionlint v1.7.12 on 5 workflow file(s)");
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
