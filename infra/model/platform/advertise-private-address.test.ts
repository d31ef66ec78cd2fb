import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../../../tests/support/stack-files";
import { carenExtensionNames } from "./caren-extensions";
import { hetznerClusterClassManifests } from "./hetzner-cluster-class";
import { advertisePrivateAddressScript, advertisePrivateAddressScriptFile, advertisePrivateAddressScriptPath, installKubernetesScriptPath } from "./node-bootstrap";

// The control planes' advertise-address script, run for real by bash (with the real `ip` and
// python3 + PyYAML, as cloud-init has them on the node) against a scratch root that holds the
// kubeadm config CABPK writes and a stub `curl` that answers as Hetzner's metadata service.
// What runs is the text the ClusterClass ships (the file without its comment lines).

/** The committed file, with its comments. */
const source = path.join(repoRoot, advertisePrivateAddressScriptFile);
/** The script as control planes get it, written out for bash and shellcheck. */
const shippedDirectory = mkdtempSync(path.join(tmpdir(), "advertise-shipped-"));
const script = path.join(shippedDirectory, path.basename(advertisePrivateAddressScriptFile));
writeFileSync(script, advertisePrivateAddressScript, { mode: 0o755 });
afterAll(() => {
  rmSync(shippedDirectory, { recursive: true, force: true });
});
const scratch: string[] = [];

afterEach(() => {
  for (const directory of scratch.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** CABPK's init config: ClusterConfiguration, then InitConfiguration (controlplane_init.go). */
const initConfig = [
  "---",
  "apiVersion: kubeadm.k8s.io/v1beta4",
  "kind: ClusterConfiguration",
  "controlPlaneEndpoint: 203.0.113.10:6443",
  "---",
  "apiVersion: kubeadm.k8s.io/v1beta4",
  "kind: InitConfiguration",
  "localAPIEndpoint: {}",
  "nodeRegistration:",
  "  kubeletExtraArgs:",
  "  - name: cloud-provider",
  "    value: external",
  "",
].join("\n");
const joinConfig = (controlPlane: boolean) =>
  [
    "apiVersion: kubeadm.k8s.io/v1beta4",
    "kind: JoinConfiguration",
    ...(controlPlane ? ["controlPlane:", "  localAPIEndpoint: {}"] : []),
    "discovery:",
    "  bootstrapToken:",
    "    apiServerEndpoint: 203.0.113.10:6443",
    "",
  ].join("\n");

/** Hetzner's private-networks metadata for one network with `address`. */
const metadata = (address: string) => [`- ip: ${address}`, "  alias_ips: []", "  interface_num: 1", "  network: 10.0.0.0/16", "  subnet: 10.0.0.0/24", "  gateway: 10.0.0.1", ""].join("\n");

/** Where the real `ip` is, for the wrapper below. */
const realIp = spawnSync("sh", ["-c", "command -v ip"], { encoding: "utf8" }).stdout.trim();

function run(files: { init?: string; join?: string }, metadataBody: string | undefined, options: { ipWritesLate?: boolean } = {}) {
  const root = mkdtempSync(path.join(tmpdir(), "advertise-"));
  scratch.push(root);
  mkdirSync(path.join(root, "run/kubeadm"), { recursive: true });
  mkdirSync(path.join(root, "usr/bin"), { recursive: true });
  mkdirSync(path.join(root, "bin"), { recursive: true });
  writeFileSync(path.join(root, "usr/bin/kubeadm"), "");
  if (files.init !== undefined) writeFileSync(path.join(root, "run/kubeadm/kubeadm.yaml"), files.init);
  if (files.join !== undefined) writeFileSync(path.join(root, "run/kubeadm/kubeadm-join-config.yaml"), files.join);
  if (metadataBody !== undefined) writeFileSync(path.join(root, "metadata"), metadataBody);
  // The stub curl logs its URL and prints the metadata (or fails as an unreachable service would).
  writeFileSync(path.join(root, "bin/curl"), `#!/bin/sh\necho "$@" >> "${root}/curl.log"\n[ -f "${root}/metadata" ] || exit 7\ncat "${root}/metadata"\n`);
  chmodSync(path.join(root, "bin/curl"), 0o755);
  if (options.ipWritesLate) {
    // The real ip, then one more line a moment later, as ip does for every interface after the match.
    writeFileSync(path.join(root, "bin/ip"), `#!/bin/sh\n"${realIp}" "$@" || exit\nsleep 0.2\necho "9: extra    inet 198.51.100.9/24 scope global extra"\n`);
    chmodSync(path.join(root, "bin/ip"), 0o755);
  }
  const result = spawnSync("bash", [script], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${path.join(root, "bin")}:${process.env.PATH ?? ""}`, ADVERTISE_ROOT: root, ADDRESS_WAIT: "2", ADDRESS_POLL: "1" },
  });
  const read = (name: string) => (existsSync(path.join(root, "run/kubeadm", name)) ? readFileSync(path.join(root, "run/kubeadm", name), "utf8") : undefined);
  return {
    status: result.status,
    stderr: result.stderr,
    init: read("kubeadm.yaml"),
    join: read("kubeadm-join-config.yaml"),
    kubeadmMovedAside: !existsSync(path.join(root, "usr/bin/kubeadm")),
    metadataAsked: existsSync(path.join(root, "curl.log")),
  };
}

const documents = (text: string | undefined) => parseAllDocuments(text ?? "").map((document) => document.toJSON() as Record<string, unknown>);
const byKind = (text: string | undefined, kind: string) => documents(text).find((document) => document.kind === kind);

// 127.0.0.1 is on every machine's loopback, so "an interface holds the address" is real here.
describe("advertise-private-address.sh on a control plane's first boot", () => {
  it("makes kubeadm init advertise the private address and leaves the rest of the config as it was", () => {
    const result = run({ init: initConfig }, metadata("127.0.0.1"));
    expect(result.status, result.stderr).toBe(0);
    expect(byKind(result.init, "InitConfiguration")).toEqual({ ...byKind(initConfig, "InitConfiguration"), localAPIEndpoint: { advertiseAddress: "127.0.0.1" } });
    expect(byKind(result.init, "ClusterConfiguration")).toEqual(byKind(initConfig, "ClusterConfiguration"));
  });

  it("does the same for a control plane that joins", () => {
    const result = run({ join: joinConfig(true) }, metadata("127.0.0.1"));
    expect(result.status, result.stderr).toBe(0);
    expect(byKind(result.join, "JoinConfiguration")).toEqual({ ...byKind(joinConfig(true), "JoinConfiguration"), controlPlane: { localAPIEndpoint: { advertiseAddress: "127.0.0.1" } } });
  });

  it("finds the address when ip still writes after the line that holds it (no SIGPIPE from an early grep exit)", () => {
    const result = run({ init: initConfig }, metadata("127.0.0.1"), { ipWritesLate: true });
    expect(result.status, result.stderr).toBe(0);
    expect(byKind(result.init, "InitConfiguration")).toMatchObject({ localAPIEndpoint: { advertiseAddress: "127.0.0.1" } });
  });

  it("leaves a worker alone, without asking the metadata service", () => {
    const result = run({ join: joinConfig(false) }, undefined);
    expect(result.status, result.stderr).toBe(0);
    expect(result.join).toBe(joinConfig(false));
    expect(result.metadataAsked).toBe(false);
  });

  it("gives up, bounded, when no interface holds the listed address, and takes kubeadm out of the way (negative control)", () => {
    const result = run({ init: initConfig }, metadata("203.0.113.7"));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("no private address after 2s (metadata said '203.0.113.7')");
    expect(result.kubeadmMovedAside).toBe(true);
    expect(result.init).toBe(initConfig);
  });

  it("gives up the same way when the metadata service does not answer", () => {
    const result = run({ init: initConfig }, undefined);
    expect(result.status).not.toBe(0);
    expect(result.kubeadmMovedAside).toBe(true);
  });
});

describe("the advertise-address script as shipped", () => {
  const { templates } = hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() });
  const filesOf = (spec: unknown) => (spec as { files: { path: string; content: string }[] }).files;

  it("is written to control planes only", () => {
    const controlPlane = filesOf((templates.controlPlane.spec as { template: { spec: { kubeadmConfigSpec: unknown } } }).template.spec.kubeadmConfigSpec);
    const worker = filesOf((templates.workerBootstrap.spec as { template: { spec: unknown } }).template.spec);
    expect(controlPlane.find((file) => file.path === advertisePrivateAddressScriptPath)?.content).toBe(advertisePrivateAddressScript);
    expect(worker.map((file) => file.path)).toEqual([installKubernetesScriptPath]);
  });

  it("runs on control planes after the install, which puts kubeadm where its failure can move it aside", () => {
    const patches = (hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() }).clusterClass.spec as { patches: { definitions?: { jsonPatches: { path: string; valueFrom: { template?: string } }[] }[] }[] }).patches;
    const templatesOf = (suffix: string) =>
      patches.flatMap((patch) => patch.definitions ?? []).flatMap((definition) => definition.jsonPatches).filter((jsonPatch) => jsonPatch.path.endsWith(suffix)).map((jsonPatch) => jsonPatch.valueFrom.template ?? "");
    // One prepend per command, applied in order: the last prepended runs first.
    const commands = (prefix: string) =>
      templatesOf(`${prefix}/preKubeadmCommands/0`)
        .map((template) => (JSON.parse(template) as string).split(" ")[0])
        .reverse();
    expect(commands("/kubeadmConfigSpec")).toEqual([installKubernetesScriptPath, advertisePrivateAddressScriptPath]);
    expect(commands("/template/spec")).toEqual([installKubernetesScriptPath]);
  });

  it("passes shellcheck (Debian's package) as committed and as shipped", () => {
    const result = spawnSync(path.join(repoRoot, "tools", "shellcheck"), [source, script], { encoding: "utf8" });
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });
});
