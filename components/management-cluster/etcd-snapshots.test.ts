import { parse, stringify } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { etcdS3ConfigSecret, etcdSnapshotDropin, etcdSnapshotDropinDrift, etcdSnapshotK3sConfig } from "../../infra/model/management/etcd-snapshots";
import { FleetConfigError } from "../../infra/model/config/stack-config";
import { parseFleetConfig } from "../../infra/model/stack/validate-fleet-config";
import { byType, one, runStack } from "../../tests/support/fleet-run";
import { valueOf, type Registration } from "../../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../../tests/support/stack-files";

// etcd snapshots to Object Storage: what the config accepts, the Secret k3s reads the upload
// settings from (k3s-io/k3s: pkg/etcd/s3/config_secret.go), and the k3s config the servers get.

const secretType = "kubernetes:core/v1:Secret";
const serverType = "hcloud:index/server:Server";
const credentialsKey = "capi-fleet:etcdS3Credentials";

/** The prod stack's config with one change, validated as `pulumi up` (or preview) would. */
function prodWith(change: (management: Record<string, unknown>, values: Record<string, string>, secretKeys: Set<string>) => void, preview = true) {
  const { values, secretKeys } = readStackConfig("prod");
  const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
  const secrets = new Set(secretKeys);
  change(management, values, secrets);
  values["capi-fleet:management"] = JSON.stringify(management);
  return () => parseFleetConfig({ stack: "prod", values, secretKeys: secrets, allowPlaceholderSecrets: preview });
}

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof FleetConfigError) return error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    throw error;
  }
  return [];
}

const backupsOf = (management: Record<string, unknown>) => management.backups as Record<string, unknown>;

describe("management.backups in the stack config", () => {
  it("the committed prod stack enables backups and validates", () => {
    const config = prodWith(() => undefined)();
    expect(config.management.mode === "hetzner" && config.management.backups).toMatchObject({ location: "fsn1", retention: 28 });
    expect(config.management.mode === "hetzner" && config.management.etcdS3Credentials).toBeTruthy();
  });

  it.each<[string, (management: Record<string, unknown>, values: Record<string, string>, secretKeys: Set<string>) => void, string]>([
    ["a location without Object Storage", (m) => void (backupsOf(m).location = "ash"), 'management.backups.location: "ash" has no Hetzner Object Storage; allowed: fsn1, nbg1, hel1'],
    [
      "servers where Object Storage is missing, and no backups.location",
      (m) => {
        m.location = "sin";
        delete backupsOf(m).location;
      },
      "management.backups.location: is required: management.location sin has no Hetzner Object Storage; allowed: fsn1, nbg1, hel1",
    ],
    ["a schedule with four fields", (m) => void (backupsOf(m).schedule = "0 */6 * *"), 'management.backups.schedule: "0 */6 * *" has 4 fields, not a cron schedule; allowed: five fields'],
    ["an hour out of range", (m) => void (backupsOf(m).schedule = "0 24 * * *"), 'management.backups.schedule: "0 24 * * *": the hour field "24" is outside 0-23'],
    ["a retention of 0", (m) => void (backupsOf(m).retention = 0), "management.backups.retention: 0 must be at least 1; allowed: 1 to 1000"],
    ["a bucket name with capitals", (m) => void (backupsOf(m).bucket = "Fleet_Backups"), 'management.backups.bucket: "Fleet_Backups" is not a bucket name; allowed: 3 to 63 lower-case letters'],
    ["a typo", (m) => void (backupsOf(m).retension = 5), 'management.backups.retension: unknown key; did you mean "retention"?'],
    [
      "an initServer beyond the servers",
      (m) => {
        m.servers = 1;
        m.initServer = 2;
      },
      "management.initServer: 2 is not one of the 1 server(s); allowed: 1 to 1",
    ],
    [
      "backups without credentials",
      (_m, values) => {
        values[credentialsKey] = "{}";
      },
      "etcdS3Credentials.accessKey: is required by management.backups",
    ],
    [
      "credentials without backups",
      (m) => {
        m.backups = undefined;
      },
      "etcdS3Credentials: is only used with management.backups; remove it: pulumi config rm etcdS3Credentials",
    ],
    [
      "credentials stored in plain text",
      (_m, _values, secretKeys) => void secretKeys.delete(credentialsKey),
      "etcdS3Credentials: is stored in plain text; remove it and set it again with: pulumi config set --secret",
    ],
    [
      "a misspelt credential key",
      (_m, values) => void (values[credentialsKey] = JSON.stringify({ accessKey: fakeHcloudToken("a"), secretkey: fakeHcloudToken("s") })),
      'etcdS3Credentials.secretkey: unknown key; did you mean "secretKey"?',
    ],
    ["an existing cluster with backups", (m) => {
      m.mode = "existing";
      m.kubernetesVersion = catalog.tenantKubernetesVersions[0];
      for (const key of ["location", "serverType", "servers", "adminCidrs", "sshPublicKey", "network"]) m[key] = undefined;
    }, "management.backups: unknown key; allowed keys: mode, kubernetesVersion, deletionProtection"],
  ])("refuses %s, naming the key path and what is allowed", (_case, change, expected) => {
    expect(problemsOf(prodWith(change)).join("\n")).toContain(expected);
  });

  it("defaults the location to the servers' when it has Object Storage, and schedule and retention", () => {
    const config = prodWith((m) => {
      m.location = "hel1";
      m.backups = { bucket: "fleet-etcd" };
    })();
    expect(config.management.mode === "hetzner" && config.management.backups).toEqual({ bucket: "fleet-etcd", schedule: "0 */6 * * *", retention: 28 });
  });

  it("accepts committed placeholders in previews and refuses them for pulumi up", () => {
    const placeholders = (m: Record<string, unknown>, values: Record<string, string>) =>
      void (values[credentialsKey] = JSON.stringify({ accessKey: "placeholder-object-storage-access-key", secretKey: "placeholder-object-storage-secret-key" }));
    expect(prodWith(placeholders)().placeholderSecrets).toEqual(expect.arrayContaining(["etcdS3Credentials.accessKey", "etcdS3Credentials.secretKey"]));
    expect(problemsOf(prodWith(placeholders, false)).join("\n")).toContain("etcdS3Credentials.accessKey: still holds the committed placeholder");
  });
});

/** The k3s config files cloud-init writes on one server, by path. */
function k3sFilesOf(server: Registration): Map<string, Record<string, unknown>> {
  const document = parse(String(server.inputs.userData).replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] };
  return new Map(
    document.write_files
      .filter((file) => file.path.startsWith("/etc/rancher/k3s/config.yaml"))
      .map((file) => [file.path, parse(file.content) as Record<string, unknown>]),
  );
}

describe("prod under mocks: the Secret k3s reads and the servers' k3s config", () => {
  let registrations: Registration[];
  let exported: string | undefined;
  const { values } = readStackConfig("prod");
  const credentials = JSON.parse(values[credentialsKey]!) as { accessKey: string; secretKey: string };
  const { backups, servers } = JSON.parse(values["capi-fleet:management"]!) as { backups: { bucket: string; location: string; retention: number }; servers: number };

  beforeAll(async () => {
    const run = await runStack("prod");
    registrations = run.registrations;
    exported = await valueOf(run.outputs.managementEtcdSnapshotConfig);
  });

  const secret = () => byType(registrations, secretType).find((r) => (r.inputs.metadata as { name?: string } | undefined)?.name === etcdS3ConfigSecret.name)!;

  it("writes kube-system/capi-fleet-etcd-s3 with the keys k3s reads, through the management cluster's provider", () => {
    expect(secret().inputs.metadata).toMatchObject({ namespace: "kube-system", name: etcdS3ConfigSecret.name });
    expect(secret().inputs.stringData).toEqual({
      "etcd-s3-endpoint": `${backups.location}.your-objectstorage.com`,
      "etcd-s3-region": backups.location,
      "etcd-s3-bucket": backups.bucket,
      "etcd-s3-folder": "capi-fleet-prod",
      // k3s prunes the folder by one count over every server's snapshots (infra/model/management/etcd-snapshots.ts).
      "etcd-s3-retention": String(backups.retention * servers),
      "etcd-s3-access-key": credentials.accessKey,
      "etcd-s3-secret-key": credentials.secretKey,
    });
    expect(secret().provider).toContain("pulumi:providers:kubernetes::management-k8s");
  });

  it("keeps the credentials secret: only the Secret and its parent component carry them, each as a secret input", () => {
    const carrying = (r: Registration) =>
      Object.keys(r.inputs).filter((key) => [credentials.accessKey, credentials.secretKey].some((value) => JSON.stringify(r.inputs[key]).includes(value)));
    const carriers = registrations.filter((r) => carrying(r).length > 0);
    expect(carriers.map((r) => `${r.type} ${r.name}: ${carrying(r).join(",")}`)).toEqual([
      "capi-fleet:management:ManagementCluster management: etcdS3Credentials",
      `${secretType} ${secret().name}: stringData`,
    ]);
    for (const carrier of carriers) expect(carrier.secretInputs).toEqual(expect.arrayContaining(carrying(carrier)));
  });

  it("gives every server, in the drop-in k3s merges into config.yaml, the snapshot flags naming that Secret and no other etcd-s3 option", () => {
    const servers = byType(registrations, serverType);
    expect(servers).toHaveLength(3);
    for (const server of servers) {
      const files = k3sFilesOf(server);
      expect(files.get(etcdSnapshotDropin)).toEqual({
        "etcd-snapshot-schedule-cron": "0 */6 * * *",
        "etcd-snapshot-retention": 28,
        "etcd-s3": true,
        "etcd-s3-config-secret": etcdS3ConfigSecret.name,
      });
      // k3s reads the Secret only while every other etcd-s3 option is at its default (pkg/etcd/s3/s3.go, GetClient).
      const s3Keys = [...files.values()].flatMap((file) => Object.keys(file)).filter((key) => key.startsWith("etcd-s3"));
      expect(s3Keys.sort()).toEqual(["etcd-s3", "etcd-s3-config-secret"]);
    }
  });

  it("exports the same drop-in, so servers created before a change can be given it", () => {
    expect(parse(exported!)).toEqual(k3sFilesOf(byType(registrations, serverType)[0]!).get(etcdSnapshotDropin));
  });
});

describe("dev under mocks: backups off", () => {
  it("writes no Secret, and the servers still name it, so enabling backups later needs only pulumi up", async () => {
    const { registrations } = await runStack("dev");
    expect(byType(registrations, secretType).filter((r) => (r.inputs.metadata as { name?: string } | undefined)?.name === etcdS3ConfigSecret.name)).toEqual([]);
    const server = one(registrations, serverType);
    expect(k3sFilesOf(server).get(etcdSnapshotDropin)).toEqual({ "etcd-s3": true, "etcd-s3-config-secret": etcdS3ConfigSecret.name });
  });
});

describe("a changed drop-in against the last update's (servers ignore user-data changes)", () => {
  const next = etcdSnapshotK3sConfig({ bucket: "b", schedule: "0 */6 * * *", retention: 28 });
  const servers = [{ name: "capi-fleet-prod-mgmt-1", publicIpv4: "198.51.100.21", privateIp: "10.0.1.11" }];

  it("warns, naming the step, when running servers keep another drop-in or none", () => {
    const older = stringify(etcdSnapshotK3sConfig(undefined));
    expect(etcdSnapshotDropinDrift(older, servers, next)).toContain("node scripts/management-server.mjs snapshot-config --stack <stack> --server <public ip>");
    expect(etcdSnapshotDropinDrift(undefined, servers, next)).toContain("keep none");
  });

  it("says nothing when the drop-in is unchanged, no server ran yet, or the cluster is not the program's", () => {
    expect(etcdSnapshotDropinDrift(stringify(next), servers, next)).toBeUndefined();
    expect(etcdSnapshotDropinDrift(undefined, [], next)).toBeUndefined();
    expect(etcdSnapshotDropinDrift(undefined, undefined, next)).toBeUndefined();
    expect(etcdSnapshotDropinDrift(stringify(next), servers, undefined)).toBeUndefined();
  });
});
