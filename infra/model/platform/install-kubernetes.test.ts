import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { catalog } from "../versions/catalog";
import { installKubernetesCommand, installKubernetesScript, installKubernetesScriptFile } from "./node-bootstrap";

// The tenant nodes' install script, run for real by bash against stubs of the programs it
// drives (apt-get, curl, fuser, systemctl, ...) on PATH and a scratch root (INSTALL_ROOT), so
// its behaviour is checked, not its text: it installs the catalog's containerd from a
// checksummed bundle, waits for the apt/dpkg lock, retries downloads a bounded number of
// times and, when anything fails, stops before kubeadm and takes kubeadm out of the way.
// What runs is the text the ClusterClass ships (the file without its comment lines).

/** The committed file, with its comments. */
const source = path.join(repoRoot, installKubernetesScriptFile);
/** The script as nodes get it, written out for bash and shellcheck. */
const shippedDirectory = mkdtempSync(path.join(tmpdir(), "install-kubernetes-shipped-"));
const script = path.join(shippedDirectory, path.basename(installKubernetesScriptFile));
writeFileSync(script, installKubernetesScript, { mode: 0o755 });
afterAll(() => {
  rmSync(shippedDirectory, { recursive: true, force: true });
});
const kubernetesVersion = catalog.tenantKubernetesVersions[1];
const containerdVersion = catalog.containerd.version;
const bundle = `cri-containerd-cni-${containerdVersion}-linux-amd64.tar.gz`;
const bundleUrl = `https://github.com/containerd/containerd/releases/download/v${containerdVersion}/${bundle}`;

/** The arguments the ClusterClass's preKubeadmCommand passes, for a node of `version`. */
function commandArguments(version: string): string[] {
  const [, ...args] = installKubernetesCommand("VERSION").split(" ");
  return args.map((arg) => (arg === "VERSION" ? version : arg));
}

// Each stub appends "<name> <args>" to $STUB_LOG. Counters live in $STUB_DIR.
const stubs: Record<string, string> = {
  modprobe: "",
  sysctl: "",
  "apt-mark": "",
  dpkg: '[ "$1" = --print-architecture ] && echo amd64',
  // Held while the counter file has calls left.
  fuser: 'n=$(cat "$STUB_DIR/lock-held" 2>/dev/null || echo 0); [ "$n" -gt 0 ] || exit 1; echo $((n - 1)) > "$STUB_DIR/lock-held"; exit 0',
  gpg: 'while [ $# -gt 0 ]; do [ "$1" = -o ] && { shift; echo dearmored > "$1"; }; shift; done',
  systemctl: '[ "$1" = is-active ] && [ -e "$STUB_DIR/containerd-down" ] && exit 3; exit 0',
  // Serves files from $STUB_DIR/mirror; fails while the counter file has failures left.
  curl: [
    'n=$(cat "$STUB_DIR/curl-failures" 2>/dev/null || echo 0)',
    'if [ "$n" -gt 0 ]; then echo $((n - 1)) > "$STUB_DIR/curl-failures"; echo "curl: (6) Could not resolve host" >&2; exit 6; fi',
    'out=""; url=""; while [ $# -gt 0 ]; do case "$1" in -o) shift; out=$1;; --connect-timeout|--max-time) shift;; -*) ;; *) url=$1;; esac; shift; done',
    'src="$STUB_DIR/mirror/${url#https://}"; [ -f "$src" ] || { echo "curl: (22) 404 $url" >&2; exit 22; }',
    'cp "$src" "$out"',
  ].join("\n"),
  // `install kubeadm=X-*` puts a kubeadm reporting vX (or $STUB_DIR/kubeadm-reports) into the root.
  "apt-get": [
    'for arg in "$@"; do case "$arg" in kubeadm=*) v=${arg#kubeadm=}; v=v${v%-*}',
    '  [ -f "$STUB_DIR/kubeadm-reports" ] && v=$(cat "$STUB_DIR/kubeadm-reports")',
    '  mkdir -p "$INSTALL_ROOT/usr/bin"; printf \'#!/bin/sh\\necho %s\\n\' "$v" > "$INSTALL_ROOT/usr/bin/kubeadm"; chmod +x "$INSTALL_ROOT/usr/bin/kubeadm";; esac; done',
  ].join("\n"),
};

interface Run {
  status: number | null;
  stderr: string;
  calls: string[];
  root: string;
  stubDir: string;
}

let workDir: string;

beforeAll(() => {
  execFileSync(path.join(repoRoot, "tools", "debian-packages"), ["tar"], { stdio: "inherit" });
});

afterEach(() => {
  if (workDir) {
    rmSync(workDir, { recursive: true, force: true });
  }
});

/** A containerd release bundle holding a fake containerd that reports `reports`. */
function writeBundle(mirror: string, reports: string, corrupt = false): void {
  const staging = path.join(workDir, "bundle");
  mkdirSync(path.join(staging, "usr/local/bin"), { recursive: true });
  mkdirSync(path.join(staging, "etc/systemd/system"), { recursive: true });
  const containerd = [
    "#!/bin/sh",
    `[ "$1" = --version ] && echo "containerd github.com/containerd/containerd v${reports} 0123abcd"`,
    '[ "$1" = config ] && printf \'version = 2\\n  SystemdCgroup = false\\n\'',
    "exit 0",
  ].join("\n");
  writeFileSync(path.join(staging, "usr/local/bin/containerd"), `${containerd}\n`, { mode: 0o755 });
  writeFileSync(path.join(staging, "etc/systemd/system/containerd.service"), "[Service]\nExecStart=/usr/local/bin/containerd\n");
  const directory = path.join(mirror, path.dirname(bundleUrl.replace("https://", "")));
  mkdirSync(directory, { recursive: true });
  const tarball = path.join(directory, bundle);
  execFileSync("tar", ["-C", staging, "-czf", tarball, "usr", "etc"]);
  const digest = createHash("sha256").update(readFileSync(tarball)).digest("hex");
  writeFileSync(`${tarball}.sha256sum`, `${digest}  ${bundle}\n`);
  if (corrupt) {
    writeFileSync(tarball, Buffer.concat([readFileSync(tarball), Buffer.from("tampered")]));
  }
}

function run(
  options: {
    args?: string[];
    lockHeldPolls?: number;
    curlFailures?: number;
    containerdReports?: string;
    corruptBundle?: boolean;
    kubeadmReports?: string;
    containerdDown?: boolean;
    env?: Record<string, string>;
  } = {},
): Run {
  workDir = mkdtempSync(path.join(tmpdir(), "install-kubernetes-"));
  const root = path.join(workDir, "root");
  const stubDir = path.join(workDir, "stubs");
  const bin = path.join(stubDir, "bin");
  mkdirSync(root, { recursive: true });
  mkdirSync(bin, { recursive: true });
  for (const [name, body] of Object.entries(stubs)) {
    const file = path.join(bin, name);
    writeFileSync(file, `#!/usr/bin/env bash\necho "${name} $*" >> "$STUB_LOG"\n${body}\n`);
    chmodSync(file, 0o755);
  }
  const mirror = path.join(stubDir, "mirror");
  writeBundle(mirror, options.containerdReports ?? containerdVersion, options.corruptBundle);
  const minor = kubernetesVersion.slice(1).split(".").slice(0, 2).join(".");
  const keyDirectory = path.join(mirror, `pkgs.k8s.io/core:/stable:/v${minor}/deb`);
  mkdirSync(keyDirectory, { recursive: true });
  writeFileSync(path.join(keyDirectory, "Release.key"), "-----BEGIN PGP PUBLIC KEY BLOCK-----\n");
  writeFileSync(path.join(stubDir, "lock-held"), String(options.lockHeldPolls ?? 0));
  writeFileSync(path.join(stubDir, "curl-failures"), String(options.curlFailures ?? 0));
  if (options.kubeadmReports) writeFileSync(path.join(stubDir, "kubeadm-reports"), options.kubeadmReports);
  if (options.containerdDown) writeFileSync(path.join(stubDir, "containerd-down"), "");
  const log = path.join(stubDir, "calls.log");
  writeFileSync(log, "");

  const result = spawnSync("bash", [script, ...(options.args ?? commandArguments(kubernetesVersion))], {
    encoding: "utf8",
    timeout: 20_000,
    env: {
      // Stubs first; the real coreutils, tar, sha256sum, sed and mktemp after them.
      PATH: `${bin}:${root}/usr/bin:/usr/bin:/bin`,
      INSTALL_ROOT: root,
      STUB_DIR: stubDir,
      STUB_LOG: log,
      INSTALL_RETRIES: "3",
      INSTALL_RETRY_DELAY: "0",
      APT_LOCK_POLL: "0.05",
      APT_LOCK_TIMEOUT: "30",
      ...options.env,
    },
  });
  const calls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { status: result.status, stderr: result.stderr, calls, root, stubDir };
}

const index = (calls: string[], prefix: string) => calls.findIndex((call) => call.startsWith(prefix));
const installsKubelet = (call: string) => call.startsWith("apt-get") && call.includes(" install ") && call.includes("kubelet=");

describe("install-kubernetes.sh on a node's first boot", () => {
  it("installs the catalog's containerd from its checksummed release bundle, then the node's own kubelet/kubeadm", () => {
    const { status, stderr, calls, root } = run();
    expect(status, stderr).toBe(0);
    expect(commandArguments(kubernetesVersion)).toEqual([kubernetesVersion, containerdVersion]);
    // containerd comes from the bundle at the catalog's version, and runs before kubelet is installed.
    expect(calls.filter((call) => call.startsWith("curl ") && call.endsWith(` ${bundleUrl}`))).toHaveLength(1);
    expect(calls.some((call) => call.endsWith(`${bundleUrl}.sha256sum`))).toBe(true);
    expect(execFileSync(path.join(root, "usr/local/bin/containerd"), ["--version"], { encoding: "utf8" })).toContain(` v${containerdVersion} `);
    expect(readFileSync(path.join(root, "etc/containerd/config.toml"), "utf8")).toContain("SystemdCgroup = true");
    expect(index(calls, "systemctl restart containerd")).toBeGreaterThanOrEqual(0);
    expect(index(calls, "systemctl restart containerd")).toBeLessThan(calls.findIndex(installsKubelet));
    const version = kubernetesVersion.slice(1);
    expect(calls.find(installsKubelet)).toContain(`kubelet=${version}-* kubeadm=${version}-* kubectl=${version}-*`);
    expect(calls).toContain("apt-mark hold kubelet kubeadm kubectl");
    expect(readFileSync(path.join(root, "etc/apt/sources.list.d/kubernetes.list"), "utf8")).toContain(
      `https://pkgs.k8s.io/core:/stable:/v${version.split(".").slice(0, 2).join(".")}/deb/`,
    );
  });

  it("sets the sysctls kubeadm and Cilium need (CAPH's class: net.ipv4.conf.lxc*.rp_filter = 0)", () => {
    const { status, calls, root } = run();
    expect(status).toBe(0);
    expect(readFileSync(path.join(root, "etc/sysctl.d/99-cilium.conf"), "utf8")).toMatch(/^net\.ipv4\.conf\.lxc\*\.rp_filter = 0$/m);
    expect(readFileSync(path.join(root, "etc/sysctl.d/90-kubernetes.conf"), "utf8")).toContain("net.ipv4.ip_forward = 1");
    expect(calls).toContain("sysctl --system");
    expect(calls).toContain("modprobe br_netfilter");
  });

  it("waits for the apt/dpkg lock before using apt", () => {
    const { status, stderr, calls } = run({ lockHeldPolls: 4 });
    expect(status, stderr).toBe(0);
    expect(stderr).toContain("waiting for the apt/dpkg lock");
    const firstApt = index(calls, "apt-get");
    const fuserCalls = calls.slice(0, firstApt).filter((call) => call.startsWith("fuser"));
    expect(fuserCalls.length).toBe(5); // four polls while held, one that finds it free
  });

  it("gives up on a lock that stays held, loudly and without touching apt", () => {
    const { status, stderr, calls } = run({ lockHeldPolls: 1_000_000, env: { APT_LOCK_TIMEOUT: "1" } });
    expect(status).not.toBe(0);
    expect(stderr).toContain("the apt/dpkg lock is still held after 1s");
    expect(index(calls, "apt-get")).toBe(-1);
  });

  it("retries a failing download and goes on once it succeeds", () => {
    const { status, stderr, calls } = run({ curlFailures: 2 });
    expect(status, stderr).toBe(0);
    expect(calls.filter((call) => call.endsWith(bundleUrl))).toHaveLength(3);
    expect(stderr).toContain("attempt 1 of 3 failed");
  });

  it("stops after the bounded number of attempts, before kubeadm is installed", () => {
    const { status, stderr, calls, root } = run({ curlFailures: 1_000 });
    expect(status).not.toBe(0);
    expect(calls.filter((call) => call.startsWith("curl"))).toHaveLength(3);
    expect(stderr).toContain("giving up after 3 attempts");
    expect(stderr).toMatch(/FAILED \(exit \d+\) at line \d+/);
    expect(calls.some(installsKubelet)).toBe(false);
    expect(existsSync(path.join(root, "usr/bin/kubeadm"))).toBe(false);
  });

  it("refuses a containerd bundle whose checksum does not match", () => {
    const { status, stderr, calls, root } = run({ corruptBundle: true });
    expect(status).not.toBe(0);
    expect(stderr).toContain(`checksum mismatch for ${bundle}`);
    expect(existsSync(path.join(root, "usr/local/bin/containerd"))).toBe(false);
    expect(calls.some(installsKubelet)).toBe(false);
  });

  it("refuses a containerd that is not the pinned version", () => {
    const { status, stderr, calls } = run({ containerdReports: "2.1.0" });
    expect(status).not.toBe(0);
    expect(stderr).toContain(`expected v${containerdVersion}`);
    expect(calls.some(installsKubelet)).toBe(false);
  });

  it("stops before kubelet when containerd does not run", () => {
    const { status, stderr, calls } = run({ containerdDown: true });
    expect(status).not.toBe(0);
    expect(stderr).toContain("containerd is not running");
    expect(calls.some(installsKubelet)).toBe(false);
  });

  it("takes kubeadm out of the way when the installed kubeadm is not the node's version", () => {
    const { status, stderr, root } = run({ kubeadmReports: "v1.0.0" });
    expect(status).not.toBe(0);
    expect(stderr).toContain(`kubeadm reports v1.0.0, expected ${kubernetesVersion}`);
    // CABPK's next runcmd line is `kubeadm join|init ...`: it must not find a kubeadm.
    expect(existsSync(path.join(root, "usr/bin/kubeadm"))).toBe(false);
    expect(existsSync(path.join(root, "usr/bin/kubeadm.disabled-by-install-kubernetes"))).toBe(true);
  });

  it.each([
    [["latest", containerdVersion], "is not a Kubernetes version"],
    [[kubernetesVersion], "is not a containerd version"],
    [[kubernetesVersion, "v1.7"], "is not a containerd version"],
  ])("refuses arguments %j before touching the node", (args, message) => {
    const { status, stderr, calls } = run({ args });
    expect(status).toBe(2);
    expect(stderr).toContain(message);
    expect(calls).toEqual([]);
  });
});

describe("the install script as shipped", () => {
  it("passes shellcheck (Debian's package) as committed and as shipped, as do the scripts that install it", () => {
    const helpers = ["debian-packages", "shellcheck"].map((name) => path.join(repoRoot, "tools", name));
    const result = spawnSync(path.join(repoRoot, "tools", "shellcheck"), [source, script, ...helpers], { encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("pins a containerd 1.x only while tenants stay at or below the last minor that supports it", () => {
    if (catalog.containerd.version.startsWith("1.")) {
      const [major, minor] = catalog.containerd.lastKubernetesMinorForV1.split(".").map(Number);
      for (const version of catalog.tenantKubernetesVersions) {
        const [, tenantMajor, tenantMinor] = /^v(\d+)\.(\d+)\./.exec(version)!.map(Number);
        expect(tenantMajor! < major! || (tenantMajor === major && tenantMinor! <= minor!), version).toBe(true);
      }
    }
  });
});
