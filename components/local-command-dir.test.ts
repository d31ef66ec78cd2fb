import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { byType, runStack } from "../tests/support/fleet-run";
import { commandWorkingDirectory, enginePwd } from "../tests/support/engine-pwd";
import { repoRoot } from "../tests/support/stack-files";

const commandType = "command:local:Command";

/** The script a command line starts (`node <script> …`). */
function scriptOf(line: string): string {
  const script = /^node (\S+)/.exec(line)?.[1];
  if (!script) throw new Error(`not a node command line: ${line}`);
  return script;
}

describe("local commands run where their scripts are", () => {
  it("the engine runs this program in infra/, not in the repository root (Pulumi.yaml main)", () => {
    // The premise of `dir`: a command without it would look for `infra/scripts/…`.
    expect(enginePwd()).toBe(path.join(repoRoot, "infra"));
  });

  it.each(["dev", "prod"])("%s: every command's script exists in the directory pulumi-command runs it in", async (stack) => {
    const { registrations } = await runStack(stack);
    const commands = byType(registrations, commandType);
    // PKI (two), the API wait, the upgrade controller's installer, and each tenant's kubeconfig read and drain.
    expect(commands.length).toBeGreaterThanOrEqual(6);
    for (const command of commands) {
      const line = (command.inputs.create ?? command.inputs.delete) as string;
      const where = commandWorkingDirectory(command.inputs);
      expect(where, command.name).toBe(repoRoot);
      expect(existsSync(path.join(where, scriptOf(line))), `${command.name}: ${line} in ${where}`).toBe(true);
      // The same relative `dir` on every machine: an absolute one would change the input, and re-run `create`.
      expect(path.isAbsolute(command.inputs.dir as string), command.name).toBe(false);
    }
  });
});
