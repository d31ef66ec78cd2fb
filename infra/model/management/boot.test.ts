import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import { parse } from "yaml";
import { repoRoot } from "../../../tests/support/stack-files";
import { planManagementAddresses, renderK3sCloudInit, serverBootFiles } from "./management-cluster";

// The management servers' first boot, run for real in network namespaces this test creates
// (and deletes), shaped like a Hetzner server: a public NIC `eth0` holding the default route
// (gateway 172.31.1.1, as on Hetzner), a private NIC named the way hcloud names it
// (`enp7s0`; `ens10` on older server types) holding a /32 of the private network, and a
// "pod" namespace behind the node the way flannel's bridge puts pods there. Hetzner's
// metadata endpoint is played by a small HTTP server serving fake user data on
// 198.51.100.254 (TEST-NET-2) in a "cloud" namespace behind the node's public NIC. No packet
// leaves these namespaces, and nothing is ever sent to the real 169.254.169.254.

const id = process.pid;
const ns = { node: `cf-node-${id}`, pod: `cf-pod-${id}`, cloud: `cf-cloud-${id}`, oldNode: `cf-node10-${id}` };
const metadataAddress = "198.51.100.254";

/** The prod stack's management servers and the command each one's user data runs at boot. */
const prodManagement = (parse(readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8")) as {
  config: Record<string, { servers: number; network: { subnetCidr: string } }>;
}).config["capi-fleet:management"]!;
const prodServers = planManagementAddresses(prodManagement.network.subnetCidr, prodManagement.servers).serverIps.map((privateIp, index) => {
  const userData = parse(
    renderK3sCloudInit({
      index,
      k3sVersion: catalog.k3s.version,
      nodeIp: privateIp,
      firstServerIp: "10.0.1.11",
      apiAddresses: ["203.0.113.10"],
      token: "t",
      caFiles: { serverCaCertPem: "", serverCaKeyPem: "", clientCaCertPem: "", clientCaKeyPem: "" },
    }).replace("#cloud-config\n", ""),
  ) as { runcmd: string[][] };
  return { privateIp, runcmd: userData.runcmd };
});
const nodeIp = prodServers[0]!.privateIp;
const fakeUserData = "#cloud-config\n# fake client-ca.key for the test\n";
const bootScript = path.join(repoRoot, serverBootFiles.bootScript.source);
const guard = path.join(repoRoot, serverBootFiles.metadataGuard.source);

let metadataServer: ChildProcess | undefined;
let workDir: string;

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}
/** Runs a command inside one of the test's namespaces. */
function inNs(name: string, command: string[], env: Record<string, string> = {}) {
  return spawnSync("ip", ["netns", "exec", name, ...command], {
    encoding: "utf8",
    timeout: 20_000,
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...env },
  });
}

/** Builds the namespaces. Each veth end is created directly inside its namespace. */
function buildTopology(): void {
  for (const name of Object.values(ns)) ip("netns", "add", name);
  const node = ns.node;
  // Public NIC, default route via Hetzner's on-link gateway.
  ip("link", "add", "eth0", "netns", node, "type", "veth", "peer", "name", "gw-pub", "netns", ns.cloud);
  // Private NIC: a /32 and the network routed via the network's gateway (.0.1), as hcloud configures it.
  ip("link", "add", "enp7s0", "netns", node, "type", "veth", "peer", "name", "gw-priv", "netns", ns.cloud);
  // Pod side: the pod's eth0 and the node's end of it (flannel's cni0 bridge in real life).
  ip("link", "add", "eth0", "netns", ns.pod, "type", "veth", "peer", "name", "cni0", "netns", node);
  const script: [string, string[]][] = [
    [node, ["addr", "add", "203.0.113.5/32", "dev", "eth0"]],
    [node, ["addr", "add", `${nodeIp}/32`, "dev", "enp7s0"]],
    [node, ["addr", "add", "10.42.0.1/24", "dev", "cni0"]],
    [ns.cloud, ["addr", "add", "172.31.1.1/32", "dev", "gw-pub"]],
    [ns.cloud, ["addr", "add", "10.0.0.1/32", "dev", "gw-priv"]],
    [ns.cloud, ["addr", "add", `${metadataAddress}/32`, "dev", "lo"]],
    [ns.pod, ["addr", "add", "10.42.0.5/24", "dev", "eth0"]],
  ];
  for (const [name, args] of script) ip("-n", name, ...args);
  for (const [name, links] of [
    [node, ["lo", "eth0", "enp7s0", "cni0"]],
    [ns.cloud, ["lo", "gw-pub", "gw-priv"]],
    [ns.pod, ["lo", "eth0"]],
  ] as const) {
    for (const link of links) ip("-n", name, "link", "set", link, "up");
  }
  const routes: [string, string[]][] = [
    [node, ["route", "add", "172.31.1.1", "dev", "eth0", "scope", "link"]],
    [node, ["route", "add", "default", "via", "172.31.1.1", "dev", "eth0"]],
    [node, ["route", "add", "10.0.0.1", "dev", "enp7s0", "scope", "link"]],
    [node, ["route", "add", "10.0.0.0/16", "via", "10.0.0.1", "dev", "enp7s0"]],
    [ns.cloud, ["route", "add", "203.0.113.5", "dev", "gw-pub", "scope", "link"]],
    [ns.cloud, ["route", "add", nodeIp, "dev", "gw-priv", "scope", "link"]],
    // Replies to pods go back through the node (flannel would masquerade them instead).
    [ns.cloud, ["route", "add", "10.42.0.0/16", "via", "203.0.113.5", "dev", "gw-pub"]],
    [ns.pod, ["route", "add", "default", "via", "10.42.0.1"]],
  ];
  for (const [name, args] of routes) ip("-n", name, ...args);
  // The node routes pods' packets, as every Kubernetes node does.
  const forwarding = inNs(node, ["sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"]);
  expect(forwarding.status, forwarding.stderr).toBe(0);

  // An older server type: the private NIC is ens10. Its peers live in the cloud namespace too.
  ip("link", "add", "eth0", "netns", ns.oldNode, "type", "veth", "peer", "name", "gw10-pub", "netns", ns.cloud);
  ip("link", "add", "ens10", "netns", ns.oldNode, "type", "veth", "peer", "name", "gw10-priv", "netns", ns.cloud);
  ip("-n", ns.oldNode, "addr", "add", "203.0.113.6/32", "dev", "eth0");
  ip("-n", ns.oldNode, "addr", "add", "10.0.1.12/32", "dev", "ens10");
  for (const link of ["lo", "eth0", "ens10"]) ip("-n", ns.oldNode, "link", "set", link, "up");
  ip("-n", ns.oldNode, "route", "add", "172.31.1.1", "dev", "eth0", "scope", "link");
  ip("-n", ns.oldNode, "route", "add", "default", "via", "172.31.1.1", "dev", "eth0");
}

/** Starts the fake metadata endpoint in the cloud namespace and waits until it listens. */
async function startMetadataServer(): Promise<void> {
  const code = [
    "const http = require('node:http');",
    `http.createServer((req, res) => res.end(req.url === '/hetzner/v1/userdata' ? ${JSON.stringify(fakeUserData)} : 'not found'))`,
    `  .listen(80, '${metadataAddress}', () => console.log('listening'));`,
  ].join("\n");
  metadataServer = spawn("ip", ["netns", "exec", ns.cloud, process.execPath, "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    metadataServer!.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) resolve();
    });
    metadataServer!.on("exit", (code) => {
      reject(new Error(`metadata server exited with ${code}`));
    });
  });
}

/** Reads the user data from inside a namespace; fails on refusal or after 3 s (a dropped packet). */
function readUserData(name: string): { ok: boolean; body: string; error: string } {
  const code = [
    `fetch('http://${metadataAddress}/hetzner/v1/userdata', { signal: AbortSignal.timeout(3000) })`,
    "  .then((r) => r.text()).then((t) => process.stdout.write(t))",
    "  .catch((e) => { process.stderr.write(String(e.cause?.code ?? e.name)); process.exit(1); });",
  ].join("\n");
  const result = inNs(name, [process.execPath, "-e", code]);
  return { ok: result.status === 0, body: result.stdout, error: result.stderr };
}

function guardCommand(action: string) {
  return inNs(ns.node, [guard, action], { METADATA_ADDRESS: metadataAddress });
}

/** Stubs for what the boot script drives outside the network: systemd and the k3s installer. */
function writeStubs(stubDir: string): void {
  const bin = path.join(stubDir, "bin");
  mkdirSync(bin, { recursive: true });
  const stubs: Record<string, string> = {
    // `enable --now` of the guard unit runs what the unit runs.
    systemctl: 'if [ "$1 $2 $3" = "enable --now capi-fleet-metadata-guard.service" ]; then exec "$METADATA_GUARD" apply; fi',
    // get.k3s.io: an installer that records how it was called and whether the guard was in place.
    curl: [
      'out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && { shift; out=$1; }; shift; done',
      "cat > \"$out\" <<'INSTALLER'",
      'guard=off; nft list table inet capi_fleet_metadata >/dev/null 2>&1 && guard=on',
      'echo "k3s-installer INSTALL_K3S_VERSION=$INSTALL_K3S_VERSION args=$* guard=$guard" >> "$STUB_LOG"',
      "INSTALLER",
    ].join("\n"),
  };
  for (const [name, body] of Object.entries(stubs)) {
    writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >> "$STUB_LOG"\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
}

function boot(name: string, args: string[], env: Record<string, string> = {}) {
  const stubDir = mkdtempSync(path.join(workDir, "boot-"));
  writeStubs(stubDir);
  const dropins = path.join(stubDir, "config.yaml.d");
  const log = path.join(stubDir, "calls.log");
  writeFileSync(log, "");
  const result = spawnSync("ip", ["netns", "exec", name, "bash", bootScript, ...args], {
    encoding: "utf8",
    timeout: 20_000,
    env: {
      PATH: `${path.join(stubDir, "bin")}:/usr/sbin:/usr/bin:/sbin:/bin`,
      METADATA_GUARD: guard,
      METADATA_ADDRESS: metadataAddress,
      K3S_CONFIG_DROPIN_DIR: dropins,
      STUB_LOG: log,
      ADDRESS_WAIT_SECONDS: "2",
      INSTALL_RETRY_DELAY: "0",
      ...env,
    },
  });
  const dropin = path.join(dropins, "50-flannel-iface.yaml");
  return {
    status: result.status,
    stderr: result.stderr,
    calls: readFileSync(log, "utf8").split("\n").filter(Boolean),
    flannelDropin: existsSync(dropin) ? readFileSync(dropin, "utf8") : undefined,
  };
}

describe("a management server's first boot, in network namespaces shaped like a Hetzner server", () => {
  beforeAll(async () => {
    // Network namespaces and nftables need root, which CI and project machines have: fail, never skip.
    if (process.getuid?.() !== 0) throw new Error("this test builds network namespaces (ip netns add) and needs root");
    execFileSync(path.join(repoRoot, "tools", "debian-packages"), ["iproute2", "nftables"], { stdio: "inherit" });
    workDir = mkdtempSync(path.join(tmpdir(), "k3s-boot-"));
    buildTopology();
    await startMetadataServer();
  }, 300_000);

  afterAll(() => {
    metadataServer?.kill();
    for (const name of Object.values(ns)) spawnSync("ip", ["netns", "del", name]);
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("the topology is real: without the guard a pod reads the user data through the node", () => {
    expect(guardCommand("remove").status).toBe(0);
    const read = readUserData(ns.pod);
    expect(read.error).toBe("");
    expect(read.body).toBe(fakeUserData);
  });

  it("flannel's default would be the public NIC: the default route leaves through eth0", () => {
    // k3s-io/k3s pkg/agent/flannel/flannel.go, LookupExtInterface: no flannel-iface -> default-gateway interface.
    expect(inNs(ns.node, ["ip", "-4", "route", "show", "default"]).stdout).toMatch(/ dev eth0\b/);
  });

  it("every prod server's user data, run as cloud-init runs it, names the private NIC as flannel's interface, starts the guard, then installs the pinned k3s", () => {
    expect(prodServers).toHaveLength(3);
    for (const server of [...prodServers].reverse()) {
      // This namespace plays each prod server in turn: its private NIC holds that server's IP.
      ip("-n", ns.node, "addr", "flush", "dev", "enp7s0");
      ip("-n", ns.node, "addr", "add", `${server.privateIp}/32`, "dev", "enp7s0");
      expect(server.runcmd).toHaveLength(1);
      const [command, ...args] = server.runcmd[0]!;
      expect(command).toBe(serverBootFiles.bootScript.path);
      const { status, stderr, calls, flannelDropin } = boot(ns.node, args);
      expect(status, stderr).toBe(0);
      expect(flannelDropin).toBe("flannel-iface: enp7s0\n");
      const installer = calls.filter((call) => call.startsWith("k3s-installer"));
      expect(installer).toEqual([`k3s-installer INSTALL_K3S_VERSION=${catalog.k3s.version} args=server guard=on`]);
      expect(calls.findIndex((call) => call.includes("enable --now capi-fleet-metadata-guard.service"))).toBeLessThan(
        calls.findIndex((call) => call.startsWith("curl")),
      );
    }
    // The loop ended on the first server, whose address the rest of the tests use.
    expect(inNs(ns.node, ["ip", "-4", "-o", "addr", "show", "dev", "enp7s0"]).stdout).toContain(` ${nodeIp}/32 `);
  });

  it("looks the NIC up instead of assuming its name (ens10 on older server types)", () => {
    const { status, stderr, flannelDropin } = boot(ns.oldNode, ["10.0.1.12", catalog.k3s.version]);
    expect(status, stderr).toBe(0);
    expect(flannelDropin).toBe("flannel-iface: ens10\n");
  });

  it("fails loudly, before k3s, when no NIC holds the private IP (exact match: 10.0.1.1 is not 10.0.1.11)", () => {
    const { status, stderr, calls, flannelDropin } = boot(ns.node, ["10.0.1.1", catalog.k3s.version]);
    expect(status).not.toBe(0);
    expect(stderr).toContain("no interface holds 10.0.1.1 after 2s");
    expect(stderr).toContain("k3s was not started");
    expect(flannelDropin).toBeUndefined();
    expect(calls.some((call) => call.startsWith("curl") || call.startsWith("k3s-installer"))).toBe(false);
  });

  it("with the guard (as boot left it), a pod cannot read the user data and the node still can", () => {
    expect(guardCommand("check").status).toBe(0);
    const fromPod = readUserData(ns.pod);
    expect(fromPod.ok).toBe(false);
    expect(fromPod.error).toBe("TimeoutError"); // dropped, not answered
    const fromNode = readUserData(ns.node);
    expect(fromNode.error).toBe("");
    expect(fromNode.body).toBe(fakeUserData);
  });

  it("applying twice keeps one rule (the unit runs it at every boot)", () => {
    expect(guardCommand("apply").status).toBe(0);
    expect(guardCommand("apply").status).toBe(0);
    const rules = inNs(ns.node, ["nft", "list", "table", "inet", "capi_fleet_metadata"]).stdout;
    expect(rules.match(/ip daddr 198\.51\.100\.254 counter packets \d+ bytes \d+ drop/g)).toHaveLength(1);
    expect(readUserData(ns.pod).ok).toBe(false);
  });

  it("negative control: without the rule the pod reads the user data again, and check refuses to pass", () => {
    expect(guardCommand("remove").status).toBe(0);
    const fromPod = readUserData(ns.pod);
    expect(fromPod.error).toBe("");
    expect(fromPod.body).toBe(fakeUserData);
    const check = guardCommand("check");
    expect(check.status).toBe(1);
    expect(check.stderr).toContain("pods could read this server's user data");
  });

  it("boot refuses to install k3s when the guard cannot be put in place", () => {
    const { status, calls } = boot(ns.node, [nodeIp, catalog.k3s.version], { METADATA_GUARD: "/bin/false" });
    expect(status).not.toBe(0);
    expect(calls.some((call) => call.startsWith("k3s-installer"))).toBe(false);
  });
});

describe("the boot scripts as shipped", () => {
  it("pass shellcheck (Debian's package)", () => {
    const result = spawnSync(path.join(repoRoot, "tools", "shellcheck"), [bootScript, guard], { encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
