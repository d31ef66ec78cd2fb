import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { serverBootFiles, renderK3sCloudInit } from "../../infra/model/management/management-cluster";
import { catalog } from "../../infra/model/versions/catalog";
import { etcdS3CredentialKeys, etcdS3SecretSettings } from "../../infra/model/management/etcd-snapshots";
import { parseFleetConfig } from "../../infra/model/stack/validate-fleet-config";
import { type HetznerManagement } from "../../infra/model/management/validate-management";
import { k3sConfigSecretKeys, k3sFlagNames, locateK3sSource, readK3sSources, unknownK3sFlags } from "../support/k3s-flags";
import { readStackConfig, repoRoot } from "../support/stack-files";
import { skipIfDeclared } from "../support/unverified";

// Every k3s flag and config key the program emits, checked against k3s' own flag definitions
// at the catalog's release (k3s-io/k3s: pkg/cli/cmds/server.go `ServerFlags`, agent.go; the
// etcd S3 Secret's keys in pkg/etcd/s3/config_secret.go). What is emitted is read from what
// the program and its scripts really produce, never from a list kept here.

const prod = parseFleetConfig({ stack: "prod", ...readStackConfig("prod"), secretKeys: new Set(readStackConfig("prod").secretKeys), allowPlaceholderSecrets: true });
const management = prod.management as HetznerManagement;

/** Config-file keys of every k3s config file cloud-init writes, for a server that starts the cluster and one that joins. */
function emittedConfigKeys(): string[] {
  const keys = new Set<string>();
  for (const index of [0, 1]) {
    const userData = renderK3sCloudInit({
      index,
      k3sVersion: management.k3sVersion,
      nodeIp: `10.0.1.${11 + index}`,
      firstServerIp: "10.0.1.11",
      apiAddresses: ["203.0.113.10"],
      token: "t",
      caFiles: { serverCaCertPem: "", serverCaKeyPem: "", clientCaCertPem: "", clientCaKeyPem: "" },
      etcdBackups: management.backups,
    });
    const document = parse(userData.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] };
    for (const file of document.write_files.filter((candidate) => candidate.path.startsWith("/etc/rancher/k3s/config.yaml"))) {
      for (const key of Object.keys(parse(file.content) as Record<string, unknown>)) keys.add(key);
    }
  }
  return [...keys];
}

/** Keys the boot script writes into k3s config drop-ins (`printf 'key: %s\n' … >"$dropin_dir/…"`). */
function bootScriptKeys(): string[] {
  const script = readFileSync(path.join(repoRoot, serverBootFiles.bootScript.source), "utf8");
  return [...script.matchAll(/printf '([a-z0-9-]+): %s\\n'[^\n]*>\s*"\$dropin_dir\//g)].map((match) => match[1]!);
}

const recoveryScript = readFileSync(path.join(repoRoot, "components", "management-cluster", "recovery", "k3s-etcd-recovery.sh"), "utf8");

/** `--flags` of the `k3s server` command in the recovery script (its continuation lines included). */
function recoveryServerFlags(): string[] {
  const command = /"\$k3s" server((?:[^\n]*\\\n)*[^\n]*)/.exec(recoveryScript)?.[1] ?? "";
  return [...command.matchAll(/(--[a-z0-9-]+)/g)].map((match) => match[1]!);
}

/** Keys of the Secret k3s reads the upload settings from. */
function emittedSecretKeys(): string[] {
  return [...Object.keys(etcdS3SecretSettings(management.backups!, management.location, "f", management.servers)), ...Object.values(etcdS3CredentialKeys)];
}

describe("what the program emits for k3s (read from its output)", () => {
  it("collects the config keys, the boot script's drop-in key, the recovery flags and the Secret's keys", () => {
    expect(emittedConfigKeys()).toEqual(expect.arrayContaining(["node-ip", "etcd-s3-config-secret", "etcd-snapshot-schedule-cron"]));
    expect(bootScriptKeys()).toEqual(["flannel-iface"]);
    expect(recoveryServerFlags()).toEqual(expect.arrayContaining(["--cluster-reset", "--cluster-reset-restore-path", "--etcd-s3-bucket"]));
    expect(emittedSecretKeys()).toContain("etcd-s3-secret-key");
  });
});

// A Go source in the shape of k3s' (urfave/cli v1 flag structs, list entries inline or by
// variable, "name,alias"), for the checker's own negative controls, which run everywhere.
const fixture = `package cmds
var ConfigFlag = &cli.StringFlag{ Name: "config,c", Usage: "(config) Load configuration from \`FILE\`" }
var ServerFlags = []cli.Flag{
	ConfigFlag,
	&cli.BoolFlag{ Name: "etcd-s3", Usage: "(db) Enable backup to S3" },
	&cli.StringFlag{ Name: "etcd-snapshot-dir", Usage: "(db) default: \${data-dir}/db/snapshots" },
	// a comment, with a comma
	NodeIPFlag,
}
var (
	NodeIPFlag = &cli.StringSliceFlag{ Name: "node-ip,i", Usage: "(agent/networking) IPv4/IPv6 addresses" }
)
func (c *Controller) get() { _ = secret.Data["etcd-s3-bucket"] }
`;

describe("the flag checker (negative controls on a k3s-shaped source)", () => {
  it("reads inline flags, flags by variable and aliases", () => {
    expect([...k3sFlagNames([fixture], "ServerFlags")].sort()).toEqual(["c", "config", "etcd-s3", "etcd-snapshot-dir", "i", "node-ip"]);
  });

  it("reports a misspelt key, with the flag meant, and accepts '+' (append) keys", () => {
    const known = k3sFlagNames([fixture], "ServerFlags");
    expect(unknownK3sFlags(["etcd-s3", "node-ip+", "--node-ip=10.0.1.11"], known, "x")).toEqual([]);
    expect(unknownK3sFlags(["etcd-s3s"], known, "config.yaml")).toEqual(['config.yaml: k3s has no flag "etcd-s3s"; did you mean "etcd-s3"?']);
  });

  it("fails loudly when the source does not define what the list names", () => {
    expect(() => k3sFlagNames([fixture.replace(/NodeIPFlag = [^\n]+\n/, "")], "ServerFlags")).toThrow(/NodeIPFlag, whose definition was not found/);
    expect(() => k3sFlagNames([fixture], "AgentFlags")).toThrow(/no "var AgentFlags/);
  });

  it("reads the Secret's keys and reports an unknown one", () => {
    expect(unknownK3sFlags(["etcd-s3-bucket", "etcd-s3-buckets"], k3sConfigSecretKeys(fixture), "Secret")).toEqual([
      'Secret: k3s has no flag "etcd-s3-buckets"; did you mean "etcd-s3-bucket"?',
    ]);
  });
});

const source = locateK3sSource(catalog.k3s.version);

describe(`against k3s ${catalog.k3s.version}'s own flag definitions`, () => {
  it("every config key the servers get and every flag of the restore is a k3s server flag", (context) => {
    if ("unavailable" in source) return skipIfDeclared(context, source.unavailable);
    const known = k3sFlagNames(readK3sSources(source.dir).cmds, "ServerFlags");
    expect([
      ...unknownK3sFlags(emittedConfigKeys(), known, "k3s config (user data)"),
      ...unknownK3sFlags(bootScriptKeys(), known, "boot script drop-in"),
      ...unknownK3sFlags(recoveryServerFlags(), known, "k3s-etcd-recovery.sh"),
    ]).toEqual([]);
    // Negative control on the real definitions: a misspelt key is reported.
    expect(unknownK3sFlags(["etcd-s3-config-secrets"], known, "x")).toHaveLength(1);
  });

  it("every key of the etcd S3 Secret is one k3s reads", (context) => {
    if ("unavailable" in source) return skipIfDeclared(context, source.unavailable);
    const configSecret = readK3sSources(source.dir).configSecret;
    if (configSecret === undefined) throw new Error(`${source.origin} has no pkg/etcd/s3/config_secret.go`);
    const known = k3sConfigSecretKeys(configSecret);
    expect(unknownK3sFlags(emittedSecretKeys(), known, "etcd S3 Secret")).toEqual([]);
    expect(unknownK3sFlags(["etcd-s3-access-keys"], known, "x")).toHaveLength(1);
  });
});
