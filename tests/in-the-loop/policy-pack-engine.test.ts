import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { offlineEngineScratch } from "../support/legacy-policy-pack";
import { repoRoot } from "../support/stack-files";
import { componentTypes } from "../../infra/model/contract/component-types";

/**
 * The policy pack inside the real Pulumi engine (CLI built by tools/toolchain): the engine
 * starts the pack, validates policies/config/<stack>.json against the rules' schemas, sends
 * each resource's inputs and fails the preview on a mandatory violation.
 *
 * The program here is a stand-in: the fleet's own program needs provider plugins the Go module
 * proxy refuses (the engine issue). It registers components carrying the type tokens and inputs
 * the rules match, which the engine hands to resource rules like any other resource.
 *
 * The pack is started through the engine's legacy analyzer path (see tests/support/legacy-policy-pack.ts).
 */

const execFileAsync = promisify(execFile);
const scratchRoot = path.join(repoRoot, "node_modules", ".cache", "policy-pack-engine");
let scratch = "";
let env: NodeJS.ProcessEnv = {};

const program = `
const pulumi = require("@pulumi/pulumi");
const bad = process.env.SMOKE_BAD === "1";
new pulumi.ComponentResource("${componentTypes.managementCluster}", "management", {
  settings: { mode: "hetzner", k3sVersion: bad ? process.env.BAD_K3S : process.env.GOOD_K3S },
});
// Only in the violating run: a stand-in has no outputs, so the stack rules (which read outputs)
// would report it even when its inputs comply.
if (bad) {
  new pulumi.ComponentResource("kubernetes:cluster.x-k8s.io/v1beta2:Cluster", "edge", {
    metadata: { name: "edge", namespace: "tenant-edge", annotations: { "caren.nutanix.com/loadbalancer-gc": "maybe" } },
    spec: { topology: { version: process.env.TENANT_VERSION, classRef: { name: "hetzner-caren", namespace: "capi-fleet-system" } } },
  });
}
`;

async function pulumi(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync("pulumi", args, { cwd: path.join(scratch, "program"), env: { ...env, ...extra }, timeout: 180_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout = "", stderr = "" } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === "number" ? code : 1, output: stdout + stderr };
  }
}

const preview = (config: string, extra: NodeJS.ProcessEnv = {}) =>
  pulumi(["preview", "--non-interactive", "--policy-pack", path.join(scratch, "pack"), "--policy-pack-config", config], extra);

beforeAll(async () => {
  const toolchain = path.join(repoRoot, "tools", "toolchain");
  await execFileAsync(toolchain, ["build", "cli"], { cwd: repoRoot, timeout: 40 * 60_000, maxBuffer: 16 * 1024 * 1024 });
  const cache = /^cache: (.+)$/m.exec((await execFileAsync(toolchain, ["pins"], { cwd: repoRoot })).stdout)?.[1] ?? "";
  ({ scratch, env } = offlineEngineScratch(repoRoot, scratchRoot, cache, "policy-pack-engine-test"));
  writeFileSync(path.join(scratch, "program", "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
  writeFileSync(path.join(scratch, "program", "index.js"), program);
  writeFileSync(path.join(scratch, "program", "package.json"), '{ "name": "policy-pack-engine-stand-in", "main": "index.js" }\n');
  Object.assign(env, {
    GOOD_K3S: catalog.k3s.version,
    BAD_K3S: catalog.k3s.version.replace(/^v1\.(\d+)\./, (_match, minor: string) => `v1.${Number(minor) - 4}.`),
    TENANT_VERSION: catalog.tenantKubernetesVersions[0],
  });
  const created = await pulumi(["stack", "init", "smoke"]);
  expect(created.code, created.output).toBe(0);
}, 45 * 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the policy pack in the real Pulumi engine", () => {
  it.each(["dev", "prod"])("accepts policies/config/%s.json and passes a compliant preview", async (stack) => {
    const run = await preview(path.join(repoRoot, "policies", "config", `${stack}.json`));
    expect(run.output).toContain("capi-fleet@v0.1.0");
    expect(run.output).not.toContain("[mandatory]");
    expect(run.code, run.output).toBe(0);
  }, 180_000);

  it("fails the preview on mandatory violations and names the rules", async () => {
    const run = await preview(path.join(repoRoot, "policies", "config", "prod.json"), { SMOKE_BAD: "1" });
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/\[mandatory\]\s+management-kubernetes-version/);
    expect(run.output).toContain("management.k3sVersion");
    expect(run.output).toMatch(/\[mandatory\]\s+lb-gc-annotation-boolean/);
    expect(run.output).toContain('annotation caren.nutanix.com/loadbalancer-gc: "maybe" is not a boolean');
  }, 180_000);

  it("refuses a policy config the rules' schemas do not allow", async () => {
    const config = path.join(scratch, "bad-config.json");
    writeFileSync(config, JSON.stringify({ "fleet-version-drift": { maxMinorsBehind: -1 } }));
    const run = await preview(config);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("validating policy config");
    expect(run.output).toContain("maxMinorsBehind");
  }, 180_000);
});
