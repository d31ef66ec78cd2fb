import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineEngineScratch } from "../support/legacy-policy-pack";
import { sdkPluginVersion, writeCommandPluginStandIn } from "../support/plugins";
import { repoRoot } from "../support/stack-files";
import { skipIfDeclared } from "../support/unverified";
import { downloadModule } from "../support/upstream";

/**
 * `command:local:Command` through the real engine (the toolchain's CLI 3.248.0): `up`, a no-op
 * `up`, an update, a replacement, a failing command and `destroy`, on a project whose `main` is a
 * directory, as the fleet's is. It runs twice with the same assertions: with the STAND-IN plugin
 * (tests/support/fakes/command-plugin.mjs, what the real-`up` tests use, because the Go module proxy
 * refuses the real one), and with the real pulumi-command 1.2.1 plugin built by hand from its
 * release tag (CAPI_FLEET_COMMAND_PLUGIN); without it that run is a declared skip. The stand-in's
 * passes say only that it behaves as the real plugin did here, on these steps.
 */

const execFileAsync = promisify(execFile);
const realPluginEnv = "CAPI_FLEET_COMMAND_PLUGIN";
const commandModule = "github.com/pulumi/pulumi-command/provider";
const commandVersion = sdkPluginVersion("command");
const toolchain = path.join(repoRoot, "tools", "toolchain");
/** The commit tools/toolchain builds the plugin from (its pins block). */
const commandPin = new RegExp(`^command\\s+${commandVersion.replaceAll(".", "\\.")}\\s+${commandModule}\\s+(\\S+)$`, "m").exec(readFileSync(toolchain, "utf8"))?.[1];
const scratchRoot = path.join(repoRoot, "node_modules", ".cache", "command-plugin");
let cliCache = "";
const scratches: string[] = [];

/** The program: one command whose every input comes from the stack's config. */
const program = `
const pulumi = require("@pulumi/pulumi");
const command = require("@pulumi/command");
const config = new pulumi.Config();
const log = config.require("log");
const probe = new command.local.Command("probe", {
  create: config.get("create") ?? \`echo create >> \${log}; pwd; echo "greeting=$GREETING"; echo to-stderr >&2\`,
  delete: \`printf 'delete after: %s\\n' "$(printf %s "$PULUMI_COMMAND_STDOUT" | tr '\\n' '|')" >> \${log}\`,
  dir: config.get("dir"),
  environment: { GREETING: config.requireSecret("greeting") },
  triggers: [config.require("trigger")],
});
exports.stdout = probe.stdout;
exports.stderr = probe.stderr;
`;

interface StateResource {
  type: string;
  outputs?: Record<string, unknown>;
  initErrors?: string[];
}

interface Run {
  code: number;
  output: string;
}

function plugin(kind: "stand-in" | "real", bin: string): string {
  return kind === "real" ? process.env[realPluginEnv]! : writeCommandPluginStandIn(bin);
}

async function workspace(kind: "stand-in" | "real") {
  const { scratch, env } = offlineEngineScratch(repoRoot, scratchRoot, cliCache, "command-plugin");
  scratches.push(scratch);
  const project = path.join(scratch, "program");
  mkdirSync(path.join(project, "infra"));
  writeFileSync(path.join(project, "Pulumi.yaml"), "name: command-probe\nruntime: nodejs\nmain: infra/\n");
  writeFileSync(path.join(project, "package.json"), '{ "name": "command-probe" }\n');
  writeFileSync(path.join(project, "infra", "index.js"), program);
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(project, "node_modules"));
  const log = path.join(scratch, "commands.log");
  const run = async (...args: string[]): Promise<Run> => {
    try {
      const { stdout, stderr } = await execFileAsync("pulumi", args, { cwd: project, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const { code, stdout = "", stderr = "" } = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof code === "number" ? code : 1, output: stdout + stderr };
    }
  };
  const must = async (...args: string[]) => {
    const result = await run(...args);
    expect(result.code, `pulumi ${args.join(" ")}\n${result.output}`).toBe(0);
    return result.output;
  };
  await must("plugin", "install", "resource", "command", commandVersion, "--file", plugin(kind, path.join(scratch, "bin")));
  await must("stack", "init", "probe");
  const config = async (values: Record<string, string>) => {
    // The greeting is a secret, as the fleet's kubeconfigs are.
    for (const [key, value] of Object.entries(values)) await must("config", "set", ...(key === "greeting" ? ["--secret"] : []), key, value);
  };
  const up = (...extra: string[]) => run("up", "--yes", "--skip-preview", "--non-interactive", ...extra);
  const outputs = async () => JSON.parse(await must("stack", "output", "--json", "--show-secrets")) as { stdout?: string; stderr?: string };
  const shownOutputs = async () => JSON.parse(await must("stack", "output", "--json")) as unknown;
  const commandsInState = async () =>
    ((JSON.parse(await must("stack", "export")) as { deployment: { resources?: StateResource[] } }).deployment.resources ?? []).filter((resource) => resource.type === "command:local:Command");
  const logLines = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  return { project, log, run, must, config, up, outputs, shownOutputs, commandsInState, logLines };
}

/** The engine's summary of an `up`: "+ 1 created", "~ 1 updated", "+-1 replaced", "- 1 deleted". */
const changes = (output: string) => {
  const summary = output.slice(output.lastIndexOf("Resources:"));
  return [...summary.matchAll(/^\s+(\+-|[+~-])\s*(\d+) (created|updated|replaced|deleted)/gm)].map((match) => `${match[3]} ${match[2]}`);
};

/** The scenario, with the same assertions for either plugin. */
async function scenario(kind: "stand-in" | "real") {
  const w = await workspace(kind);
  await w.config({ log: w.log, greeting: "hello", trigger: "1" });

  // 1. Create: the command runs once, in the program's directory (the engine's pwd for `main: infra/`).
  const created = await w.up();
  expect(created.code, created.output).toBe(0);
  expect(changes(created.output)).toEqual(["created 2"]);
  expect(w.logLines()).toEqual(["create"]);
  expect(await w.outputs()).toEqual({ stdout: `${path.join(w.project, "infra")}\ngreeting=hello`, stderr: "to-stderr" });
  // The plugin keeps a secret input secret where it is, but not what the command prints: stdout
  // is plain even when it echoes the secret (hence the fleet's additionalSecretOutputs: ["stdout"]).
  expect(await w.shownOutputs()).toEqual({ stdout: `${path.join(w.project, "infra")}\ngreeting=hello`, stderr: "to-stderr" });
  const [stored] = await w.commandsInState();
  expect(Object.keys((stored?.outputs?.environment as { GREETING: object }).GREETING)).toContain("ciphertext");

  // 2. Nothing changed: nothing runs.
  const noop = await w.up();
  expect(noop.code, noop.output).toBe(0);
  expect(changes(noop.output)).toEqual([]);
  expect(w.logLines()).toEqual(["create"]);

  // 3. An input changes: an update, which runs `create` again (there is no `update`), in `dir` now.
  await w.config({ greeting: "hola", dir: ".." });
  const updated = await w.up();
  expect(updated.code, updated.output).toBe(0);
  expect(changes(updated.output)).toEqual(["updated 1"]);
  expect(w.logLines()).toEqual(["create", "create"]);
  expect((await w.outputs()).stdout).toBe(`${w.project}\ngreeting=hola`);

  // 4. A trigger changes: a replacement, the new one created before the old one's delete runs.
  await w.config({ trigger: "2" });
  const replaced = await w.up();
  expect(replaced.code, replaced.output).toBe(0);
  expect(changes(replaced.output)).toEqual(["replaced 1"]);
  expect(w.logLines()).toEqual(["create", "create", "create", `delete after: ${w.project}|greeting=hola`]);

  // 5. A failing command fails the `up` with its exit status, its command line and its output.
  await w.config({ trigger: "3", create: "echo broken; exit 3" });
  const failed = await w.up();
  expect(failed.code).not.toBe(0);
  expect(failed.output).toContain('exit status 3: running "echo broken; exit 3":');
  expect(failed.output).toContain("broken");
  // The failed replacement is not kept: the state still holds the last good command.
  expect((await w.commandsInState()).map((resource) => ({ triggers: resource.outputs?.triggers, initErrors: resource.initErrors }))).toEqual([{ triggers: ["2"], initErrors: undefined }]);

  // 6. Destroy runs the delete of what the state holds, with the last stdout in its environment.
  const destroyed = await w.run("destroy", "--yes", "--skip-preview", "--non-interactive");
  expect(destroyed.code, destroyed.output).toBe(0);
  expect(w.logLines()).toEqual(["create", "create", "create", `delete after: ${w.project}|greeting=hola`, `delete after: ${w.project}|greeting=hola`]);
  expect(JSON.parse(await w.must("stack", "export")).deployment.resources ?? []).toEqual([]);
}

beforeAll(async () => {
  await execFileAsync(toolchain, ["build", "cli"], { cwd: repoRoot, timeout: 30 * 60_000, maxBuffer: 16 * 1024 * 1024 });
  cliCache = /^cache: (.+)$/m.exec((await execFileAsync(toolchain, ["pins"], { cwd: repoRoot })).stdout)?.[1] ?? "";
  expect(cliCache, "tools/toolchain pins names its cache").not.toBe("");
}, 35 * 60_000);

afterAll(() => {
  for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
});

describe("command:local:Command through the real engine", () => {
  it("the stand-in plugin: create in the program's directory, no-op, update, replace, failure and destroy", async () => {
    await scenario("stand-in");
  }, 300_000);

  it(`the real pulumi-command ${commandVersion} plugin does the same`, async (context) => {
    const given = process.env[realPluginEnv];
    if (!given) {
      expect(commandPin, `tools/toolchain pins command ${commandVersion}`).toBeDefined();
      const answer = downloadModule(commandModule, commandPin!);
      if ("refused" in answer) return skipIfDeclared(context, `${answer.refused}; ${realPluginEnv} (a plugin built from the v${commandVersion} tag) runs it`);
      throw new Error(`${commandModule}@${commandPin!} is served by the Go module proxy here, but this test does not build it: set ${realPluginEnv} to a plugin built from it`);
    }
    if (!existsSync(given)) throw new Error(`${realPluginEnv}=${given}: no such file`);
    await scenario("real");
  }, 300_000);
});
