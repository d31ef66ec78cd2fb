import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { parse, stringify } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { parseFleetConfig } from "../infra/model/stack/validate-fleet-config";
import { readStackConfig } from "../tests/support/stack-files";
import { repoRoot } from "../tests/support/stack-files";
import { scratchDirectories } from "../tests/support/scratch";

const scratchDir = scratchDirectories();

// `npm run plan` end to end: the first test runs scripts/plan as users do; the others run what it
// runs (scripts/plan.ts with scripts/run-ts), some in a working directory of their own.

const [oldest, middle, newest] = catalog.tenantKubernetesVersions;
const runTs = path.join(repoRoot, "scripts", "run-ts");
/** PATH with the node running the tests first: scripts/run-ts and scripts/plan run `node`. */
const nodeOnPath = `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`;

/** A local file backend holding one stack whose last outputs include `tenantVersions`. */
function localBackend(stack: string, tenantVersions: unknown, gzip = false): string {
  const root = scratchDir("plan-state-");
  const dir = path.join(root, ".pulumi", "stacks", "capi-fleet");
  mkdirSync(dir, { recursive: true });
  const checkpoint = JSON.stringify({
    version: 3,
    checkpoint: { stack: `organization/capi-fleet/${stack}`, latest: { resources: [{ type: "pulumi:pulumi:Stack", outputs: { tenantVersions } }] } },
  });
  writeFileSync(path.join(dir, `${stack}.json${gzip ? ".gz" : ""}`), gzip ? gzipSync(checkpoint) : checkpoint);
  return `file://${root}`;
}

/**
 * A copy of the prod stack file whose tenants all sit in one namespace: every field is valid,
 * but the program refuses the combination (a cross-field rule).
 */
function brokenStackDir(): string {
  const dir = scratchDir("plan-stacks-");
  mkdirSync(path.join(dir, "stacks"));
  const document = parse(readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8")) as { config: Record<string, { namespace?: string }[]> };
  for (const tenant of document.config["capi-fleet:tenants"]!) {
    tenant.namespace = "shared";
  }
  writeFileSync(path.join(dir, "stacks", "Pulumi.broken.yaml"), stringify(document));
  return dir;
}

function plan(args: string[], input?: string, env: Record<string, string> = {}, cwd = repoRoot) {
  const result = spawnSync(runTs, [path.join(repoRoot, "scripts", "plan.ts"), ...args], {
    cwd,
    encoding: "utf8",
    input,
    env: { ...process.env, PATH: nodeOnPath, PULUMI_BACKEND_URL: `file://${path.join(repoRoot, "no-such-state")}`, ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm run plan", () => {
  let first: ReturnType<typeof plan>;

  beforeAll(() => {
    const result = spawnSync("bash", ["scripts/plan", "--stack", "prod", "--deployed", `analytics=${oldest}`], {
      cwd: repoRoot,
      encoding: "utf8",
      env: {
        ...process.env,
        PATH: nodeOnPath,
        PULUMI_BACKEND_URL: `file://${path.join(repoRoot, "no-such-state")}`,
      },
    });
    first = { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }, 60_000);

  it("prints the campaign for a tenant two minors behind", () => {
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`analytics: ${oldest} → ${newest}`);
    expect(first.stdout).toContain(`control plane: ${middle} → ${newest} (2 steps, never skipping a minor)`);
    expect(first.stdout).toContain(`workers:       ${newest} (1 rollout; lower bound 1; one per minor would be 2)`);
    expect(first.stdout).toContain(`payments: not deployed yet → created at ${middle}`);
  });

  it("reads deployed versions from the stack's tenantVersions output on stdin", () => {
    const output = JSON.stringify({ edge: { deployed: null, target: oldest }, payments: { deployed: null, target: middle } });
    const result = plan(["--stack", "prod", "--deployed-from", "-"], output);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`edge: ${oldest}, unchanged`);
    expect(result.stdout).toContain(`payments: ${middle}, unchanged`);
  });

  it.each([false, true])("reads deployed versions from a local file backend's state (gzipped: %s)", (gzip) => {
    const backend = localBackend("prod", { analytics: { deployed: null, target: oldest }, edge: { target: "latest" } }, gzip);
    const result = plan(["--stack", "prod"], undefined, { PULUMI_BACKEND_URL: backend });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Deployed versions from: state \S+prod\.json(\.gz)? \(1 tenant\(s\), ignored malformed edge\)/);
    expect(result.stdout).toContain(`analytics: ${oldest} → ${newest}`);
    expect(result.stdout).toContain(`edge: not deployed yet`);
  });

  it("lets --deployed override the state, and leaves remote backends to --deployed-from", () => {
    const backend = localBackend("prod", { analytics: { target: oldest } });
    expect(plan(["--stack", "prod", "--deployed", `analytics=${newest}`], undefined, { PULUMI_BACKEND_URL: backend }).stdout).toContain(`analytics: ${newest}, unchanged`);
    const remote = plan(["--stack", "prod"], undefined, { PULUMI_BACKEND_URL: "s3://bucket" });
    expect(remote.stdout).toContain("no local state (backend s3://bucket; pipe `pulumi stack output tenantVersions --json` into --deployed-from -)");
  });

  it("runs the program's whole config validation first: a config it refuses prints the same problems and exits 1", () => {
    const dir = brokenStackDir();
    const result = plan(["--stack", "broken"], undefined, {}, dir);
    expect(result.status).toBe(1);
    expect(result.stdout).not.toContain("every plan is possible");
    // The same message the program stops with (infra/config.ts), for the same stack file.
    const { values, secretKeys } = readStackConfig("prod");
    values["capi-fleet:tenants"] = JSON.stringify((JSON.parse(values["capi-fleet:tenants"]!) as object[]).map((tenant) => ({ ...tenant, namespace: "shared" })));
    let expected = "";
    try {
      parseFleetConfig({ stack: "broken", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(expected).toContain('tenants[1].namespace: "shared" is already the namespace of tenants[0]');
    expect(result.stderr.trim()).toBe(expected);
  });

  it("rejects an impossible plan with the reason and exit code 1", () => {
    const result = plan(["--stack", "prod", "--deployed", `payments=${newest}`]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`payments: ${newest} → ${middle}: IMPOSSIBLE`);
    expect(result.stdout).toContain("cannot downgrade the control plane");
  });

  it.each([
    [["--stack", "staging"], "no stack file stacks/Pulumi.staging.yaml; stacks: dev, prod"],
    [[], "--stack is required"],
    [["--stack", "prod", "--deployed", `billing=${oldest}`], "no tenant named billing in stack prod; tenants: payments, analytics, edge"],
    [["--stack", "prod", "--deployed", "analytics=latest"], "expected <tenant>=vMAJOR.MINOR.PATCH"],
    [["--stack", "prod", "--frobnicate"], "Unknown option '--frobnicate'"],
  ])("refuses %j with usage and exit code 2", (args, message) => {
    const result = plan(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("usage: npm run plan");
  });
});

// ---- the monthly cost ------------------------------------------------------------------------------

/** Prices for hand arithmetic (not Hetzner's), in fsn1 only. */
const testPrices = (() => {
  const entry = (price: string) => ({ source: "test", date: "2026-12-06", monthlyNet: { fsn1: price } });
  return { currency: "EUR", serverTypes: { cx23: entry("3.00"), cx33: entry("5.00") }, loadBalancerTypes: { lb11: entry("5.00") }, primaryIpv4: entry("0.50") };
})();

/**
 * A git repository whose last commit holds dev's stack file as "now", and whose working tree adds
 * a second tenant with an autoscaled pool as "after" (`edit` changes the new tenant).
 */
function costRepo(edit: (tenant: Record<string, unknown>) => void = () => undefined): { dir: string; prices: string } {
  const dir = scratchDir("plan-cost-");
  mkdirSync(path.join(dir, "stacks"));
  const file = path.join(dir, "stacks", "Pulumi.dev.yaml");
  writeFileSync(file, readFileSync(path.join(repoRoot, "stacks", "Pulumi.dev.yaml")));
  const git = (...args: string[]) => {
    const result = spawnSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.com", ...args], { cwd: dir, encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
  };
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "-m", "now");
  const document = parse(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  const tenants = document.config["capi-fleet:tenants"] as Record<string, unknown>[];
  const second = {
    name: "dev-b",
    kubernetesVersion: tenants[0]!.kubernetesVersion,
    regions: ["fsn1"],
    controlPlane: { replicas: 1, machineType: "cx23" },
    workers: [{ name: "md-0", autoscaling: { minSize: 1, maxSize: 4 }, machineType: "cx23", failureDomain: "fsn1" }],
  };
  edit(second);
  tenants.push(second);
  // The same placeholder ciphertext as dev-a's: the plan checks that a secret is there, never decrypts it.
  const tokens = document.config["capi-fleet:tenantHcloudTokens"] as Record<string, unknown>;
  tokens["dev-b"] = tokens["dev-a"];
  writeFileSync(file, stringify(document));
  const prices = path.join(dir, "prices.json");
  writeFileSync(prices, JSON.stringify(testPrices));
  return { dir, prices };
}

describe("npm run plan: the monthly cost", () => {
  // By hand, per month, at the test prices (cx23 3.00, cx33 5.00, lb11 5.00, IPv4 0.50):
  //   dev-a:  1 cx33 + IPv4 (5.50), 1 cx23 + IPv4 (3.50), lb11 (5.00)         = 14.00, unchanged
  //   dev-b:  1 cx23 + IPv4 (3.50), 1–4 cx23 + IPv4 (3.50–14.00), lb11 (5.00) = 12.00–22.50, new
  //   management: 1 cx23 + IPv4 (3.50), lb11 (5.00)                           = 8.50
  //   stack: 22.50 now, 34.50–45.00 after: +12.00–+22.50
  it("prints each tenant, the management cluster and the stack, now (HEAD) and after (the file as it is), an autoscaled pool as a range", () => {
    const { dir, prices } = costRepo();
    const result = plan(["--stack", "dev", "--prices", prices], undefined, {}, dir);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Monthly cost of stack dev (EUR, net of VAT; an autoscaled pool as min–max):");
    expect(result.stdout).toContain("now: stacks/Pulumi.dev.yaml at HEAD; after: the stack file as it is");
    expect(result.stdout).toMatch(/\n {2}dev-a +14\.00 +14\.00 +±0\.00\n/);
    expect(result.stdout).toMatch(/\n {2}dev-b +— +12\.00–22\.50 +\+12\.00–\+22\.50\n/);
    expect(result.stdout).toMatch(/\n {2}\(management cluster\) +8\.50 +8\.50 +±0\.00\n/);
    expect(result.stdout).toMatch(/\n {2}stack total +22\.50 +34\.50–45\.00 +\+12\.00–\+22\.50\n/);
    expect(result.stdout).toContain("Not known in advance, not included: load balancers of LoadBalancer Services");
  });

  it("stops with the config path when a server type has no price", () => {
    const { dir, prices } = costRepo((tenant) => ((tenant.workers as Record<string, unknown>[])[0]!.machineType = "cx53"));
    const result = plan(["--stack", "dev", "--prices", prices], undefined, {}, dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('tenants[1].workers[0].machineType: "cx53" has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: cx23, cx33');
  });

  it("writes the PR comment's report: the fleet's change and the largest movers", () => {
    const { dir, prices } = costRepo();
    const report = path.join(dir, "costs.json");
    const result = plan(["--cost-report", report, "--prices", prices], undefined, {}, dir);
    expect(result.status, result.stderr).toBe(0);
    const written = JSON.parse(readFileSync(report, "utf8")) as Record<string, unknown>;
    expect(written).toMatchObject({
      currency: "EUR",
      refreshed: true,
      fleet: { now: "22.50", after: "34.50–45.00", change: "+12.00–+22.50" },
      movers: [{ tenant: "dev-b", stack: "dev", now: "—", after: "12.00–22.50", change: "+12.00–+22.50" }],
      stacks: [{ stack: "dev", now: "22.50", after: "34.50–45.00", change: "+12.00–+22.50", unpriced: [] }],
      unpricedStacks: [],
    });
  });

  it("says so when the price table was never refreshed (the committed one, until someone with a Hetzner token refreshes it)", () => {
    const { dir } = costRepo();
    const empty = path.join(dir, "empty.json");
    writeFileSync(empty, JSON.stringify({ currency: "EUR", serverTypes: {}, loadBalancerTypes: {}, primaryIpv4: null }));
    const result = plan(["--stack", "dev", "--prices", empty], undefined, {}, dir);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Monthly cost of stack dev: the price table holds no prices yet; refresh it: HCLOUD_TOKEN=… npm run prices -- --refresh");
  });

  it("counts a stack file that is new since the base as unknown now, not as free", () => {
    const { dir, prices } = costRepo();
    // git's empty tree: a base without the stack file.
    const result = plan(["--stack", "dev", "--prices", prices, "--base", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"], undefined, {}, dir);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("now: stacks/Pulumi.dev.yaml at 4b825dc642cb6eb9a060e54bf8d69288fbee4904 (the stack file is new since 4b825dc642cb6eb9a060e54bf8d69288fbee4904)");
    expect(result.stdout).toMatch(/\n {2}dev-b +\? +12\.00–22\.50 +\?\n/);
    expect(plan(["--stack", "dev", "--prices", prices, "--base", "no-such-ref"], undefined, {}, dir).stdout).toContain("(no-such-ref is not a commit of this repository)");
    expect(result.stdout).toMatch(/stack total +\? +34\.50–45\.00 +\?/);
  });
});
