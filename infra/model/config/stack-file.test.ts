import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { stackConfigFromFile } from "./stack-file";
import { placeholderSecretPrefix, projectName } from "./stack-config";

// stackConfigFromFile (what `npm run plan` validates without the engine) against the pinned
// Pulumi CLI's own reading of the same stack file: `pulumi config --json --show-secrets` gives
// each key as the engine hands it to the program (namespaced, objects as JSON) and whether it
// is secret. The program must see the same keys, the same values and the same secret keys,
// except that it cannot decrypt: each secret leaf is a placeholder.

/** The toolchain's CLI, built by this file if no earlier run did (tools/toolchain builds it once, cached outside the repo). */
let pulumi: string;
beforeAll(() => {
  // Through bash: a copy of the repository (a mutation-testing sandbox) may not keep the executable bit.
  const toolchain = (...args: string[]) =>
    execFileSync("bash", [path.join(repoRoot, "tools", "toolchain"), ...args], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 40 * 60_000 });
  toolchain("build", "cli");
  const cache = /^cache: (.+)$/m.exec(toolchain("pins"))?.[1];
  if (!cache || !existsSync(path.join(cache, "bin", "pulumi"))) throw new Error(`tools/toolchain build cli left no pulumi in ${cache ?? "(no cache directory)"}`);
  pulumi = path.join(cache, "bin", "pulumi");
}, 45 * 60_000);

const dir = mkdtempSync(path.join(tmpdir(), "stack-file-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The secrets the stack file holds, by the CLI's `--path` syntax. */
const secrets = { "tokens.payments": "s3cret-token", plain: "hidden-value", "list[1]": "listed-secret" };

/** A stack file written by the CLI (secrets, namespaced keys) and by hand (bare keys, YAML scalars), and the CLI's reading of it. */
function cliStack(): { file: string; cli: Record<string, { value: string; objectValue?: unknown; secret: boolean }> } {
  // Its own project and backend per call: a test runner may run the test again in the same process.
  const project = mkdtempSync(path.join(dir, "project-"));
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(project, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(project, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: "test-only",
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
  const run = (...args: string[]) => execFileSync(pulumi, [...args, "--non-interactive"], { cwd: project, env, encoding: "utf8", stdio: "pipe" });
  mkdirSync(path.join(project, "state"), { recursive: true });
  writeFileSync(path.join(project, "Pulumi.yaml"), `name: ${projectName}\nruntime: nodejs\n`);
  run("stack", "init", "dev");
  run(
    "config",
    "set-all",
    "--path",
    ...Object.entries(secrets).flatMap(([at, value]) => ["--secret", `${at}=${value}`]),
    ...["--plaintext", "tenants[0].name=payments", "--plaintext", "other-project:key=v"],
  );
  const file = path.join(project, "Pulumi.dev.yaml");
  appendFileSync(
    file,
    ["  bare: 3", "  flag: true", '  str: "hello"', "  obj:", "    a: [1, {b: c}, null]", "    e: {}", "  notSecret: {secure: not-a-cipher, x: 1}", ""].join("\n"),
  );
  return { file: readFileSync(file, "utf8"), cli: JSON.parse(run("config", "--json", "--show-secrets")) as ReturnType<typeof cliStack>["cli"] };
}

describe("stackConfigFromFile, against the Pulumi CLI's reading of the same stack file", () => {
  it("has the CLI's keys, values and secret keys, with a placeholder for each secret leaf", () => {
    const { file, cli } = cliStack();
    const ours = stackConfigFromFile("dev", parse(file));
    expect(ours.stack).toBe("dev");
    expect(ours.allowPlaceholderSecrets).toBe(true);
    expect(Object.keys(ours.values).sort()).toEqual(Object.keys(cli).sort());
    expect([...ours.secretKeys].sort()).toEqual(
      Object.entries(cli)
        .filter(([, entry]) => entry.secret)
        .map(([key]) => key)
        .sort(),
    );
    // The placeholder of a whole-value secret; validation recognises it by its prefix.
    const placeholder = ours.values[`${projectName}:plain`]!;
    expect(placeholder.startsWith(placeholderSecretPrefix)).toBe(true);
    const hide = (value: unknown): unknown =>
      Object.values(secrets).includes(value as string)
        ? placeholder
        : Array.isArray(value)
          ? value.map(hide)
          : value && typeof value === "object"
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hide(v)]))
            : value;
    for (const [key, entry] of Object.entries(cli)) {
      const value = ours.values[key]!;
      // Objects arrive as JSON (the CLI orders keys; the program reads them as JSON either way).
      if (entry.objectValue !== undefined) expect(JSON.parse(value), key).toEqual(hide(entry.objectValue));
      else expect(value, key).toBe(hide(entry.value));
    }
  });
});

describe("stackConfigFromFile", () => {
  it("reads no config from a file without a config mapping", () => {
    for (const document of [null, {}, { config: null }, { config: ["a"] }, { config: "a" }]) {
      const ours = stackConfigFromFile("dev", document);
      expect(ours.values, JSON.stringify(document)).toEqual({});
      expect(ours.secretKeys.size).toBe(0);
    }
  });
});
