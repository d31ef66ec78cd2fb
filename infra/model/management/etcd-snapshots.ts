import { parse } from "yaml";
import type { EtcdBackupSettings } from "../config/fleet-config";
import { HetznerLocation } from "../facts/hetzner";

/**
 * k3s' embedded-etcd snapshots, uploaded to Hetzner Object Storage.
 *
 * Every server's k3s config names a Secret in kube-system (`etcd-s3-config-secret`) and sets
 * no other `etcd-s3-*` option: k3s then reads bucket, folder, endpoint, region and keys from
 * that Secret each time it snapshots (k3s-io/k3s: pkg/etcd/s3/s3.go `GetClient`, which uses
 * the Secret only while the rest of the S3 config is at its defaults; pkg/etcd/s3/config_secret.go
 * `getConfigFromSecret` for the keys). So credentials never enter user data, a rotation or a
 * new bucket reaches running servers at their next snapshot, and until the program has
 * written the Secret (or while backups are off) k3s keeps its local snapshots and skips the
 * upload with a warning (pkg/etcd/snapshot.go: a `ErrNoConfigSecret` is not a failed snapshot).
 */

/** The Secret in kube-system that configures the upload. */
export const etcdS3ConfigSecret = { namespace: "kube-system", name: "capi-fleet-etcd-s3" } as const;

/** Where k3s merges extra config files; this one holds the snapshot settings (pkg/configfilearg/parser.go, `dotDFiles`). */
export const etcdSnapshotDropin = "/etc/rancher/k3s/config.yaml.d/60-etcd-snapshots.yaml";

/** Hetzner Object Storage's S3 endpoint for a location (docs.hetzner.com/storage/object-storage/overview). */
export function objectStorageEndpoint(location: string): string {
  return `${location}.your-objectstorage.com`;
}

/** The location snapshots go to: the configured one, else the servers' own (validated to have Object Storage). */
export function backupLocation(backups: EtcdBackupSettings, managementLocation: HetznerLocation): string {
  return backups.location ?? managementLocation;
}

/**
 * The k3s config drop-in of every server (k3s flags by name). Schedule and retention are
 * flags, read when k3s starts; without backups k3s' own defaults apply (every 12 hours, 5 kept).
 */
export function etcdSnapshotK3sConfig(backups: EtcdBackupSettings | undefined): Record<string, unknown> {
  return {
    ...(backups ? { "etcd-snapshot-schedule-cron": backups.schedule, "etcd-snapshot-retention": backups.retention } : {}),
    "etcd-s3": true,
    "etcd-s3-config-secret": etcdS3ConfigSecret.name,
  };
}

/**
 * How many snapshots the bucket keeps so that each server's `retention` newest stay there. k3s
 * prunes the bucket by one count over every server's snapshots in the folder together: it lists
 * `<folder>/etcd-snapshot*` (snapshot names are `etcd-snapshot-<node>-<time>`) and keeps the
 * newest `Retention` (k3s-io/k3s@v1.34.6+k3s1: pkg/etcd/s3/s3.go `SnapshotRetention`,
 * pkg/etcd/snapshot.go). Without a Secret key `Retention` is the servers' `etcd-s3-retention`
 * flag, which defaults to 5 or, from v1.34.6 on, to `etcd-snapshot-retention`
 * (pkg/cli/server/server.go): `retention` for the whole fleet, not per server.
 */
export function bucketRetention(backups: EtcdBackupSettings, servers: number): number {
  return backups.retention * servers;
}

/** The non-secret keys of the Secret (the keys k3s reads: pkg/etcd/s3/config_secret.go). */
export function etcdS3SecretSettings(backups: EtcdBackupSettings, managementLocation: HetznerLocation, defaultFolder: string, servers: number): Record<string, string> {
  const location = backupLocation(backups, managementLocation);
  return {
    "etcd-s3-endpoint": objectStorageEndpoint(location),
    // Hetzner's S3 region is the location's name; with it set, the client skips a bucket-location lookup.
    "etcd-s3-region": location,
    "etcd-s3-bucket": backups.bucket,
    "etcd-s3-folder": backups.folder ?? defaultFolder,
    // A Secret key, not the `etcd-s3-retention` flag: before v1.34.6 any S3 flag other than its
    // default makes k3s ignore the Secret altogether (pkg/etcd/s3/s3.go `GetClient`).
    "etcd-s3-retention": String(bucketRetention(backups, servers)),
  };
}

/** The Secret's credential keys. */
export const etcdS3CredentialKeys = { accessKey: "etcd-s3-access-key", secretKey: "etcd-s3-secret-key" } as const;

/**
 * Servers ignore user-data changes, so a new drop-in (backups turned on, schedule or retention
 * changed) reaches only servers created later. Compares the drop-in the last update exported
 * with the one this run renders, and says what to do when running servers keep an older one;
 * undefined when nothing differs or no server ran yet.
 */
export function etcdSnapshotDropinDrift(
  deployedDropin: unknown,
  deployedServers: unknown,
  next: Record<string, unknown> | undefined,
): string | undefined {
  const serversRan = Array.isArray(deployedServers) && deployedServers.length > 0;
  if (!serversRan || next === undefined) return undefined;
  const before = typeof deployedDropin === "string" ? (parse(deployedDropin) as unknown) : undefined;
  if (JSON.stringify(before) === JSON.stringify(next)) return undefined;
  return (
    `the management servers' etcd snapshot settings change (${etcdSnapshotDropin}: ${JSON.stringify(next)}), but running servers ignore ` +
    `user-data changes and keep ${before === undefined ? "none" : JSON.stringify(before)}; after this update give each server the new drop-in: ` +
    "node scripts/management-server.mjs snapshot-config --stack <stack> --server <public ip> (docs/operations.md, section 9)"
  );
}
