import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./stack-files";

/**
 * Reads the shell commands out of a Markdown runbook and checks each against what exists:
 * npm scripts in package.json, repo scripts (which must answer --help), and the subcommands
 * and flags of cobra CLIs (`pulumi`, `kubectl`, `clusterctl`) as their own --help prints them.
 */

const execFileAsync = promisify(execFile);

/** One simple command from a ```sh block. */
export interface RunbookCommand {
  /** 1-based line in the Markdown file. */
  readonly line: number;
  /** Words after shell-style quoting, leading VAR=value assignments removed. */
  readonly words: readonly string[];
  /** The command as written (for messages). */
  readonly text: string;
}

/** Splits a command line into words, honouring '…' and "…" (enough for a runbook). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let current = "";
  let quote: string | undefined;
  let inWord = false;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/** Drops a trailing `# comment` that is not inside quotes. */
function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "#" && (index === 0 || /\s/.test(text[index - 1] ?? ""))) {
      return text.slice(0, index);
    }
  }
  return text;
}

/** Every simple command in the ```sh blocks, split at `|`, `&&`, `||` and `;`. */
export function runbookCommands(markdown: string): RunbookCommand[] {
  const commands: RunbookCommand[] = [];
  let inShell = false;
  markdown.split("\n").forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith("```")) {
      inShell = !inShell && /^```(sh|bash|shell)\s*$/.test(trimmed);
      return;
    }
    if (!inShell) return;
    for (const part of withoutComment(raw).split(/\|\||&&|\||;/)) {
      const words = shellWords(part);
      while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) words.shift();
      if (words.length > 0) commands.push({ line: index + 1, words, text: part.trim() });
    }
  });
  return commands;
}

/** Shell builtins and everyday tools a runbook may use without a check. */
const shellBuiltins = new Set(["export", "unset", "read", "cd", "chmod", "git", "echo"]);

/** Where the CLIs come from; undefined = not available here (those commands are reported as unchecked). */
export interface Clis {
  readonly pulumi?: string;
  readonly kubectl?: string;
  /** Built by tools/capi-toolchain at the catalog's Cluster API version (the fleet backup's restore). */
  readonly clusterctl?: string;
}

/** The subcommands a cobra help text lists under "Available Commands:" or grouped "… Commands:" headings. */
export function cobraSubcommands(help: string): string[] {
  const subcommands: string[] = [];
  let inSection = false;
  for (const line of help.split("\n")) {
    if (/^[A-Z][\w ()]*Commands(?: \([^)]*\))?:\s*$/.test(line)) inSection = true;
    else if (line.trim() === "" || !/^\s/.test(line)) inSection = false;
    else if (inSection) subcommands.push(/^\s+([a-z][\w-]*)/.exec(line)?.[1] ?? "");
  }
  return subcommands.filter(Boolean);
}

/** True when a help text documents the flag (`--stack`, or the shorthand `-s` as "-s, --stack"). */
export function helpHasFlag(help: string, flag: string): boolean {
  const name = flag.split("=")[0] ?? flag;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return name.startsWith("--") ? new RegExp(`(^|[\\s,])${escaped}[=\\s,\\[]`, "m").test(help) : new RegExp(`(^|\\s)${escaped},`, "m").test(help);
}

const helpCache = new Map<string, Promise<string>>();

function helpOf(bin: string, args: readonly string[]): Promise<string> {
  const key = [bin, ...args].join(" ");
  let help = helpCache.get(key);
  if (!help) {
    help = execFileAsync(bin, [...args], { timeout: 30_000, env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true", CLUSTERCTL_DISABLE_VERSIONCHECK: "true", KUBECONFIG: "/dev/null" } }).then(
      ({ stdout, stderr }) => stdout + stderr,
      (error: unknown) => {
        // cobra exits non-zero for some help pages; the text is still the help.
        const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
        return stdout + stderr;
      },
    );
    helpCache.set(key, help);
  }
  return help;
}

/**
 * Problems with a cobra CLI command: an unknown subcommand or a flag its help does not list.
 * Words that are neither flags nor subcommands are arguments (or the value of the flag before).
 */
export async function cobraProblems(bin: string, words: readonly string[], globalHelpArgs: readonly string[] = []): Promise<string[]> {
  const problems: string[] = [];
  const path: string[] = [];
  let help = await helpOf(bin, ["--help"]);
  let previousWasFlag = false;
  const flags: string[] = [];
  for (const word of words.slice(1)) {
    if (word.startsWith("-")) {
      flags.push(word);
      previousWasFlag = !word.includes("=");
      continue;
    }
    const subcommands = cobraSubcommands(help);
    if (subcommands.includes(word)) {
      path.push(word);
      help = await helpOf(bin, [...path, "--help"]);
    } else if (path.length === 0 && !previousWasFlag) {
      problems.push(`${words[0] ?? ""}: unknown command ${JSON.stringify(word)}`);
      return problems;
    }
    previousWasFlag = false;
  }
  const global = globalHelpArgs.length > 0 ? await helpOf(bin, globalHelpArgs) : "";
  for (const flag of flags) {
    if (!helpHasFlag(help, flag) && !helpHasFlag(global, flag)) {
      problems.push(`${[words[0], ...path].join(" ")}: no flag ${flag.split("=")[0] ?? flag}`);
    }
  }
  return problems;
}

const packageScripts = (): Record<string, string> =>
  (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

/** What checking one command found: problems (must be empty) or why it was not checked. */
export interface CommandCheck {
  readonly problems: string[];
  readonly unchecked?: string;
}

/** Where the repository keeps programs a runbook may run: user commands, development tools, and the programs components run. */
const repoProgram = /^(scripts|tools|components)\//;

/** Checks one runbook command against the repository and the CLIs. */
export async function checkCommand(command: RunbookCommand, clis: Clis): Promise<CommandCheck> {
  const [program = "", ...args] = command.words;
  const at = `line ${command.line}: ${command.text}`;
  if (shellBuiltins.has(program)) return { problems: [] };
  if (program === "npm") {
    const [verb, script] = args;
    if (verb === "ci" || verb === "test") return { problems: [] };
    if (verb === "run" && script !== undefined) {
      return { problems: script in packageScripts() ? [] : [`${at}: package.json has no script ${JSON.stringify(script)}`] };
    }
    return { problems: [`${at}: only npm ci, npm test and npm run <script> are expected`] };
  }
  if (program === "node" || repoProgram.test(program)) {
    const script = program === "node" ? (args[0] ?? "") : program;
    const file = path.join(repoRoot, script);
    if (!repoProgram.test(script) || !existsSync(file)) return { problems: [`${at}: ${script} is not a script in this repository`] };
    const run = program === "node" ? [process.execPath, [file, "--help"]] : [file, ["--help"]];
    try {
      await execFileAsync(run[0] as string, run[1] as string[], { timeout: 30_000, cwd: repoRoot });
      return { problems: [] };
    } catch (error) {
      return { problems: [`${at}: ${script} --help failed: ${String(error)}`] };
    }
  }
  if (program === "pulumi" || program === "kubectl" || program === "clusterctl") {
    const bin = clis[program];
    if (!bin) return { problems: [], unchecked: `${at}: no ${program} binary here` };
    const problems = await cobraProblems(bin, command.words, program === "kubectl" ? ["options"] : []);
    return { problems: problems.map((problem) => `${at}: ${problem}`) };
  }
  return { problems: [`${at}: ${program} is neither a repository script nor pulumi/kubectl/clusterctl`] };
}
