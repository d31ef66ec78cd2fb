import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { stackConfigFromFile } from "../infra/model/config/stack-file";
import { parseFleetConfig } from "../infra/model/stack/validate-fleet-config";
import { catalog } from "../infra/model/versions/catalog";
import { runNodeScript } from "../tests/support/script-harness";
import { repoRoot } from "../tests/support/stack-files";

// `npm run e2e` (scripts/e2e.mjs) without a target to run against: its help, its refusals, and the
// stack it would create on Hetzner, through the program's own validation (the path of `npm run
// plan`). Its run against the local stand-ins is tests/in-the-loop/tenant-real-up.test.ts.

const script = path.join(repoRoot, "scripts", "e2e.mjs");
const hetznerEnv = { HCLOUD_TOKEN: "not-a-real-token", E2E_ADMIN_CIDR: "203.0.113.7/32" };

describe("npm run e2e", () => {
  it("--help documents both targets, the token, what a run costs on Hetzner and the clean-up after a failure", async () => {
    const help = await runNodeScript(script, {}, 20_000, ["--help"]);
    expect(help.code).toBe(0);
    for (const phrase of ["hetzner", "local", "HCLOUD_TOKEN", "E2E_ADMIN_CIDR", "E2E_LOCAL_TARGET", "Cost:", "servers", "minutes", "After a failure", "destroy,leftovers", "hcloud-leftovers"]) {
      expect(help.stdout, phrase).toContain(phrase);
    }
  });

  it.each([
    [[], {}, "--target must be hetzner or local"],
    [["--target", "aws"], {}, '--target must be hetzner or local (got "aws")'],
    [["--target", "hetzner", "--steps", "up,deploy"], hetznerEnv, "--steps: unknown deploy; allowed: up, check, upgrade, destroy, leftovers"],
    [["--target", "hetzner", "--print-stack"], { E2E_ADMIN_CIDR: "203.0.113.7/32" }, "--target hetzner needs HCLOUD_TOKEN"],
    [["--target", "hetzner", "--print-stack"], { HCLOUD_TOKEN: "x" }, "--target hetzner needs E2E_ADMIN_CIDR"],
    [["--target", "local", "--print-stack"], {}, "--target local needs E2E_LOCAL_TARGET"],
  ])("refuses %j with exit 2 before creating anything", async (args, env, message) => {
    const run = await runNodeScript(script, env, 20_000, args);
    expect(run.code, run.output).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it("the Hetzner target's stack passes the program's validation, its secrets set with --secret, and its tenant has a listed minor to upgrade to", async () => {
    const run = await runNodeScript(script, hetznerEnv, 20_000, ["--target", "hetzner", "--print-stack"]);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).not.toContain(hetznerEnv.HCLOUD_TOKEN);
    const input = stackConfigFromFile("e2e", parse(run.stdout));
    expect([...input.secretKeys].sort()).toEqual(["capi-fleet:tenantHcloudTokens", "hcloud:token"]);
    const config = parseFleetConfig(input);
    expect(config.management.mode).toBe("hetzner");
    const [tenant] = config.tenants;
    const minor = (version: string) => Number(version.split(".")[1]);
    const listed = catalog.tenantKubernetesVersions as readonly string[];
    expect(listed.some((version) => minor(version) === minor(tenant!.kubernetesVersion) + 1)).toBe(true);
  });

  it("the scheduled workflow runs it against Hetzner with the project token from a secret, and does nothing without one", () => {
    const workflow = parse(readFileSync(path.join(repoRoot, ".github", "workflows", "e2e.yml"), "utf8")) as {
      on: { schedule?: unknown[] };
      jobs: Record<string, { steps: { run?: string; env?: Record<string, string> }[] }>;
    };
    expect(workflow.on.schedule?.length).toBeGreaterThan(0);
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const run = steps.find((step) => step.run?.includes("npm run e2e -- --target hetzner"));
    expect(run?.env?.HCLOUD_TOKEN).toMatch(/^\$\{\{ secrets\.\w+ \}\}$/);
    expect(run?.run).toMatch(/if \[ -z "\$HCLOUD_TOKEN" \]; then[\s\S]*exit 0/);
    expect(run?.run).toContain("E2E_ADMIN_CIDR");
  });
});
