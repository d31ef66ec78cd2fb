import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { etcdSnapshotDropin } from "../../infra/model/management/etcd-snapshots";
import { repoRoot } from "../../tests/support/stack-files";

// The recovery steps of docs/operations.md sections 8 and 9, run for real: the driver
// (scripts/management-server.mjs) and the script it runs on a server
// (recovery/k3s-etcd-recovery.sh). ssh, pulumi, k3s and systemctl are stand-ins
// (tests/support/fakes/fake-command.sh) that record their arguments, stdin and the AWS_* environment:
// no server, no Object Storage and no k3s here. k3s' own side (the flags exist) is checked in
// tests/in-the-loop/k3s-flags.test.ts.

const recoveryScript = path.join(repoRoot, "components", "management-cluster", "recovery", "k3s-etcd-recovery.sh");
const driver = path.join(repoRoot, "scripts", "management-server.mjs");
const fake = path.join(repoRoot, "tests", "support", "fakes", "fake-command.sh");

interface Call {
  name: string;
  args: string[];
  env: string;
  stdin: string;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "capi-fleet-recovery-"));
  mkdirSync(path.join(dir, "bin"));
  mkdirSync(path.join(dir, "responses"));
  for (const name of ["ssh", "pulumi", "k3s", "systemctl"]) symlinkSync(fake, path.join(dir, "bin", name));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function calls(): Call[] {
  const log = path.join(dir, "calls.log");
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n\x1e\x1e\n")
    .filter(Boolean)
    .map((record) => {
      const [command = "", env = "", stdin = ""] = record.split("\x1e");
      const [name = "", ...args] = command.split("\x1f");
      return { name, args, env, stdin };
    });
}

function run(program: string, args: string[], input = "", env: Record<string, string> = {}) {
  return spawnSync(program, args, {
    input,
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "", FAKE_LOG: path.join(dir, "calls.log"), FAKE_RESPONSES: path.join(dir, "responses"), ...env },
  });
}

const bin = (name: string) => path.join(dir, "bin", name);
const accessKey = "AKIAFAKEACCESSKEY0001";
const secretKey = "fake/secret+key/0000000000000000000000000";

describe("scripts/management-server.mjs (the driver)", () => {
  const driverEnv = () => ({ PULUMI: bin("pulumi"), SSH: bin("ssh") });

  it("restore-snapshot: copies the script, then runs the restore with the stack's store as arguments and the keys only on stdin", () => {
    const store = { endpoint: "fsn1.your-objectstorage.com", region: "fsn1", bucket: "fleet-etcd", folder: "capi-fleet-prod" };
    writeFileSync(path.join(dir, "responses", "managementEtcdSnapshotStore"), JSON.stringify(store));
    writeFileSync(path.join(dir, "responses", "etcdS3Credentials.accessKey"), `${accessKey}\n`);
    writeFileSync(path.join(dir, "responses", "etcdS3Credentials.secretKey"), `${secretKey}\n`);
    const result = run(process.execPath, [driver, "restore-snapshot", "--stack", "prod", "--server", "198.51.100.7", "--snapshot", "etcd-snapshot-capi-fleet-prod-mgmt-1-1764590400"], "", driverEnv());
    expect(result.stderr + result.stdout).toContain("restore-snapshot on 198.51.100.7: done");
    expect(result.status).toBe(0);

    const ssh = calls().filter((call) => call.name === "ssh");
    expect(ssh).toHaveLength(2);
    for (const call of ssh) expect(call.args.slice(0, 5)).toEqual(["-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "root@198.51.100.7"]);
    expect(ssh[0]!.args[5]).toBe("install -m 0700 /dev/stdin /root/capi-fleet-k3s-etcd-recovery");
    expect(ssh[0]!.stdin).toBe(readFileSync(recoveryScript, "utf8").replace(/\n$/, ""));
    expect(ssh[1]!.args[5]).toBe(
      "/root/capi-fleet-k3s-etcd-recovery restore etcd-snapshot-capi-fleet-prod-mgmt-1-1764590400 fsn1.your-objectstorage.com fsn1 fleet-etcd capi-fleet-prod",
    );
    expect(ssh[1]!.stdin).toBe(`${accessKey}\n${secretKey}`);
    // The keys are on no command line of any call.
    for (const call of calls()) expect(call.args.join(" ")).not.toMatch(new RegExp(`${accessKey}|${secretKey.replace(/[+/]/g, ".")}`));
  });

  it("refuses a snapshot name that is not a plain name, before calling anything", () => {
    const result = run(process.execPath, [driver, "restore-snapshot", "--stack", "prod", "--server", "198.51.100.7", "--snapshot", "x; reboot"], "", driverEnv());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("restore-snapshot needs --snapshot <name>");
    expect(calls()).toEqual([]);
  });

  it("stops, naming the step, when the stack has no snapshot store (backups off or never applied)", () => {
    const result = run(process.execPath, [driver, "restore-snapshot", "--stack", "dev", "--server", "198.51.100.7", "--snapshot", "s"], "", driverEnv());
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("managementEtcdSnapshotStore is missing or incomplete");
  });

  it("snapshot-config: hands the stack output to the server's script on stdin", () => {
    writeFileSync(path.join(dir, "responses", "managementEtcdSnapshotConfig"), "etcd-s3: true\netcd-s3-config-secret: capi-fleet-etcd-s3\n");
    const result = run(process.execPath, [driver, "snapshot-config", "--stack", "prod", "--server", "198.51.100.8"], "", driverEnv());
    expect(result.status).toBe(0);
    const last = calls().filter((call) => call.name === "ssh").at(-1)!;
    expect(last.args.at(-1)).toBe("/root/capi-fleet-k3s-etcd-recovery snapshot-config");
    expect(last.stdin).toBe("etcd-s3: true\netcd-s3-config-secret: capi-fleet-etcd-s3");
  });
});

describe("recovery/k3s-etcd-recovery.sh (on the server)", () => {
  const serverEnv = () => ({ K3S_BIN: bin("k3s"), SYSTEMCTL: bin("systemctl"), K3S_DATA_DIR: path.join(dir, "k3s"), K3S_CONFIG_DROPIN_DIR: path.join(dir, "config.yaml.d") });

  it("restore: stops k3s, runs k3s' cluster reset from S3 with the keys in the environment, starts k3s", () => {
    const result = run(recoveryScript, ["restore", "snap-1", "fsn1.your-objectstorage.com", "fsn1", "fleet-etcd", "capi-fleet-prod"], `${accessKey}\n${secretKey}\n`, serverEnv());
    expect(result.stderr).toContain("restored");
    expect(result.status).toBe(0);
    expect(calls().map((call) => [call.name, ...call.args.slice(0, 1)])).toEqual([
      ["systemctl", "stop"],
      ["k3s", "server"],
      ["systemctl", "start"],
    ]);
    const k3s = calls()[1]!;
    expect(k3s.args).toEqual([
      "server",
      "--cluster-reset",
      "--cluster-reset-restore-path=snap-1",
      "--etcd-s3",
      "--etcd-s3-endpoint=fsn1.your-objectstorage.com",
      "--etcd-s3-region=fsn1",
      "--etcd-s3-bucket=fleet-etcd",
      "--etcd-s3-folder=capi-fleet-prod",
    ]);
    expect(k3s.env).toBe(`AWS_ACCESS_KEY_ID=${accessKey} AWS_SECRET_ACCESS_KEY=${secretKey}`);
  });

  it("restore: refuses to run without the keys on stdin, before stopping k3s", () => {
    const result = run(recoveryScript, ["restore", "snap-1", "e", "r", "b", "f"], "", serverEnv());
    expect(result.status).toBe(2);
    expect(calls()).toEqual([]);
  });

  it("restore: stops at a failed reset and does not start k3s on a half-restored datastore", () => {
    const failing = run(recoveryScript, ["restore", "snap-1", "e", "r", "b", "f"], `${accessKey}\n${secretKey}\n`, { ...serverEnv(), K3S_BIN: "false" });
    expect(failing.status).not.toBe(0);
    expect(failing.stderr).toContain("FAILED");
    expect(calls().map((call) => call.args.join(" "))).toEqual(["stop k3s"]);
  });

  it("rejoin: moves the old etcd data aside and restarts k3s", () => {
    mkdirSync(path.join(dir, "k3s", "server", "db", "etcd"), { recursive: true });
    const result = run(recoveryScript, ["rejoin"], "", serverEnv());
    expect(result.status).toBe(0);
    const server = readdirSync(path.join(dir, "k3s", "server"));
    expect(server).not.toContain("db");
    expect(server.filter((entry) => entry.startsWith("db.before-rejoin-"))).toHaveLength(1);
    expect(calls().map((call) => call.args[0])).toEqual(["stop", "start"]);
  });

  it("snapshot-config: writes the drop-in where the program's servers have it, root-only, and restarts k3s", () => {
    const content = "etcd-s3: true\netcd-s3-config-secret: capi-fleet-etcd-s3";
    const result = run(recoveryScript, ["snapshot-config"], `${content}\n`, serverEnv());
    expect(result.status).toBe(0);
    const written = path.join(dir, "config.yaml.d", path.basename(etcdSnapshotDropin));
    expect(readFileSync(written, "utf8")).toBe(`${content}\n`);
    expect(spawnSync("stat", ["-c", "%a", written], { encoding: "utf8" }).stdout.trim()).toBe("600");
    expect(calls().map((call) => call.args.join(" "))).toEqual(["restart k3s"]);
  });

  it("passes shellcheck (Debian's package), with the stand-in", () => {
    const result = spawnSync(path.join(repoRoot, "tools", "shellcheck"), [recoveryScript, fake], { encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
