import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./stack-files";

// The shell entry points, run the way a user would on a machine without the tools they need.

/** PATH with node (this process's) but without go or pulumi. */
const pathWithoutTools = [path.dirname(process.execPath), "/usr/bin", "/bin"].join(":");

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync("bash", [path.join(repoRoot, "scripts", script), ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { HOME: process.env.HOME ?? "/root", PATH: pathWithoutTools, ...env },
    timeout: 60_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("scripts/preview", () => {
  it("says plainly that the Pulumi CLI is missing when there is neither pulumi nor Go", () => {
    const { code, output } = run("preview", ["dev"]);
    expect(code).toBe(1);
    expect(output).toContain("preview: the Pulumi CLI is missing.");
    expect(output).toContain("https://www.pulumi.com/docs/install/");
  });
});

describe("scripts/toolchain", () => {
  it("fails at once without Go, naming what is needed", () => {
    const { code, output } = run("toolchain", ["build"]);
    expect(code).toBe(1);
    expect(output).toContain("Go is missing: install Go >= 1.26");
  });

  it("lists its pins, one plugin per provider SDK, and a cache key", () => {
    const { code, output } = run("toolchain", ["pins"]);
    expect(code).toBe(0);
    expect(output).toMatch(/^kubernetes\s+4\.32\.0\s/m);
    expect(output).toMatch(/^pinset-key: p\d+\.\d+\.\d+-[0-9a-f]{12}$/m);
  });

  it("prints the offline switches for the environment", () => {
    const { code, output } = run("toolchain", ["env"]);
    expect(code).toBe(0);
    for (const line of ["PULUMI_SKIP_UPDATE_CHECK=true", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true", "PULUMI_IGNORE_AMBIENT_PLUGINS=true"]) {
      expect(output).toContain(`export ${line}`);
    }
  });

  it("rejects an unknown piece", () => {
    const { code, output } = run("toolchain", ["build", "kubernets"]);
    expect(code).toBe(1);
    expect(output).toContain("unknown piece 'kubernets'");
  });
});
