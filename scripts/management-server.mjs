#!/usr/bin/env node
// @ts-check
/**
 * Server-side steps of the management cluster's recovery runbook (docs/operations.md), run from
 * where you run `pulumi up`, over SSH as root (the servers' firewall opens SSH to
 * management.adminCidrs). It copies components/management-cluster/recovery/k3s-etcd-recovery.sh
 * to the server and runs one of its modes there:
 *
 *   snapshot-config   give the server the etcd snapshot drop-in (stack output
 *                     managementEtcdSnapshotConfig) and restart k3s: servers created before it
 *   restore-snapshot  restore --snapshot from Object Storage on this server, as a new one-member
 *                     etcd cluster (stack output managementEtcdSnapshotStore; the keys from the
 *                     secret config etcdS3Credentials, handed over on stdin, never as arguments)
 *   rejoin            after a restore, on each other server: move its etcd data aside, restart k3s
 *
 * Usage: node scripts/management-server.mjs <command> --stack <stack> --server <address> [--snapshot <name>]
 *   PULUMI  the pulumi CLI (default: pulumi on PATH)   SSH  the ssh client (default: ssh on PATH)
 * Exit codes: 0 done; 1 a step failed (named on stderr); 2 bad usage.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stackOutputs } from "../infra/model/contract/outputs.ts";

const program = "management-server";
const usage = `usage: node scripts/${program}.mjs <snapshot-config|restore-snapshot|rejoin> --stack <stack> --server <address> [--snapshot <name>]
Runs a recovery step of docs/operations.md on one management server over SSH (root).`;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const remoteScript = path.join(repoRoot, "components", "management-cluster", "recovery", "k3s-etcd-recovery.sh");
const remotePath = "/root/capi-fleet-k3s-etcd-recovery";
const commands = ["snapshot-config", "restore-snapshot", "rejoin"];

/** @param {string} message @returns {never} */
function fail(message, code = 1) {
  console.error(`${program}: ${message}`);
  process.exit(code);
}

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(usage);
  process.exit(0);
}
const [command, ...rest] = argv;
if (command === undefined || !commands.includes(command)) fail(`unknown command ${JSON.stringify(command ?? "")}\n${usage}`, 2);
/** @type {Record<string, string>} */
const options = {};
for (let index = 0; index < rest.length; index += 2) {
  const flag = rest[index] ?? "";
  const value = rest[index + 1];
  if (!["--stack", "--server", "--snapshot"].includes(flag) || value === undefined) fail(`unexpected argument ${JSON.stringify(flag)}\n${usage}`, 2);
  options[flag.slice(2)] = value;
}
const { stack, server, snapshot } = options;
if (!stack || !server) fail(`--stack and --server are required\n${usage}`, 2);
// The values go into the remote command line: allow only what names and addresses use.
if (!/^[A-Za-z0-9._:-]+$/.test(server) || !/^[A-Za-z0-9._-]+$/.test(stack)) fail("--server and --stack take a host name or address and a stack name", 2);
if (command === "restore-snapshot" && !/^[A-Za-z0-9._-]+$/.test(snapshot ?? "")) fail("restore-snapshot needs --snapshot <name> (letters, digits, '.', '_', '-')", 2);

const pulumiBin = process.env.PULUMI ?? "pulumi";
const sshBin = process.env.SSH ?? "ssh";
// BatchMode: fail instead of waiting for a password prompt; bounded connect.
const sshOptions = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=20", `root@${server}`];

/**
 * Runs a program without a shell; stdin is `input`. Returns stdout; stops on failure.
 * @param {string} what @param {string} bin @param {string[]} args @param {string} [input] @param {number} [timeoutMs]
 */
function run(what, bin, args, input = "", timeoutMs = 120_000) {
  const result = spawnSync(bin, args, { input, encoding: "utf8", stdio: ["pipe", "pipe", "inherit"], timeout: timeoutMs });
  if (result.error) fail(`${what}: ${result.error.message}`);
  if (result.status !== 0) fail(`${what}: ${bin} exited with ${result.status ?? result.signal}`);
  return result.stdout;
}

/** @param {string} name @param {boolean} [json] */
const stackOutput = (name, json = false) => run(`reading stack output ${name}`, pulumiBin, ["stack", "output", "-s", stack, name, ...(json ? ["--json"] : [])]).trim();
/** @param {string} key */
const secretConfig = (key) => run(`reading config ${key}`, pulumiBin, ["config", "get", "-s", stack, "--path", key]).replace(/\n$/, "");

run(`copying the recovery script to ${server}`, sshBin, [...sshOptions, `install -m 0700 /dev/stdin ${remotePath}`], readFileSync(remoteScript, "utf8"));

if (command === "snapshot-config") {
  const dropin = stackOutput(stackOutputs.managementEtcdSnapshotConfig);
  if (!dropin) fail("the stack has no output managementEtcdSnapshotConfig: run pulumi up first");
  run(`writing the snapshot drop-in on ${server}`, sshBin, [...sshOptions, `${remotePath} snapshot-config`], `${dropin}\n`);
} else if (command === "restore-snapshot") {
  const store = /** @type {{ endpoint?: string, region?: string, bucket?: string, folder?: string }} */ ((JSON.parse(stackOutput(stackOutputs.managementEtcdSnapshotStore, true) || "null") ?? {}));
  if (!store.endpoint || !store.region || !store.bucket || !store.folder) {
    fail(`the stack output ${stackOutputs.managementEtcdSnapshotStore} is missing or incomplete: is management.backups set, and has pulumi up run since?`);
  }
  const keys = `${secretConfig("etcdS3Credentials.accessKey")}\n${secretConfig("etcdS3Credentials.secretKey")}\n`;
  run(
    `restoring ${snapshot} on ${server}`,
    sshBin,
    [...sshOptions, [remotePath, "restore", snapshot, store.endpoint, store.region, store.bucket, store.folder].join(" ")],
    keys,
    30 * 60_000,
  );
} else {
  run(`rejoining ${server}`, sshBin, [...sshOptions, `${remotePath} rejoin`], "", 10 * 60_000);
}
console.log(`${program}: ${command} on ${server}: done`);
