/**
 * STAND-IN for the command resource plugin (pulumi-resource-command 1.2.1), which the Go module
 * proxy here refuses (github.com/pulumi/pulumi-command/provider). It implements only
 * `command:local:Command`, with the rules of the real one read from its v1.2.1 tag
 * (provider/pkg/provider/local/commandController.go and commandOutputs.go, run;
 * provider/pkg/provider/common/inputs.go):
 *
 * - create runs `create`; an update runs `update`, else `create`; a delete runs the stored `delete`,
 *   each with the inputs stored with it; a preview runs nothing.
 * - `/bin/sh -c` (or `interpreter`), in `dir`, else the plugin's own working directory (which the
 *   engine sets to the program's); the plugin's environment plus `environment`, plus
 *   PULUMI_COMMAND_STDOUT/STDERR from the last run unless `addPreviousOutputInEnv` is false.
 * - stdout and stderr lose one trailing newline; a failure reads
 *   `exit status N: running "<command>":\n<stdout and stderr>`.
 * - a change of `triggers` replaces the resource; any other change of an input updates it.
 * - a secret input stays secret where it is; stdout and stderr are plain, even when they print it.
 *
 * What it does not do: assetPaths and archivePaths (refused by check), `logging` (output is not
 * streamed to the engine), and a preview leaves every output unknown (the real one's preview knows
 * the inputs it echoes, and an update's last stdout). tests/in-the-loop/command-plugin.test.ts runs the same
 * scenario through the engine with this stand-in and, given CAPI_FLEET_COMMAND_PLUGIN, with the
 * real plugin. Started by the engine as a resource plugin: `command-plugin.mjs <engine address>`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import providerSdk from "@pulumi/pulumi/provider/index.js";

const secretSig = "4dabf18193072939515e22adb298388d";
const secretValue = "1b47061264138c4ac30d75fd1eb44270";
const inputKeys = ["create", "update", "delete", "triggers", "stdin", "logging", "interpreter", "dir", "environment", "assetPaths", "archivePaths", "addPreviousOutputInEnv"];
const unsupported = ["assetPaths", "archivePaths"];

const isSecret = (value) => value !== null && typeof value === "object" && value[secretSig] === secretValue;
/** The value without secret wrappers, to run with. */
function plain(value) {
  if (isSecret(value)) return plain(value.value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]));
  return value;
}
const inputsOf = (properties) => Object.fromEntries(inputKeys.filter((key) => properties[key] !== undefined).map((key) => [key, properties[key]]));
const trimNewline = (text) => (text.endsWith("\n") ? text.slice(0, -1) : text);

function run(command, inputs, previous) {
  const [shell, ...shellArgs] = inputs.interpreter?.length ? inputs.interpreter : ["/bin/sh", "-c"];
  const env = { ...process.env, ...(inputs.environment ?? {}) };
  if (inputs.addPreviousOutputInEnv !== false) {
    if (previous?.stdout) env.PULUMI_COMMAND_STDOUT = previous.stdout;
    if (previous?.stderr) env.PULUMI_COMMAND_STDERR = previous.stderr;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(shell, [...shellArgs, command], { cwd: inputs.dir ?? process.cwd(), env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let both = "";
    child.stdout.on("data", (chunk) => ((stdout += chunk), (both += chunk)));
    child.stderr.on("data", (chunk) => ((stderr += chunk), (both += chunk)));
    child.on("error", reject);
    child.stdin.end(inputs.stdin ?? "");
    child.on("close", (code, signal) => {
      if (code === 0) resolve({ stdout: trimNewline(stdout), stderr: trimNewline(stderr) });
      else reject(new Error(`${signal ? `signal: ${signal}` : `exit status ${code}`}: running ${JSON.stringify(command)}:\n${both}`));
    });
  });
}

const nameOf = (urn) => urn.split("::").at(-1);
const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const provider = {
  version: "1.2.1",
  async check(urn, _olds, news) {
    const failures = unsupported.filter((key) => news[key] !== undefined).map((property) => ({ property, reason: `the command plugin stand-in does not implement ${property}` }));
    return { inputs: news, failures };
  },
  async diff(_id, _urn, olds, news) {
    const before = inputsOf(plain(olds));
    const after = inputsOf(plain(news));
    const changed = inputKeys.filter((key) => !same(before[key], after[key]));
    return { changes: changed.length > 0, replaces: changed.includes("triggers") ? ["triggers"] : [], deleteBeforeReplace: false };
  },
  // Outputs: the inputs as given (a secret stays secret where it was) and stdout/stderr, plain.
  async create(urn, properties) {
    const inputs = inputsOf(plain(properties));
    const result = inputs.create === undefined ? { stdout: "", stderr: "" } : await run(inputs.create, inputs, undefined);
    return { id: `${nameOf(urn)}${randomBytes(4).toString("hex")}`, outs: { ...inputsOf(properties), ...result } };
  },
  async update(_id, _urn, olds, news) {
    const previous = plain(olds);
    const inputs = inputsOf(plain(news));
    const command = inputs.update ?? inputs.create;
    const result = command === undefined ? { stdout: previous.stdout ?? "", stderr: previous.stderr ?? "" } : await run(command, inputs, previous);
    return { outs: { ...inputsOf(news), ...result } };
  },
  async delete(_id, _urn, properties) {
    const state = plain(properties);
    if (state.delete !== undefined) await run(state.delete, inputsOf(state), state);
  },
};

await providerSdk.main(provider, process.argv.slice(2));
