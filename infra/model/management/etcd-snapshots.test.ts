import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  backupLocation,
  etcdS3ConfigSecret,
  etcdS3CredentialKeys,
  etcdS3SecretSettings,
  etcdSnapshotDropinDrift,
  etcdSnapshotK3sConfig,
} from "./etcd-snapshots";
import type { EtcdBackupSettings } from "../config/fleet-config";
import { repoRoot } from "../../../tests/support/stack-files";

// What k3s reads, from its sources at the pinned release line (the Go module proxy refuses the
// k3s module here, so they cannot be read at test time; tests/in-the-loop/k3s-flags.test.ts checks the emitted
// names against them when a k3s checkout is given):
// - the Secret's data keys: k3s-io/k3s: pkg/etcd/s3/config_secret.go `getConfigFromSecret`
//   (in kube-system, metav1.NamespaceSystem);
// - the snapshot flags: pkg/cli/cmds/server.go `ServerFlags` (etcd-snapshot-schedule-cron,
//   etcd-snapshot-retention, etcd-s3, etcd-s3-config-secret).
const keysK3sReadsFromTheSecret = new Set([
  "etcd-s3-access-key", "etcd-s3-bucket", "etcd-s3-bucket-lookup-type", "etcd-s3-folder", "etcd-s3-proxy", "etcd-s3-secret-key",
  "etcd-s3-session-token", "etcd-s3-endpoint", "etcd-s3-region", "etcd-s3-timeout", "etcd-s3-skip-ssl-verify", "etcd-s3-insecure",
  "etcd-s3-endpoint-ca", "etcd-s3-endpoint-ca-name", "etcd-s3-retention",
]);
const snapshotServerFlags = new Set(["etcd-snapshot-schedule-cron", "etcd-snapshot-retention", "etcd-s3", "etcd-s3-config-secret"]);

const backups: EtcdBackupSettings = { bucket: "fleet-snapshots", schedule: "15 */4 * * *", retention: 9 };
const servers = [{ name: "mgmt-1", publicIpv4: "198.51.100.21", privateIp: "10.0.1.11" }];

describe("the Secret k3s reads the upload settings from", () => {
  it("has only keys k3s reads, in the namespace it reads from, with the endpoint and region of the backup location", () => {
    const settings = etcdS3SecretSettings({ ...backups, location: "hel1" }, "fsn1", "default-folder", 3);
    for (const key of [...Object.keys(settings), ...Object.values(etcdS3CredentialKeys)]) expect(keysK3sReadsFromTheSecret, key).toContain(key);
    expect(etcdS3ConfigSecret.namespace).toBe("kube-system");
    // Hetzner Object Storage: one endpoint per location, `<location>.your-objectstorage.com`, whose region is the location.
    expect(settings["etcd-s3-region"]).toBe("hel1");
    expect(settings["etcd-s3-endpoint"]).toBe("hel1.your-objectstorage.com");
    expect(settings["etcd-s3-bucket"]).toBe(backups.bucket);
  });

  it("defaults the location to the servers' and the folder to the stack's; configured values win", () => {
    expect(backupLocation(backups, "nbg1")).toBe("nbg1");
    expect(backupLocation({ ...backups, location: "hel1" }, "nbg1")).toBe("hel1");
    expect(etcdS3SecretSettings(backups, "nbg1", "capi-fleet-dev", 1)).toMatchObject({ "etcd-s3-region": "nbg1", "etcd-s3-folder": "capi-fleet-dev" });
    expect(etcdS3SecretSettings({ ...backups, folder: "elsewhere" }, "nbg1", "capi-fleet-dev", 1)["etcd-s3-folder"]).toBe("elsewhere");
  });
});

/**
 * What the bucket holds after `rounds` snapshots of every server: a **stand-in** for k3s' pruning,
 * ported from k3s-io/k3s@v1.34.6+k3s1 (commit 234e6132, read from its sources; the Go module proxy
 * refuses the module): after each upload (pkg/etcd/snapshot.go) `SnapshotRetention`
 * (pkg/etcd/s3/s3.go) lists `<folder>/etcd-snapshot*`, every server's snapshots together, and when
 * there are more than `Retention` (below 1: never) deletes the oldest. `Retention` is the Secret's
 * `etcd-s3-retention` when it has one (pkg/etcd/s3/config_secret.go), else the servers'
 * `etcd-s3-retention` flag, which from v1.34.6 defaults to `etcd-snapshot-retention` when that is
 * set (pkg/cli/server/server.go).
 */
function bucketAfter(rounds: number, servers: number, secret: Record<string, string>, snapshotRetention: number): number[] {
  const retention = secret["etcd-s3-retention"] === undefined ? snapshotRetention : Number.parseInt(secret["etcd-s3-retention"], 10);
  let bucket: { server: number; time: number }[] = [];
  for (let time = 0; time < rounds; time += 1) {
    for (let server = 0; server < servers; server += 1) {
      bucket.push({ server, time });
      if (retention >= 1 && bucket.length > retention) bucket = [...bucket].sort((a, b) => b.time - a.time).slice(0, retention);
    }
  }
  return Array.from({ length: servers }, (_, server) => bucket.filter((snapshot) => snapshot.server === server).length);
}

describe("what the bucket keeps (k3s' pruning, a stand-in)", () => {
  it("keeps `retention` snapshots of every server, as docs/management-cluster.md promises", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.constantFrom(1, 3), (retention, servers) => {
        const settings = { ...backups, retention };
        const secret = etcdS3SecretSettings(settings, "nbg1", "f", servers);
        const dropin = etcdSnapshotK3sConfig(settings);
        expect(bucketAfter(retention + 5, servers, secret, dropin["etcd-snapshot-retention"] as number)).toEqual(Array(servers).fill(retention));
      }),
    );
  });

  it("negative control: without the Secret's retention, three servers share one count and each keeps a third", () => {
    const { "etcd-s3-retention": _retention, ...withoutRetention } = etcdS3SecretSettings(backups, "nbg1", "f", 3);
    expect(bucketAfter(backups.retention + 5, 3, withoutRetention, backups.retention)).toEqual([3, 3, 3]);
  });
});

describe("the servers' snapshot drop-in", () => {
  it("sets only k3s server flags: the configured schedule and retention, and the upload through the Secret", () => {
    const dropin = etcdSnapshotK3sConfig(backups);
    for (const key of Object.keys(dropin)) expect(snapshotServerFlags, key).toContain(key);
    expect(dropin["etcd-snapshot-schedule-cron"]).toBe(backups.schedule);
    expect(dropin["etcd-snapshot-retention"]).toBe(backups.retention);
    expect(dropin["etcd-s3"]).toBe(true);
    expect(dropin["etcd-s3-config-secret"]).toBe(etcdS3ConfigSecret.name);
  });

  it("leaves schedule and retention to k3s' defaults without backups, and still names the Secret", () => {
    const dropin = etcdSnapshotK3sConfig(undefined);
    expect(Object.keys(dropin).filter((key) => key.startsWith("etcd-snapshot-"))).toEqual([]);
    expect(dropin["etcd-s3-config-secret"]).toBe(etcdS3ConfigSecret.name);
  });
});

describe("etcdSnapshotDropinDrift", () => {
  it("shows what running servers keep and what they should get", () => {
    const before = etcdSnapshotK3sConfig(undefined);
    const next = etcdSnapshotK3sConfig(backups);
    const warning = etcdSnapshotDropinDrift(stringify(before), servers, next) ?? "";
    expect(warning).toContain(`keep ${JSON.stringify(before)}`);
    expect(warning).toContain(JSON.stringify(next));
    expect(etcdSnapshotDropinDrift(undefined, servers, next)).toContain("keep none");
    // Only the content counts, not the YAML's layout.
    expect(etcdSnapshotDropinDrift(stringify(next, { indent: 4 }) + "\n", servers, next)).toBeUndefined();
  });

  it("says nothing without running servers, whatever the deployed value holds", () => {
    const next = etcdSnapshotK3sConfig(backups);
    for (const deployedServers of [undefined, null, [], {}, "mgmt-1", { length: 1 }]) {
      expect(etcdSnapshotDropinDrift(undefined, deployedServers, next), JSON.stringify(deployedServers)).toBeUndefined();
    }
  });

  it("says nothing for an existing management cluster: the fleet runs no servers of its own there", () => {
    expect(etcdSnapshotDropinDrift(stringify(etcdSnapshotK3sConfig(backups)), servers, undefined)).toBeUndefined();
  });

  it("gives a command the operator can run, as the runbook it cites shows it", () => {
    const warning = etcdSnapshotDropinDrift(undefined, servers, etcdSnapshotK3sConfig(backups)) ?? "";
    const [, script, subcommand, section] = /node (scripts\/\S+) (\S+) --stack <stack> --server <public ip> \(docs\/operations\.md, section (\d+)\)$/.exec(warning) ?? [];
    const help = spawnSync(process.execPath, [path.join(repoRoot, script!), "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`<[^>]*\\b${subcommand}\\b[^>]*> --stack <stack> --server <address>`));
    const runbook = readFileSync(path.join(repoRoot, "docs", "operations.md"), "utf8");
    const sectionText = runbook.split(/^## /m).find((part) => part.startsWith(`${section}. `)) ?? "";
    expect(sectionText).toContain(`node ${script} ${subcommand} --stack`);
  });

  it("treats a deployed value that is not YAML text as no drop-in", () => {
    const next = etcdSnapshotK3sConfig(backups);
    expect(etcdSnapshotDropinDrift(next, servers, next)).toContain("keep none");
  });
});
