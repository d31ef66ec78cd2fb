import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sdkPluginVersion } from "../support/plugins";
import { repoRoot } from "../support/stack-files";
import { scratchDirectories } from "../support/scratch";

const scratchDir = scratchDirectories();

// The shell entry points, run the way a user would on a machine without the tools they need.

/** PATH with node (this process's) but without go or pulumi. */
const pathWithoutTools = [path.dirname(process.execPath), "/usr/bin", "/bin"].join(":");

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync("bash", [path.join(repoRoot, script), ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { HOME: process.env.HOME ?? "/root", PATH: pathWithoutTools, ...env },
    timeout: 60_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A directory with a `pulumi` that records each invocation's arguments (one line each) and succeeds. */
function recordingPulumi(): { bin: string; calls: () => string[][] } {
  const bin = scratchDir("fake-pulumi-");
  const log = path.join(bin, "calls");
  writeFileSync(path.join(bin, "pulumi"), `#!/bin/sh\nprintf '%s\\037' "$@" >>"${log}"\necho >>"${log}"\n`, { mode: 0o755 });
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trimEnd().split("\n").map((line) => line.split("\u001f").slice(0, -1)) : []);
  return { bin, calls };
}

describe("scripts/preview", () => {
  it.each(["dev", "prod"])("previews %s with the policy pack and that stack's policy config, as the PR workflow does", (stack) => {
    const pulumi = recordingPulumi();
    const { code, output } = run("scripts/preview", [stack], { PATH: `${pulumi.bin}:${pathWithoutTools}`, PULUMI_BACKEND_URL: `file://${pulumi.bin}` });
    expect(code, output).toBe(0);
    const preview = pulumi.calls().find((args) => args[0] === "preview");
    expect(preview).toEqual(["preview", "--stack", stack, "--non-interactive", "--policy-pack", "policies", "--policy-pack-config", `policies/config/${stack}.json`]);
  });

  it("starts the pack through the engine's legacy analyzer path for the offline toolchain's CLI", () => {
    const pulumi = recordingPulumi();
    const { code, output } = run("scripts/preview", ["dev"], { PATH: `${pulumi.bin}:${pathWithoutTools}`, PULUMI_BACKEND_URL: `file://${pulumi.bin}`, CAPI_FLEET_POLICY_PACK_START: "legacy" });
    expect(code, output).toBe(0);
    const preview = pulumi.calls().find((args) => args[0] === "preview")!;
    const pack = preview[preview.indexOf("--policy-pack") + 1]!;
    expect(preview.slice(-2)).toEqual(["--policy-pack-config", "policies/config/dev.json"]);
    expect(readFileSync(path.join(pack, "PulumiPolicy.yaml"), "utf8")).toBe("runtime: nodejs-legacy\n");
    expect(readlinkSync(path.join(pack, "index.ts"))).toBe(path.join(repoRoot, "policies", "index.ts"));
    const shim = readFileSync(path.join(pack, "..", "bin", "pulumi-analyzer-policy-nodejs-legacy"), "utf8");
    expect(shim).toContain(path.join(repoRoot, "node_modules", "@pulumi", "pulumi", "cmd", "run-policy-pack"));
  });

  it("refuses a stack without a policy config", () => {
    const pulumi = recordingPulumi();
    const { code, output } = run("scripts/preview", ["staging"], { PATH: `${pulumi.bin}:${pathWithoutTools}`, PULUMI_BACKEND_URL: `file://${pulumi.bin}` });
    expect(code).toBe(1);
    expect(output).toContain("no policy config policies/config/staging.json");
    expect(pulumi.calls()).toEqual([]);
  });

  it("says plainly that the Pulumi CLI is missing when there is neither pulumi nor Go", () => {
    const { code, output } = run("scripts/preview", ["dev"]);
    expect(code).toBe(1);
    expect(output).toContain("preview: the Pulumi CLI is missing.");
    expect(output).toContain("https://www.pulumi.com/docs/install/");
  });
});

describe("tools/toolchain", () => {
  it("fails at once without Go, naming what is needed", () => {
    const { code, output } = run("tools/toolchain", ["build"]);
    expect(code).toBe(1);
    expect(output).toContain("Go is missing: install Go >= 1.26");
  });

  it("lists its pins, one plugin per provider SDK, and a cache key", () => {
    const { code, output } = run("tools/toolchain", ["pins"]);
    expect(code).toBe(0);
    // The row the engine looks up for the SDK: the version in @pulumi/kubernetes's "pulumi" block.
    const sdk = sdkPluginVersion("kubernetes");
    expect(output).toMatch(new RegExp(`^kubernetes\\s+${sdk.replaceAll(".", "\\.")}\\s`, "m"));
    expect(output).toMatch(/^pinset-key: p\d+\.\d+\.\d+-[0-9a-f]{12}$/m);
  });

  it("prints the offline switches for the environment", () => {
    const { code, output } = run("tools/toolchain", ["env"]);
    expect(code).toBe(0);
    for (const line of ["PULUMI_SKIP_UPDATE_CHECK=true", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true", "PULUMI_IGNORE_AMBIENT_PLUGINS=true"]) {
      expect(output).toContain(`export ${line}`);
    }
  });

  it("rejects an unknown piece", () => {
    const { code, output } = run("tools/toolchain", ["build", "kubernets"]);
    expect(code).toBe(1);
    expect(output).toContain("unknown piece 'kubernets'");
  });
});
