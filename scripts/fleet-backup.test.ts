import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capiBinaries, type CapiBinaries } from "../tests/support/capi-in-the-loop";
import { freePort, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../tests/support/kube-apiserver";
import { runNodeScript, scratchDir, type ScriptRun } from "../tests/support/script-harness";
import { repoRoot } from "../tests/support/stack-files";

// scripts/fleet-backup.mjs (`npm run backup`) where it must refuse, run as a process with the real
// clusterctl (tools/capi-toolchain) and a real kube-apiserver (tests/support/kube-apiserver.ts) without
// Cluster API, then with only CAPI's Cluster CRD (sigs.k8s.io/cluster-api@v1.12.10:
// config/crd/bases/cluster.x-k8s.io_clusters.yaml) and no Cluster. The backup itself and its
// restore are tested with CAPI's managers in tests/in-the-loop/fleet-backup.test.ts.

const script = path.join(repoRoot, "scripts", "fleet-backup.mjs");
const buildTimeoutMs = 75 * 60_000;
const dir = scratchDir("fleet-backup-script");
let api: KubeApiServer | undefined;
let capi: CapiBinaries | undefined;
let kubeconfig = "";

const run = (args: string[], timeoutMs = 60_000): Promise<ScriptRun> => runNodeScript(script, { HOME: process.env.HOME ?? "" }, timeoutMs, args);
const writeKubeconfig = (name: string, server: string, ca: string, token: string) => {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "m", cluster: { server, "certificate-authority-data": Buffer.from(ca).toString("base64") } }],
      users: [{ name: "admin", user: { token } }],
      contexts: [{ name: "m", context: { cluster: "m", user: "admin" } }],
      "current-context": "m",
    }),
    { mode: 0o600 },
  );
  return file;
};

beforeAll(async () => {
  capi = await capiBinaries(buildTimeoutMs);
  api = await startKubeApiServer(await kubeApiServerBinaries(buildTimeoutMs), 90_000, "fleet-backup-script");
  kubeconfig = writeKubeconfig("management.kubeconfig", api.url, api.target.ca, api.target.token);
}, buildTimeoutMs + 120_000);

afterAll(async () => {
  await api?.stop();
}, 30_000);

describe("npm run backup refuses clearly, before writing anything", () => {
  it("answers --help, and refuses bad usage with exit 2", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("clusterctl move --from-directory");
    for (const [args, message] of [
      [["--kubeconfig", "x"], "--to <new directory> is required"],
      [["--to", path.join(dir, "a")], "give --stack <stack> or --kubeconfig <file>"],
      [["--to", path.join(dir, "a"), "--stack", "prod", "--kubeconfig", "x"], "not both"],
      [["--to", path.join(dir, "a"), "--kubeconfig", "x", "--timeout", "soon"], "--timeout must be a positive number"],
      [["--to", path.join(dir, "a"), "--kubconfig", "x"], 'unknown argument "--kubconfig"'],
    ] as const) {
      const refused = await run([...args]);
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stderr).toContain(message);
    }
  });

  it("refuses a directory that is not new, and a missing or wrong clusterctl", async () => {
    const full = path.join(dir, "full");
    mkdirSync(full);
    writeFileSync(path.join(full, "notes.txt"), "x");
    const notNew = await run(["--to", full, "--kubeconfig", kubeconfig]);
    expect(notNew.code).toBe(1);
    expect(notNew.stderr).toContain("exists and is not empty");

    const none = await run(["--to", path.join(dir, "b"), "--kubeconfig", kubeconfig, "--clusterctl", path.join(dir, "no-clusterctl")]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no clusterctl at");
    expect(none.stderr).toContain("tools/capi-toolchain build");

    // Stand-in for another release of clusterctl: a script that answers `version -o short` as one would.
    const older = path.join(dir, "clusterctl-v1.11");
    writeFileSync(older, "#!/bin/sh\necho v1.11.4\n");
    chmodSync(older, 0o755);
    const wrong = await run(["--to", path.join(dir, "b"), "--kubeconfig", kubeconfig, "--clusterctl", older]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/is clusterctl v1\.11\.4; the fleet runs Cluster API v1\.12\.\d+: use the same minor/);
    expect(existsSync(path.join(dir, "b"))).toBe(false);
  });

  it("an API that does not answer fails within its bound, naming the server", async () => {
    const port = await freePort();
    const unreachable = writeKubeconfig("unreachable.kubeconfig", `https://127.0.0.1:${port}`, api!.target.ca, api!.target.token);
    const result = await run(["--to", path.join(dir, "c"), "--kubeconfig", unreachable, "--clusterctl", capi!.clusterctl], 60_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the management cluster's API https://127.0.0.1:${port} did not answer`);
    expect(result.stderr).toContain("nothing was backed up");
    expect(existsSync(path.join(dir, "c"))).toBe(false);
  }, 90_000);

  it("an API server without Cluster API, and then an empty fleet, are refused; the token never shows", async () => {
    const notInstalled = await run(["--to", path.join(dir, "d"), "--kubeconfig", kubeconfig, "--clusterctl", capi!.clusterctl]);
    expect(notInstalled.code).toBe(1);
    expect(notInstalled.stderr).toContain("serves no cluster.x-k8s.io/v1beta2 Clusters: Cluster API is not installed there");

    const crd = readFileSync(path.join(capi!.moduleDir, "config", "crd", "bases", "cluster.x-k8s.io_clusters.yaml"), "utf8");
    const created = await api!.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", parse(crd));
    expect(created.status).toBeLessThan(300);
    let empty: ScriptRun | undefined;
    for (let attempt = 0; attempt < 40; attempt += 1) {
      empty = await run(["--to", path.join(dir, "d"), "--kubeconfig", kubeconfig, "--clusterctl", capi!.clusterctl]);
      if (!empty.stderr.includes("Cluster API is not installed")) break;
      await new Promise((resolve) => setTimeout(resolve, 250)); // the CRD becomes served
    }
    expect(empty!.code).toBe(1);
    expect(empty!.stderr).toContain("holds no Cluster objects: the fleet is empty, nothing to back up");
    expect(existsSync(path.join(dir, "d"))).toBe(false);
    for (const output of [notInstalled.output, empty!.output]) expect(output).not.toContain(api!.target.token);
  }, 90_000);

  it("--stack reads the kubeconfig with pulumi stack output --show-secrets into a private temp file that is gone afterwards; a failing pulumi is named", async () => {
    // Stand-ins for the pulumi CLI (no stack here): one prints the management kubeconfig as
    // `pulumi stack output managementKubeconfig --show-secrets` would, one fails as for an unknown stack.
    const args = path.join(dir, "pulumi-args");
    const pulumi = path.join(dir, "pulumi-stand-in");
    writeFileSync(pulumi, `#!/bin/sh\necho "$@" > '${args}'\ncat '${kubeconfig}'\n`);
    chmodSync(pulumi, 0o755);
    const tmp = path.join(dir, "tmp");
    mkdirSync(tmp);
    const env = { HOME: process.env.HOME ?? "", PULUMI: pulumi, TMPDIR: tmp };
    const viaStack = await runNodeScript(script, env, 60_000, ["--to", path.join(dir, "e"), "--stack", "prod", "--clusterctl", capi!.clusterctl]);
    expect(viaStack.stderr).toContain("holds no Cluster objects");
    expect(readFileSync(args, "utf8").split("\n")[0]).toBe("stack output managementKubeconfig --show-secrets --stack prod");
    expect(readdirSync(tmp), "the temp kubeconfig is removed").toEqual([]);
    expect(viaStack.output).not.toContain(api!.target.token);

    const failing = path.join(dir, "pulumi-failing");
    writeFileSync(failing, "#!/bin/sh\necho \"error: no stack named 'prod' found\" >&2\nexit 255\n");
    chmodSync(failing, 0o755);
    const refused = await runNodeScript(script, { ...env, PULUMI: failing }, 60_000, ["--to", path.join(dir, "e"), "--stack", "prod", "--clusterctl", capi!.clusterctl]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("could not read the stack output managementKubeconfig of stack prod: error: no stack named 'prod' found");
  }, 90_000);
});
