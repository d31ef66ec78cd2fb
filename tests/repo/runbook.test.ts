import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { checkCommand, cobraSubcommands, helpHasFlag, runbookCommands, shellWords, type Clis, type RunbookCommand } from "../support/runbook";
import { repoRoot } from "../support/stack-files";

const execFileAsync = promisify(execFile);
const runbook = readFileSync(path.join(repoRoot, "docs", "operations.md"), "utf8");

/** Builds (once, cached outside the repo) and locates the pinned pulumi, kubectl and clusterctl. */
async function pinnedClis(): Promise<Clis> {
  const long = { cwd: repoRoot, timeout: 40 * 60_000, maxBuffer: 16 * 1024 * 1024 };
  await execFileAsync(path.join(repoRoot, "tools", "toolchain"), ["build", "cli"], long);
  const { stdout: pins } = await execFileAsync(path.join(repoRoot, "tools", "toolchain"), ["pins"], long);
  const cache = /^cache: (.+)$/m.exec(pins)?.[1];
  const { stdout: paths } = await execFileAsync(path.join(repoRoot, "tools", "kube-apiserver-toolchain"), ["paths"], long);
  const { stdout: capiPaths } = await execFileAsync(path.join(repoRoot, "tools", "capi-toolchain"), ["paths"], long);
  const clusterctl = /^CLUSTERCTL=(.+)$/m.exec(capiPaths)?.[1];
  return {
    ...(clusterctl ? { clusterctl } : {}),
    ...(cache ? { pulumi: path.join(cache, "bin", "pulumi") } : {}),
    ...(/^KUBECTL=(.+)$/m.exec(paths)?.[1] ? { kubectl: /^KUBECTL=(.+)$/m.exec(paths)?.[1] } : {}),
  };
}

let clis: Clis = {};

beforeAll(async () => {
  clis = await pinnedClis();
}, 45 * 60_000);

const command = (text: string): RunbookCommand => ({ line: 0, text, words: shellWords(text) });

describe("reading commands out of the runbook", () => {
  it.each([
    ["pulumi config set --secret --path 'tenantHcloudTokens.a' <t>", ["pulumi", "config", "set", "--secret", "--path", "tenantHcloudTokens.a", "<t>"]],
    ['echo "a b"  # note', ["echo", "a b"]],
  ])("splits %s", (text, words) => {
    expect(runbookCommands(["```sh", text, "```"].join("\n"))[0]?.words).toEqual(words);
  });

  it("splits pipes and &&, drops env assignments and comments, skips non-shell blocks", () => {
    const markdown = ["```sh", "X=1 pulumi stack output --json | npm run plan -- --deployed-from -  # why", "read -rs T && export T", "```", "```yaml", "a: b", "```"].join("\n");
    expect(runbookCommands(markdown).map((c) => c.words[0])).toEqual(["pulumi", "npm", "read", "export"]);
  });

  it("reads cobra help", () => {
    const help = "Available Commands:\n  output      Show outputs\n  select      Switch\n\nFlags:\n  -s, --stack string   The stack\n      --show-secrets   Show\n";
    expect(cobraSubcommands(help)).toEqual(["output", "select"]);
    expect(helpHasFlag(help, "--stack")).toBe(true);
    expect(helpHasFlag(help, "-s")).toBe(true);
    expect(helpHasFlag(help, "--show-secrets")).toBe(true);
    expect(helpHasFlag(help, "--show")).toBe(false);
    expect(helpHasFlag(help, "--stack=prod")).toBe(true);
  });
});

describe("docs/operations.md", () => {
  const commands = runbookCommands(runbook);

  it("has commands for every section of the runbook", () => {
    expect(commands.length).toBeGreaterThan(40);
    for (const section of ["Bootstrap from zero", "Add a tenant", "Upgrade a tenant", "Upgrade the platform", "Delete a tenant", "Rotate tokens", "Recover from a failed upgrade", "Upgrade the management cluster"]) {
      expect(runbook).toContain(section);
    }
  });

  it("uses only commands that exist: npm scripts, repo scripts (--help), pulumi, kubectl and clusterctl subcommands and flags", async () => {
    expect(clis.pulumi, "pinned pulumi CLI").toBeDefined();
    expect(clis.kubectl, "pinned kubectl").toBeDefined();
    expect(clis.clusterctl, "clusterctl at the catalog's CAPI version").toBeDefined();
    const checks = await Promise.all(commands.map((c) => checkCommand(c, clis)));
    expect(checks.flatMap((check) => check.problems)).toEqual([]);
    expect(checks.flatMap((check) => check.unchecked ?? [])).toEqual([]);
  }, 120_000);

  it("refuses what does not exist (negative controls)", async () => {
    const problems = async (text: string) => (await checkCommand(command(text), clis)).problems.join("\n");
    expect(await problems("pulumi preview -s prod --policy-pak policies")).toContain("pulumi preview: no flag --policy-pak");
    expect(await problems("pulumi stak ls")).toContain('unknown command "stak"');
    expect(await problems("kubectl get clusters -A --kubconfig x")).toContain("kubectl get: no flag --kubconfig");
    expect(await problems("npm run deploy")).toContain('package.json has no script "deploy"');
    expect(await problems("node scripts/nope.mjs")).toContain("scripts/nope.mjs is not a script in this repository");
    expect(await problems("node components/nope.mjs")).toContain("components/nope.mjs is not a script in this repository");
    expect(await problems("node infra/index.ts")).toContain("infra/index.ts is not a script in this repository");
    expect(await problems("clusterctl move --from-dir backup --to-kubeconfig k")).toContain("clusterctl move: no flag --from-dir");
    expect(await problems("clusterctl restore --from-directory backup")).toContain('unknown command "restore"');
    expect(await problems("hcloud server list")).toContain("hcloud is neither a repository script nor pulumi/kubectl/clusterctl");
  }, 60_000);

  it("runs the plan command exactly as written (offline)", async () => {
    const plan = commands.find((c) => c.text === "npm run plan -- --stack prod");
    expect(plan).toBeDefined();
    const { stdout } = await execFileAsync(path.join(repoRoot, "scripts", "with-node22"), ["scripts/plan", "--stack", "prod"], { cwd: repoRoot, timeout: 120_000 });
    expect(stdout).toContain("payments");
  }, 120_000);
});
