import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { parse, stringify } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { parseFleetConfig } from "../infra/model/config/validate-fleet-config";
import { readStackConfig } from "./stack-files";
import { repoRoot } from "./stack-files";

// `npm run plan` end to end: scripts/plan compiles the CLI once (first test), the others
// run the compiled file directly to keep the suite fast.

const [oldest, middle, newest] = catalog.tenantKubernetesVersions;
const compiled = path.join(repoRoot, "node_modules/.cache/capi-fleet-plan/scripts/plan.js");

/** A local file backend holding one stack whose last outputs include `tenantVersions`. */
function localBackend(stack: string, tenantVersions: unknown, gzip = false): string {
  const root = mkdtempSync(path.join(tmpdir(), "plan-state-"));
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
  const dir = mkdtempSync(path.join(tmpdir(), "plan-stacks-"));
  mkdirSync(path.join(dir, "stacks"));
  const document = parse(readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8")) as { config: Record<string, { namespace?: string }[]> };
  for (const tenant of document.config["capi-fleet:tenants"]!) {
    tenant.namespace = "shared";
  }
  writeFileSync(path.join(dir, "stacks", "Pulumi.broken.yaml"), stringify(document));
  return dir;
}

function plan(args: string[], input?: string, env: Record<string, string> = {}, cwd = repoRoot) {
  const result = spawnSync(process.execPath, [compiled, ...args], {
    cwd,
    encoding: "utf8",
    input,
    env: { ...process.env, PULUMI_BACKEND_URL: `file://${path.join(repoRoot, "no-such-state")}`, ...env },
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
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`,
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
