import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes, generateKeyPairSync } from "node:crypto";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { URL } from "node:url";
import { stringify } from "yaml";
import { freePort as takePort } from "./ports";
import { localServerCertificate } from "./script-harness";
import { repoRoot } from "./stack-files";

// A real kube-apiserver + etcd for tests: built from Go modules by tools/kube-apiserver-toolchain
// (cached outside the repo), started on loopback with ports from freePort() and a temp dir, always cleaned up.

/** The binaries and their versions, as `tools/kube-apiserver-toolchain paths` prints them. */
export interface KubeApiServerBinaries {
  kubeApiserver: string;
  etcd: string;
  /** e.g. k8s.io/kubernetes@v1.35.4 */
  kubeApiserverVersion: string;
  /** e.g. go.etcd.io/etcd/server/v3@v3.6.5 */
  etcdVersion: string;
}

/** What one API request returned; `warnings` are the server's Warning headers. */
export interface KubeResponse {
  status: number;
  json: Record<string, unknown>;
  warnings: string[];
}

/** A running API server. */
export interface KubeApiServer {
  url: string;
  /** What the scripts' client (components/kube-client.mjs) needs to reach it as an admin. */
  target: { server: string; cluster: string; ca: string; token: string; insecure: false };
  binaries: KubeApiServerBinaries;
  request(method: string, apiPath: string, body?: unknown, contentType?: string): Promise<KubeResponse>;
  stop(): Promise<void>;
}

const toolchainScript = path.join(repoRoot, "tools", "kube-apiserver-toolchain");

/** An admin kubeconfig (token, embedded CA) for a running API server, as the scripts' environment takes it. */
export function adminKubeconfig(server: KubeApiServer): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "test", cluster: { server: server.target.server, "certificate-authority-data": Buffer.from(server.target.ca).toString("base64") } }],
    users: [{ name: "admin", user: { token: server.target.token } }],
    contexts: [{ name: "test", context: { cluster: "test", user: "admin" } }],
    "current-context": "test",
  });
}

/**
 * Runs the toolchain script and resolves its stdout. With `echo`, its progress (stderr) also
 * goes to our stderr, so a first-run build is visible; otherwise stderr only ends up in errors.
 */
export function runToolchain(args: string[], timeoutMs: number, echo = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(toolchainScript, args, { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs, killSignal: "SIGTERM" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (echo) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `tools/kube-apiserver-toolchain ${args.join(" ")} failed (${signal ? `killed by ${signal} after ${timeoutMs} ms` : `exit ${code}`}):\n${stderr.slice(-3000)}`,
          ),
        );
    });
  });
}

/** Builds kube-apiserver and etcd if needed (first run: minutes) and returns their paths. */
export async function kubeApiServerBinaries(timeoutMs: number): Promise<KubeApiServerBinaries> {
  const vars = Object.fromEntries(
    (await runToolchain(["paths"], timeoutMs, true))
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  const need = (key: string): string => {
    const value = vars[key];
    if (!value) throw new Error(`tools/kube-apiserver-toolchain paths printed no ${key}`);
    return value;
  };
  return {
    kubeApiserver: need("KUBE_APISERVER"),
    etcd: need("ETCD"),
    kubeApiserverVersion: need("KUBE_APISERVER_VERSION"),
    etcdVersion: need("ETCD_VERSION"),
  };
}

/** A binary of the toolchain (built on first use) and its version, as `tools/kube-apiserver-toolchain <piece>` prints them. */
async function toolchainBinary(piece: string, variable: string, timeoutMs: number): Promise<{ path: string; version: string }> {
  const vars = Object.fromEntries(
    (await runToolchain([piece], timeoutMs, true))
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  const binary = vars[variable];
  const version = vars[`${variable}_VERSION`];
  if (!binary || !version) throw new Error(`tools/kube-apiserver-toolchain ${piece} printed no ${variable} or no ${variable}_VERSION`);
  return { path: binary, version };
}

/** kube-controller-manager from the same wrapper and version as the API server. */
export function kubeControllerManagerBinary(timeoutMs: number): Promise<{ path: string; version: string }> {
  return toolchainBinary("controller-manager", "KUBE_CONTROLLER_MANAGER", timeoutMs);
}

/** kube-scheduler from the same wrapper and version as the API server. */
export function kubeSchedulerBinary(timeoutMs: number): Promise<{ path: string; version: string }> {
  return toolchainBinary("scheduler", "KUBE_SCHEDULER", timeoutMs);
}

/** A Go program built with its own go.mod (`tools/kube-apiserver-toolchain install`), e.g. kwok or the cluster-api-operator. */
export async function installedBinary(packageAtVersion: string, name: string, timeoutMs: number): Promise<{ path: string; version: string }> {
  const output = await runToolchain(["install", packageAtVersion, name], timeoutMs, true);
  const binary = /^BINARY=(.+)$/m.exec(output)?.[1];
  const version = /^VERSION=(.+)$/m.exec(output)?.[1];
  if (!binary || !version) throw new Error(`tools/kube-apiserver-toolchain install ${packageAtVersion} ${name} printed no BINARY or no VERSION`);
  return { path: binary, version };
}

/** Stops processes in turn: SIGTERM, then SIGKILL after 5 s; resolves when each has exited. */
export async function halt(children: readonly ChildProcess[]): Promise<void> {
  const exited = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          child.once("exit", () => {
            resolve();
          });
        });
  for (const child of children) {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited(child);
    clearTimeout(killer);
  }
}

/** A loopback port for a test server: see tests/support/ports.ts (per-worker blocks outside the ephemeral range). */
export function freePort(): Promise<number> {
  return takePort();
}

function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Processes and dirs still to clean up if the worker exits without stop() (a crash, a timeout). */
const live = new Set<{ children: ChildProcess[]; dir: string }>();
process.once("exit", () => {
  for (const { children, dir } of live) {
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Upper bound on how long a server may outlive a test worker that was killed hard (no exit handler). */
const maxLifetimeSeconds = 3600;

/** Starts (with fresh ports each) when etcd or kube-apiserver could not bind a port anyway. */
const maxStartAttempts = 3;

/** The log's line saying a port was taken, if it has one. */
function addressInUse(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  return text
    .split("\n")
    .find((line) => line.includes("address already in use"))
    ?.trim()
    .slice(0, 400);
}

/**
 * Starts etcd and kube-apiserver on loopback (ports from freePort()) in a new temp dir and waits
 * (at most `readyTimeoutMs`) for /readyz. Should one still find its port taken, both start again
 * on new ports (at most `maxStartAttempts` starts, each retry logged to stderr). Authentication
 * is a random static token in system:masters; authorization is RBAC, as on a real cluster.
 */
export async function startKubeApiServer(
  binaries: KubeApiServerBinaries,
  readyTimeoutMs = 90_000,
  tempPrefix = "kube-apiserver",
  /** Serve with a certificate from this CA and trust client certificates from that one (as k3s with the program's PKI). */
  pki?: { serverCa: { certPem: string; keyPem: string }; clientCaCertPem: string },
  /** More kube-apiserver flags (e.g. `--egress-selector-config-file`, tests/support/service-egress.ts). */
  extraArgs: readonly string[] = [],
): Promise<KubeApiServer> {
  const tls = localServerCertificate(tempPrefix);
  const dir = tls.dir;
  if (pki) {
    writeFileSync(path.join(dir, "pki-server-ca.crt"), pki.serverCa.certPem);
    writeFileSync(path.join(dir, "pki-server-ca.key"), pki.serverCa.keyPem);
    writeFileSync(path.join(dir, "client-ca.crt"), pki.clientCaCertPem);
    // Re-issue the serving certificate (same key and SAN) from the given CA.
    execFileSync("openssl", ["x509", "-req", "-in", "server.csr", "-CA", "pki-server-ca.crt", "-CAkey", "pki-server-ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "server.ext"], { cwd: dir, stdio: "pipe" });
    tls.caPem = pki.serverCa.certPem;
  }
  const entry = { children: [] as ChildProcess[], dir };
  live.add(entry);
  const token = randomBytes(24).toString("hex");
  writeFileSync(path.join(dir, "tokens.csv"), `${token},conformance-admin,conformance-admin,"system:masters"\n`);
  // Service account tokens need a signing key even though nothing here uses them.
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "sec1", format: "pem" }));

  const start = (name: string, binary: string, args: string[]): ChildProcess => {
    // Truncated per start, so a retry looks only at its own output.
    const log = openSync(path.join(dir, `${name}.log`), "w");
    // `timeout` bounds an orphan's life should this worker die without running its exit handler.
    const child = spawn("timeout", ["--kill-after=10", String(maxLifetimeSeconds), binary, ...args], {
      cwd: dir,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    entry.children.push(child);
    return child;
  };
  let url = "";
  const launch = async (): Promise<{ etcd: ChildProcess; apiserver: ChildProcess }> => {
    const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    url = `https://127.0.0.1:${securePort}`;
    const etcd = start("etcd", binaries.etcd, [
      "--name=conformance",
      `--data-dir=${path.join(dir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=conformance=http://127.0.0.1:${etcdPeer}`,
      "--listen-metrics-urls=",
      "--unsafe-no-fsync", // a throwaway store: durability buys nothing, fsyncs cost seconds
      "--log-level=warn",
    ]);
    const apiserver = start("kube-apiserver", binaries.kubeApiserver, [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${securePort}`,
      `--cert-dir=${path.join(dir, "certs")}`,
      `--tls-cert-file=${path.join(dir, "server.crt")}`,
      `--tls-private-key-file=${path.join(dir, "server.key")}`,
      `--token-auth-file=${path.join(dir, "tokens.csv")}`,
      ...(pki ? [`--client-ca-file=${path.join(dir, "client-ca.crt")}`] : []),
      "--authorization-mode=RBAC",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${path.join(dir, "sa.key")}`,
      `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
      "--service-cluster-ip-range=10.96.0.0/16",
      // No controller-manager runs, so no namespace ever gets its default ServiceAccount.
      "--disable-admission-plugins=ServiceAccount",
      "--enable-priority-and-fairness=false",
      "--profiling=false",
      "--v=0",
      ...extraArgs,
    ]);
    return { etcd, apiserver };
  };
  let { etcd, apiserver } = await launch();

  const request = async (method: string, apiPath: string, body?: unknown, contentType = "application/json"): Promise<KubeResponse> => {
    const headers: Record<string, string> = { Accept: "application/json", Authorization: `Bearer ${token}` };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers["Content-Type"] = contentType;
    // The scripts' client (hard timeout on every request); an ES module, so imported dynamically.
    const { httpRequest } = await import("../../components/kube-client.mjs");
    const response = await httpRequest(new URL(`${url}${apiPath}`), {
      method,
      headers,
      body: payload,
      timeoutMs: 30_000,
      tls: { ca: tls.caPem },
    });
    const warning = response.headers.warning;
    const warnings = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning];
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(response.body) as Record<string, unknown>;
    } catch {
      json = { raw: response.body.slice(0, 500) };
    }
    return { status: response.status, json, warnings };
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await halt([apiserver, etcd]);
    live.delete(entry);
    rmSync(dir, { recursive: true, force: true });
  };

  const logs = () =>
    `--- etcd log (tail) ---\n${tail(path.join(dir, "etcd.log"))}\n--- kube-apiserver log (tail) ---\n${tail(path.join(dir, "kube-apiserver.log"))}`;
  const deadline = Date.now() + readyTimeoutMs;
  let last = "not tried";
  let attempt = 1;
  for (;;) {
    const exited = ([["etcd", etcd], ["kube-apiserver", apiserver]] as const).find(([, child]) => child.exitCode !== null || child.signalCode !== null);
    if (exited) {
      const [name, child] = exited;
      const taken = attempt < maxStartAttempts ? addressInUse(path.join(dir, `${name}.log`)) : undefined;
      if (taken !== undefined) {
        attempt++;
        process.stderr.write(`startKubeApiServer: ${name} could not bind its port (${taken}); starting etcd and kube-apiserver again on new ports (start ${attempt} of ${maxStartAttempts})\n`);
        await halt([apiserver, etcd]);
        entry.children.length = 0;
        // etcd may have initialised its data dir with the old peer URL.
        rmSync(path.join(dir, "etcd"), { recursive: true, force: true });
        ({ etcd, apiserver } = await launch());
        continue;
      }
      const retried = attempt > 1 ? ` (start ${attempt} of ${maxStartAttempts})` : "";
      const message = `${name} exited (${child.exitCode ?? child.signalCode}) before the API server was ready${retried}\n${logs()}`;
      await stop();
      throw new Error(message);
    }
    try {
      const ready = await request("GET", "/readyz");
      if (ready.status === 200) break;
      last = `HTTP ${ready.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      const message = `kube-apiserver not ready within ${readyTimeoutMs} ms (last /readyz: ${last})\n${logs()}`;
      await stop();
      throw new Error(message);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, binaries, request, stop, target: { server: url, cluster: "test", ca: tls.caPem, token, insecure: false } };
}

/**
 * Leaves of `sent` that the server's answer lacks or changed: what a real apply would have
 * pruned or rewritten silently (strict validation already rejects unknown fields; this also
 * catches a schema that drops or normalises a value). Secret `stringData` is write-only.
 */
export function lostLeaves(sent: unknown, answer: unknown, at = ""): string[] {
  if (at === ".stringData") return [];
  if (Array.isArray(sent)) {
    if (!Array.isArray(answer)) return [at || "."];
    return sent.flatMap((item, index) => lostLeaves(item, answer[index], `${at}[${index}]`));
  }
  if (typeof sent === "object" && sent !== null) {
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return [at || "."];
    const record = answer as Record<string, unknown>;
    return Object.entries(sent).flatMap(([key, value]) => lostLeaves(value, record[key], `${at}.${key}`));
  }
  return sent === answer ? [] : [`${at}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(answer)}`];
}
