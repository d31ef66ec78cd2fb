import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import type { Registration } from "./pulumi-mocks";
import type { ScriptRun } from "./script-harness";
import { repoRoot } from "./stack-files";

/**
 * The directory the Pulumi engine runs this project's program and its plugins in, computed from
 * `Pulumi.yaml` as the engine computes it (github.com/pulumi/pulumi/pkg/v3@v3.248.0: engine/project.go,
 * getPwdMain: `main` relative to the project root; a directory is the program's directory, a file's
 * parent is), and where it starts every plugin (sdk/v3@v3.248.0: go/common/resource/plugin/plugin.go,
 * `cmd.Dir = pwd`).
 */
export function enginePwd(projectRoot: string = repoRoot): string {
  const project = parse(readFileSync(path.join(projectRoot, "Pulumi.yaml"), "utf8")) as { main?: string };
  if (!project.main) return projectRoot;
  const main = path.resolve(projectRoot, project.main);
  return statSync(main).isDirectory() ? main : path.dirname(main);
}

/**
 * Where pulumi-command's local provider runs a command: its `dir`, relative to the plugin's
 * directory, or that directory itself (pulumi-command@v1.2.1: provider/pkg/provider/local/commandOutputs.go, `run`).
 */
export function commandWorkingDirectory(inputs: Record<string, unknown>, pluginDirectory: string = enginePwd()): string {
  return typeof inputs.dir === "string" ? path.resolve(pluginDirectory, inputs.dir) : pluginDirectory;
}

/**
 * Runs a registered command's `create` or `delete` line as pulumi-command's local provider does:
 * `sh -c`, in its working directory (above), with `environment` (the command's own, or a test's
 * edit of it). The `node` on PATH is the one running the tests.
 */
export function runRegisteredCommand(command: Registration, phase: "create" | "delete", environment: Record<string, string>, timeoutMs = 60_000): Promise<ScriptRun> {
  const line = command.inputs[phase];
  if (typeof line !== "string") throw new Error(`${command.name} has no ${phase} command`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", line], {
      cwd: commandWorkingDirectory(command.inputs),
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, ...environment },
      timeout: timeoutMs,
    });
    const run = { stdout: "", stderr: "", output: "" };
    child.stdout.on("data", (chunk: Buffer) => ((run.stdout += chunk.toString()), (run.output += chunk.toString())));
    child.stderr.on("data", (chunk: Buffer) => ((run.stderr += chunk.toString()), (run.output += chunk.toString())));
    child.on("close", (code) => {
      resolve({ code, ...run, elapsedMs: Date.now() - started });
    });
  });
}
