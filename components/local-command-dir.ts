import path from "node:path";

/** The repository root: every local command line names its script relative to it (`node scripts/…`). */
const repositoryRoot = path.resolve(__dirname, "..");

/**
 * The `dir` of every `command:local:Command`: the repository root, relative to the directory the
 * engine runs the program in.
 *
 * The engine starts the program and every provider plugin in one directory, `main`'s when `main`
 * is a directory (github.com/pulumi/pulumi/pkg/v3@v3.248.0: engine/project.go, getPwdMain;
 * sdk/v3@v3.248.0: go/common/resource/plugin/plugin.go, `cmd.Dir = pwd`; @pulumi/pulumi's runner
 * changes into that `--pwd` before loading the program: cmd/run/run.js), and a command without
 * `dir` runs in its plugin's directory (pulumi-command@v1.2.1: provider/pkg/provider/local/commandOutputs.go,
 * `run`). With `main: infra/` that is `infra/`, where no script is. Relative, so the input is the
 * same on every machine: a changed input runs `create` again, and for the PKI that means new CAs.
 * Read when a command is declared, not when this module loads: the program's directory is the
 * process's working directory by then.
 */
export function localCommandDir(): string {
  return path.relative(process.cwd(), repositoryRoot) || ".";
}
