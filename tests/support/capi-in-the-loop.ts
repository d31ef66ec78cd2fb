import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, cpSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse as parseYaml, parseAllDocuments } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { freePort, kubeApiServerBinaries, kubeControllerManagerBinary, startKubeApiServer, type KubeApiServer, type KubeResponse } from "./kube-apiserver";
import type { Registration } from "./pulumi-mocks";
import { carenDiscoveredVariables, readCarenSchemas } from "./caren-variables";
import { carenHandlers, startRecordingExtension, type RecordingExtension } from "./recording-extension";
import { labelAsClusterctlInstalls } from "./clusterctl-install";
import { localServerCertificate } from "./script-harness";
import { repoRoot } from "./stack-files";
import { crdSources, crdsIn, readSource, type Crd, type SourceResult } from "./upstream-crds";

// Cluster API's own controllers and webhooks in the loop: kube-apiserver + etcd (tests/support/kube-apiserver.ts),
// the upstream CRDs, and CAPI's core, kubeadm bootstrap and kubeadm control-plane managers built from
// sigs.k8s.io/cluster-api at the catalog's version (tools/capi-toolchain), all on loopback with random
// ports and one temp dir, always stopped; logs are kept when a test failed.
//
// How the managers are wired, as CAPI's kustomize would on a cluster (sigs.k8s.io/cluster-api@v1.12.10):
// - webhooks: config/webhook/manifests.yaml of each manager, with `clientConfig.service` replaced by
//   `clientConfig.url` https://127.0.0.1:<port><path> and a test CA (kustomize/cert-manager do it there);
// - conversion: the CRDs listed by config/crd/kustomization.yaml's `patches/webhook_in_*.yaml` get
//   `conversion.strategy: Webhook` to their manager's /convert; the kustomization's `labels` (the
//   contract labels of the kubeadm CRDs) are added too;
// - feature gates: ClusterTopology and RuntimeSDK on the core manager, ClusterTopology on the KCP
//   manager (without it, the KCP webhook refuses KubeadmControlPlaneTemplates).
// - optionally (`garbageCollector`), kube-controller-manager from the API server's own version
//   running only its garbage collector, for foreground/background deletion as on a real cluster.

/** The binaries tools/capi-toolchain builds. */
export interface CapiBinaries {
  capiManager: string;
  kubeadmBootstrapManager: string;
  kubeadmControlPlaneManager: string;
  clusterctl: string;
  /** e.g. sigs.k8s.io/cluster-api@v1.12.10 */
  version: string;
  /** The module's source directory (in the Go module cache): webhook manifests and CRDs are read from it. */
  moduleDir: string;
  /** "built <date> with <go> in <n>s" */
  buildInfo: string;
}

const capiToolchain = path.join(repoRoot, "tools", "capi-toolchain");

/** Builds the managers at the catalog's CAPI version if needed (first run: minutes) and returns their paths. */
export function capiBinaries(timeoutMs: number, version: string = catalog.clusterApi.version): Promise<CapiBinaries> {
  return new Promise((resolve, reject) => {
    const child = spawn(capiToolchain, ["paths", version], { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs, killSignal: "SIGTERM" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code !== 0) {
        reject(new Error(`tools/capi-toolchain paths ${version} failed (${signal ? `killed by ${signal}` : `exit ${code}`}):\n${stderr.slice(-3000)}`));
        return;
      }
      const vars = Object.fromEntries(
        stdout
          .split("\n")
          .filter((line) => line.includes("="))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      const need = (key: string): string => {
        const value = vars[key];
        if (!value) throw new Error(`tools/capi-toolchain paths printed no ${key}`);
        return value;
      };
      try {
        resolve({
          capiManager: need("CAPI_MANAGER"),
          kubeadmBootstrapManager: need("KUBEADM_BOOTSTRAP_MANAGER"),
          kubeadmControlPlaneManager: need("KUBEADM_CONTROL_PLANE_MANAGER"),
          clusterctl: need("CLUSTERCTL"),
          version: need("CAPI_VERSION"),
          moduleDir: need("CAPI_MODULE_DIR"),
          buildInfo: need("BUILD_INFO"),
        });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/** A Kubernetes object as the tests handle it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** One CAPI manager: which binary, which CRD groups it converts, where its webhook manifests are. */
interface ManagerSpec {
  name: "capi" | "kubeadm-bootstrap" | "kubeadm-control-plane";
  binary: (binaries: CapiBinaries) => string;
  /** Directory of the manager's config/ in the module. */
  configDir: string;
  featureGates: string;
}

const managerSpecs: ManagerSpec[] = [
  { name: "capi", binary: (b) => b.capiManager, configDir: "config", featureGates: "ClusterTopology=true,RuntimeSDK=true" },
  { name: "kubeadm-bootstrap", binary: (b) => b.kubeadmBootstrapManager, configDir: "bootstrap/kubeadm/config", featureGates: "" },
  { name: "kubeadm-control-plane", binary: (b) => b.kubeadmControlPlaneManager, configDir: "controlplane/kubeadm/config", featureGates: "ClusterTopology=true" },
];

interface RunningManager {
  spec: ManagerSpec;
  child: ChildProcess;
  webhookPort: number;
  healthPort: number;
  log: string;
}

/** The running loop. */
export interface CapiInTheLoop {
  api: KubeApiServer;
  capi: CapiBinaries;
  extension: RecordingExtension;
  /** Where CAREN's variable schemas (which the extension publishes) came from, or why they are unavailable. */
  carenSchemas: { via: string } | { unavailable: string };
  sources: SourceResult[];
  /** Names of CRDs installed, and which had a conversion webhook. */
  crds: { installed: number; converted: string[] };
  /** Timings in ms of each start-up phase. */
  timings: Record<string, number>;
  /** Where the managers' logs are (and the kubeconfig they use). */
  logDir: string;
  /** The garbage collector, when started (`garbageCollector` option). */
  garbageCollector?: { version: string; log: string };
  /** The object's REST path (discovery-backed). */
  objectPath(object: Pick<KubeObject, "apiVersion" | "kind" | "metadata">): Promise<string>;
  /** The collection path of a kind in a namespace (or cluster-wide). */
  collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string>;
  /** Server-side apply (strict field validation; `dryRun` to probe admission without a change). */
  apply(object: KubeObject, options?: { dryRun?: boolean; manager?: string; force?: boolean }): Promise<KubeResponse>;
  get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubeObject | undefined>;
  list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<KubeObject[]>;
  /** Tails of the managers' logs (for failure messages). */
  logs(): string;
  /** Stops everything; with `keepLogs`, copies the logs to a directory that stays and returns it. */
  stop(keepLogs: boolean): Promise<string | undefined>;
}

export interface StartOptions {
  buildTimeoutMs: number;
  /**
   * Also run kube-controller-manager with only its garbage collector (built on first use): without
   * it, ownerReferences cascade nothing and foreground deletion never completes.
   */
  garbageCollector?: boolean;
  /**
   * Label the CRDs the way an install through clusterctl's components processing does
   * (tests/support/clusterctl-install.ts): `clusterctl move` discovers only the kinds whose CRD carries
   * `clusterctl.cluster.x-k8s.io`.
   */
  clusterctlInstall?: boolean;
  /** Called with progress lines. */
  progress?: (line: string) => void;
}

/** A runtime extension in the loop: where CAPI calls it, the CA of its serving certificate, and how to stop it. */
export interface LoopExtension {
  /** https://127.0.0.1:<port> */
  url: string;
  caPem: string;
  stop(): Promise<void>;
  /** Its log's tail, added to the managers' (failure messages). */
  logs?(): string;
}

/** What an extension starter gets: the API server, the managers' kubeconfig (cluster-admin) and the loop's temp dir for its files and log. */
export interface ExtensionContext {
  api: KubeApiServer;
  kubeconfig: string;
  work: string;
  progress: (line: string) => void;
}

/** Starts the runtime extension in CAREN's place, after CAPI's managers and webhooks are up; the loop registers it. */
export type ExtensionStarter<E extends LoopExtension> = (context: ExtensionContext) => Promise<E>;

/** The loop with another extension than the recording one in CAREN's place. */
export type CapiLoopWith<E extends LoopExtension> = Omit<CapiInTheLoop, "extension"> & { extension: E };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const responseMessage = (response: KubeResponse): string =>
  typeof response.json.message === "string" ? response.json.message : JSON.stringify(response.json).slice(0, 600);

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Processes still to kill if the worker exits without stop(). */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Upper bound on a manager's life should the worker die without its exit handler. */
const maxLifetimeSeconds = 3600;

/** `labels` pairs and the CRD names with a conversion-webhook patch, from a config/crd/kustomization.yaml. */
function crdKustomization(dir: string): { labels: Record<string, string>; converted: string[] } {
  const file = path.join(dir, "kustomization.yaml");
  if (!existsSync(file)) return { labels: {}, converted: [] };
  const kustomization = parseYaml(readFileSync(file, "utf8")) as { labels?: { pairs?: Record<string, string> }[]; patches?: { path?: string }[] };
  const labels = Object.assign({}, ...(kustomization.labels ?? []).map((entry) => entry.pairs ?? {})) as Record<string, string>;
  const converted = (kustomization.patches ?? [])
    .map((patch) => patch.path ?? "")
    .filter((patchPath) => /(^|\/)webhook_in_[^/]+\.ya?ml$/.test(patchPath))
    .map((patchPath) => (parseYaml(readFileSync(path.join(dir, patchPath), "utf8")) as { metadata: { name: string } }).metadata.name);
  return { labels, converted };
}

/**
 * Starts kube-apiserver, installs the CRDs, runs the three managers with their webhooks wired,
 * starts the recording extension and registers it, and waits until CAPI discovered it.
 */
export async function startCapiInTheLoop(options: StartOptions): Promise<CapiInTheLoop> {
  return startLoop(options, undefined);
}

/**
 * The same loop with `starter`'s extension in CAREN's place instead of the recording one (e.g. the
 * real CAREN, tests/in-the-loop/caren-in-the-loop.test.ts), registered under the ExtensionConfig name CAREN's
 * chart gives and awaited until CAPI discovered it.
 */
export async function startCapiWithExtension<E extends LoopExtension>(options: StartOptions, starter: ExtensionStarter<E>): Promise<CapiLoopWith<E>> {
  return startLoop(options, starter);
}

async function startLoop(options: StartOptions, starter: undefined): Promise<CapiInTheLoop>;
async function startLoop<E extends LoopExtension>(options: StartOptions, starter: ExtensionStarter<E>): Promise<CapiLoopWith<E>>;
async function startLoop<E extends LoopExtension>(options: StartOptions, starter: ExtensionStarter<E> | undefined): Promise<CapiInTheLoop | CapiLoopWith<E>> {
  const say = options.progress ?? (() => {});
  const timings: Record<string, number> = {};
  let t = Date.now();
  const lap = (name: string) => {
    timings[name] = Date.now() - t;
    t = Date.now();
  };
  // One Go build at a time on a shared machine: kube-apiserver first, then CAPI.
  const kube = await kubeApiServerBinaries(options.buildTimeoutMs);
  lap("kubeApiServerToolchain");
  const capi = await capiBinaries(options.buildTimeoutMs);
  lap("capiToolchain");
  const kcm = options.garbageCollector ? await kubeControllerManagerBinary(options.buildTimeoutMs) : undefined;
  if (kcm) lap("kubeControllerManagerToolchain");

  const prefix = `capi-loop-${randomBytes(4).toString("hex")}`;
  const api = await startKubeApiServer(kube, 90_000, prefix);
  const work = mkdtempSync(path.join(tmpdir(), "capi-loop-work-"));
  const managers: RunningManager[] = [];
  let garbageCollector: ChildProcess | undefined;
  const gcLog = path.join(work, "kube-controller-manager.log");
  let extension: RecordingExtension | E | undefined;
  const stopAll = async (keepLogs: boolean): Promise<string | undefined> => {
    const children = [...managers.map((manager) => manager.child), ...(garbageCollector ? [garbageCollector] : [])];
    for (const child of children) {
      child.kill("SIGTERM");
    }
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await new Promise<void>((resolve) => {
          child.once("exit", () => {
            resolve();
          });
        });
        clearTimeout(killer);
      }
      live.delete(child);
    }
    await extension?.stop();
    await api.stop();
    let kept: string | undefined;
    if (keepLogs) {
      kept = mkdtempSync(path.join(tmpdir(), "capi-in-the-loop-logs-"));
      for (const file of readdirSync(work).filter((name) => name.endsWith(".log"))) cpSync(path.join(work, file), path.join(kept, file));
    }
    rmSync(work, { recursive: true, force: true });
    return kept;
  };
  try {
    // The API server's CA: startKubeApiServer keeps it in its temp dir, named after the prefix.
    const apiDirs = readdirSync(tmpdir()).filter((name) => name.startsWith(`${prefix}-`));
    if (apiDirs.length !== 1) throw new Error(`expected one temp dir ${prefix}-*, found ${apiDirs.length}`);
    const apiCaPem = readFileSync(path.join(tmpdir(), apiDirs[0]!, "server-ca.crt"), "utf8");
    lap("kubeApiServerStart");

    const served = new Map<string, { plural: string; namespaced: boolean }>();
    const discover = async (apiVersion: string) => {
      const list = await api.request("GET", apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
      for (const resource of (list.json.resources ?? []) as { name: string; kind: string; namespaced: boolean }[]) {
        if (!resource.name.includes("/")) served.set(`${apiVersion}:${resource.kind}`, { plural: resource.name, namespaced: resource.namespaced });
      }
    };
    const kindOf = async (apiVersion: string, kind: string) => {
      if (!served.has(`${apiVersion}:${kind}`)) await discover(apiVersion);
      const found = served.get(`${apiVersion}:${kind}`);
      if (!found) throw new Error(`${apiVersion} ${kind} is not served`);
      return found;
    };
    const collectionPath = async (apiVersion: string, kind: string, namespace?: string) => {
      const found = await kindOf(apiVersion, kind);
      const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      return `${base}${found.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? "default")}` : ""}/${found.plural}`;
    };
    const objectPath = async (object: Pick<KubeObject, "apiVersion" | "kind" | "metadata">) =>
      `${await collectionPath(object.apiVersion, object.kind, object.metadata.namespace)}/${encodeURIComponent(object.metadata.name ?? "")}`;
    const must = (response: KubeResponse, what: string, allowed: number[] = []) => {
      if (response.status >= 300 && !allowed.includes(response.status)) throw new Error(`${what}: HTTP ${response.status}: ${responseMessage(response)}`);
      return response;
    };

    // The managers' identity: a ServiceAccount bound to cluster-admin, with a TokenRequest token
    // (the API server's static token is its own; token requests need no controller-manager).
    must(await api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "capi-system" } }), "namespace", [409]);
    must(await api.request("POST", "/api/v1/namespaces/capi-system/serviceaccounts", { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "capi-managers" } }), "ServiceAccount", [409]);
    must(
      await api.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "capi-managers" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: "capi-managers", namespace: "capi-system" }],
      }),
      "ClusterRoleBinding",
      [409],
    );
    const tokenResponse = must(
      await api.request("POST", "/api/v1/namespaces/capi-system/serviceaccounts/capi-managers/token", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: maxLifetimeSeconds },
      }),
      "TokenRequest",
    );
    const token = (tokenResponse.json.status as { token: string }).token;
    const kubeconfig = path.join(work, "kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "loop", cluster: { server: api.url, "certificate-authority-data": Buffer.from(apiCaPem).toString("base64") } }],
        users: [{ name: "capi", user: { token } }],
        contexts: [{ name: "loop", context: { cluster: "loop", user: "capi" } }],
        "current-context": "loop",
      }),
    );

    // Webhook serving certificate (one test CA for the three managers).
    const webhookTls = localServerCertificate("capi-webhooks");
    const certDir = path.join(work, "webhook-certs");
    cpSync(path.join(webhookTls.dir, "server.crt"), path.join(certDir, "tls.crt"));
    cpSync(path.join(webhookTls.dir, "server.key"), path.join(certDir, "tls.key"));
    rmSync(webhookTls.dir, { recursive: true, force: true });
    const caBundle = Buffer.from(webhookTls.caPem).toString("base64");
    const ports = new Map<ManagerSpec["name"], { webhook: number; health: number }>();
    for (const spec of managerSpecs) ports.set(spec.name, { webhook: await freePort(), health: await freePort() });
    const webhookUrl = (name: ManagerSpec["name"], urlPath: string) => `https://127.0.0.1:${ports.get(name)!.webhook}${urlPath}`;

    // CRDs: every source of tests/support/upstream-crds.ts (the same order: module, data copy, unverified),
    // the CAPI ones per manager with their kustomization's labels and conversion webhooks.
    const sources: SourceResult[] = [];
    for (const source of crdSources) sources.push(readSource(source));
    const capiSource = crdSources.find((source) => source.module === "sigs.k8s.io/cluster-api");
    const crds: Crd[] = [];
    const converted: string[] = [];
    for (const result of sources) {
      if (!("crds" in result)) continue;
      if (result.source !== capiSource) {
        crds.push(...result.crds);
        continue;
      }
      for (const spec of managerSpecs) {
        const crdDir = path.join(capi.moduleDir, spec.configDir, "crd");
        const { labels, converted: names } = crdKustomization(crdDir);
        for (const crd of crdsIn(path.join(crdDir, "bases")).crds) {
          const copy = structuredClone(crd) as Crd & { metadata: { labels?: Record<string, string> }; spec: { conversion?: unknown } };
          copy.metadata.labels = { ...copy.metadata.labels, ...labels };
          if (names.includes(crd.metadata.name)) {
            copy.spec.conversion = {
              strategy: "Webhook",
              webhook: { conversionReviewVersions: ["v1", "v1beta1"], clientConfig: { url: webhookUrl(spec.name, "/convert"), caBundle } },
            };
            converted.push(crd.metadata.name);
          }
          crds.push(copy);
        }
      }
    }
    if (options.clusterctlInstall) labelAsClusterctlInstalls(crds, sources);
    for (const crd of crds) {
      must(await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict", crd), `CRD ${crd.metadata.name}`, [409]);
    }
    const crdDeadline = Date.now() + 120_000;
    for (const crd of crds) {
      for (;;) {
        const got = await api.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
        const conditions = (got.json.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        if (conditions.some((c) => c.type === "Established" && c.status === "True")) break;
        if (Date.now() > crdDeadline) throw new Error(`CRD ${crd.metadata.name} not Established: ${JSON.stringify(conditions)}`);
        await sleep(200);
      }
    }
    say(`${crds.length} CRDs installed (${converted.length} with conversion webhooks)`);
    lap("crds");

    // The garbage collector, started after the CRDs so that its first discovery sees them (it
    // rediscovers every 30 s: k8s.io/kubernetes@v1.35.4 cmd/kube-controller-manager/app/core.go,
    // garbageCollectorController). Only that controller runs (its name in
    // cmd/kube-controller-manager/names/controller_names.go; `garbagecollector` is its alias), with
    // the managers' kubeconfig; --secure-port=0 serves nothing at all (no port, loopback or not).
    if (kcm) {
      const fd = openSync(gcLog, "a");
      garbageCollector = spawn(
        "timeout",
        [
          "--kill-after=10",
          String(maxLifetimeSeconds),
          kcm.path,
          `--kubeconfig=${kubeconfig}`,
          "--controllers=garbage-collector-controller",
          "--leader-elect=false",
          "--secure-port=0",
          "--v=2",
        ],
        { cwd: work, stdio: ["ignore", fd, fd] },
      );
      closeSync(fd);
      live.add(garbageCollector);
    }

    // The managers.
    for (const spec of managerSpecs) {
      const port = ports.get(spec.name)!;
      const log = path.join(work, `${spec.name}.log`);
      const fd = openSync(log, "a");
      const args = [
        `--kubeconfig=${kubeconfig}`,
        `--webhook-port=${port.webhook}`,
        `--webhook-cert-dir=${certDir}`,
        `--health-addr=127.0.0.1:${port.health}`,
        "--diagnostics-address=0", // metrics off (controller-runtime: "0" disables the server)
        "--leader-elect=false",
        ...(spec.featureGates ? [`--feature-gates=${spec.featureGates}`] : []),
      ];
      const child = spawn("timeout", ["--kill-after=10", String(maxLifetimeSeconds), spec.binary(capi), ...args], {
        cwd: work,
        stdio: ["ignore", fd, fd],
        // tools/capi-toolchain builds them with this one-line overlay: the webhook server on loopback only.
        env: { ...process.env, CAPI_WEBHOOK_HOST: "127.0.0.1" },
      });
      closeSync(fd);
      live.add(child);
      managers.push({ spec, child, webhookPort: port.webhook, healthPort: port.health, log });
    }
    const logs = () =>
      [
        ...managers.map((m) => `--- ${m.spec.name} log (tail) ---\n${tail(m.log)}`),
        ...(garbageCollector ? [`--- kube-controller-manager log (tail) ---\n${tail(gcLog)}`] : []),
        ...(extension && "logs" in extension && typeof extension.logs === "function" ? [extension.logs()] : []),
      ].join("\n");
    const readyDeadline = Date.now() + 180_000;
    for (const manager of managers) {
      for (;;) {
        if (manager.child.exitCode !== null || manager.child.signalCode !== null) {
          throw new Error(`${manager.spec.name} exited (${manager.child.exitCode ?? manager.child.signalCode}) before it was ready\n${logs()}`);
        }
        const ready = await fetch(`http://127.0.0.1:${manager.healthPort}/readyz`).then(
          (response) => response.status,
          () => 0,
        );
        if (ready === 200) break;
        if (Date.now() > readyDeadline) throw new Error(`${manager.spec.name} not ready within 180 s\n${logs()}`);
        await sleep(250);
      }
    }
    say("managers ready");
    lap("managersReady");

    // Their admission webhooks, from the module's manifests, pointed at loopback.
    for (const spec of managerSpecs) {
      const file = path.join(capi.moduleDir, spec.configDir, "webhook", "manifests.yaml");
      for (const document of parseAllDocuments(readFileSync(file, "utf8"))) {
        const configuration = document.toJS() as (KubeObject & { webhooks?: { clientConfig: { service?: { path?: string } } }[] }) | null;
        if (!configuration?.kind.endsWith("WebhookConfiguration")) continue;
        configuration.metadata.name = `${spec.name}-${configuration.metadata.name ?? ""}`;
        for (const webhook of configuration.webhooks ?? []) {
          webhook.clientConfig = { url: webhookUrl(spec.name, webhook.clientConfig.service?.path ?? "/"), caBundle } as typeof webhook.clientConfig;
        }
        must(await api.request("POST", `/apis/admissionregistration.k8s.io/v1/${configuration.kind.toLowerCase()}s`, configuration), `${configuration.kind} ${configuration.metadata.name}`);
      }
    }
    lap("webhooks");

    // The recording extension, registered the way CAREN's chart registers CAREN.
    // It publishes CAREN's variable schemas, rebuilt from CAREN's CRDs (none when unavailable).
    // (Or the starter's extension, e.g. the real CAREN, which publishes its schemas itself.)
    const carenSchemas = readCarenSchemas();
    const started = starter
      ? await starter({ api, kubeconfig, work, progress: say })
      : await startRecordingExtension(carenHandlers(), "crds" in carenSchemas ? carenDiscoveredVariables(carenSchemas.crds) : new Map());
    extension = started;
    const extensionConfig: KubeObject = {
      apiVersion: "runtime.cluster.x-k8s.io/v1beta2",
      kind: "ExtensionConfig",
      metadata: { name: catalog.caren.chart.chart },
      spec: { clientConfig: { url: started.url, caBundle: Buffer.from(started.caPem).toString("base64") } },
    };
    // The webhooks take a moment to be called by the API server; retry while they are not reachable yet.
    const webhookDeadline = Date.now() + 60_000;
    for (;;) {
      const created = await api.request("POST", "/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs?fieldValidation=Strict", extensionConfig);
      if (created.status < 300 || created.status === 409) break;
      if (Date.now() > webhookDeadline) throw new Error(`ExtensionConfig: HTTP ${created.status}: ${responseMessage(created)}\n${logs()}`);
      await sleep(500);
    }
    const discoveredDeadline = Date.now() + 120_000;
    for (;;) {
      const got = await api.request("GET", `/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs/${catalog.caren.chart.chart}`);
      const conditions = ((got.json.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? []);
      if (conditions.some((c) => c.type === "Discovered" && c.status === "True")) break;
      if (Date.now() > discoveredDeadline) throw new Error(`ExtensionConfig not Discovered: ${JSON.stringify(conditions)}\n${logs()}`);
      await sleep(500);
    }
    say("extension discovered");
    lap("extensionDiscovered");

    // The garbage collector works once its graph has synced: a ConfigMap owned by a deleted ConfigMap goes.
    if (garbageCollector) {
      const configMaps = "/api/v1/namespaces/capi-system/configmaps";
      const owner = must(await api.request("POST", configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "gc-probe-owner" } }), "ConfigMap gc-probe-owner");
      const ownerUid = (owner.json.metadata as { uid: string }).uid;
      must(
        await api.request("POST", configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "gc-probe-dependent", ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "gc-probe-owner", uid: ownerUid }] },
        }),
        "ConfigMap gc-probe-dependent",
      );
      must(await api.request("DELETE", `${configMaps}/gc-probe-owner`, { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Background" }), "DELETE gc-probe-owner");
      const gcDeadline = Date.now() + 180_000;
      for (;;) {
        if (garbageCollector.exitCode !== null || garbageCollector.signalCode !== null) {
          throw new Error(`kube-controller-manager exited (${garbageCollector.exitCode ?? garbageCollector.signalCode})\n${logs()}`);
        }
        if ((await api.request("GET", `${configMaps}/gc-probe-dependent`)).status === 404) break;
        if (Date.now() > gcDeadline) throw new Error(`the garbage collector did not delete a dependent of a deleted owner within 180 s\n${logs()}`);
        await sleep(250);
      }
      say("garbage collector synced");
      lap("garbageCollectorSynced");
    }

    const apply = async (object: KubeObject, applyOptions: { dryRun?: boolean; manager?: string; force?: boolean } = {}) => {
      const query = new URLSearchParams({ fieldManager: applyOptions.manager ?? "pulumi-kubernetes", fieldValidation: "Strict", force: String(applyOptions.force ?? true) });
      if (applyOptions.dryRun) query.set("dryRun", "All");
      return api.request("PATCH", `${await objectPath(object)}?${query.toString()}`, object, "application/apply-patch+yaml");
    };
    const get = async (apiVersion: string, kind: string, name: string, namespace?: string) => {
      const response = await api.request("GET", await objectPath({ apiVersion, kind, metadata: { name, namespace } }));
      if (response.status === 404) return undefined;
      return must(response, `GET ${kind} ${namespace ?? ""}/${name}`).json as unknown as KubeObject;
    };
    const list = async (apiVersion: string, kind: string, namespace?: string, labelSelector?: string) => {
      const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
      const response = must(await api.request("GET", `${await collectionPath(apiVersion, kind, namespace)}${query}`), `LIST ${kind}`);
      return (response.json.items ?? []) as KubeObject[];
    };
    // The recording extension without a starter, the starter's otherwise (the overloads say which).
    return {
      api,
      capi,
      extension: started as RecordingExtension & E,
      carenSchemas: "crds" in carenSchemas ? { via: carenSchemas.via } : { unavailable: carenSchemas.unavailable },
      sources,
      crds: { installed: crds.length, converted },
      timings,
      logDir: work,
      ...(kcm ? { garbageCollector: { version: kcm.version, log: gcLog } } : {}),
      objectPath,
      collectionPath,
      apply,
      get,
      list,
      logs,
      stop: stopAll,
    };
  } catch (error) {
    const kept = await stopAll(true);
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n(managers' logs kept in ${kept ?? "?"})`);
  }
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, describe?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${describe ? `\n${await describe()}` : ""}`);
    await sleep(250);
  }
}

/** A condition of an object's status (v1beta2 `status.conditions`). */
export function conditionOf(object: KubeObject | undefined, type: string): { type: string; status: string; reason?: string; message?: string } | undefined {
  const conditions = ((object?.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? []);
  return conditions.find((condition) => condition.type === type);
}

// The program's objects as the tests apply them (server-side apply, in the program's dependency order).

/** Helm releases are upstream charts (no chart controller runs here). */
export const outOfScope = new Set(["kubernetes:helm.sh/v3:Release"]);

/** A `…Patch` resource (server-side apply of a few fields under its own field manager). */
export const isPatch = (registration: Registration) => /^kubernetes:[^:]+:\w+Patch$/.test(registration.type);

/**
 * A read (`<Resource>.get(name, id)`: an object something else created, e.g. CAPI's kubeconfig
 * Secret) is not declared by the program: its inputs are empty, so there is nothing to apply.
 */
export const isRead = (registration: Registration) => (registration as { readId?: string }).readId !== undefined || !("apiVersion" in registration.inputs);

/** Creates every namespace the registrations' objects live in (charts and the operator create them on a real cluster). */
export async function createNamespacesOf(loop: Pick<CapiInTheLoop, "api">, registrations: Registration[]): Promise<void> {
  for (const namespace of new Set(registrations.map((r) => objectOf(r).metadata.namespace).filter((n): n is string => n !== undefined))) {
    await loop.api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  }
}

/** The object a registration declares; an unnamed one gets a name the way the provider autonames. */
export function objectOf(registration: Registration): KubeObject {
  const object = structuredClone(registration.inputs) as unknown as KubeObject;
  if (!object.metadata.name) {
    const suffix = createHash("sha256").update(registration.urn).digest("hex").slice(0, 8);
    object.metadata = { ...object.metadata, name: `${registration.name}-${suffix}` };
  }
  return object;
}

/** Kubernetes registrations in dependency order (each after everything it waits for; ties keep program order). */
export function dependencyOrder(registrations: Registration[]): Registration[] {
  const kubernetes = registrations.filter((r) => r.type.startsWith("kubernetes:") && !outOfScope.has(r.type) && !isRead(r));
  const byUrn = new Map(registrations.map((r) => [r.urn, r]));
  const ordered: Registration[] = [];
  const done = new Set<string>();
  const visit = (registration: Registration, visiting: Set<string>) => {
    if (done.has(registration.urn) || visiting.has(registration.urn)) return;
    visiting.add(registration.urn);
    for (const urn of registration.dependencies) {
      const dependency = byUrn.get(urn);
      if (dependency) visit(dependency, visiting);
    }
    visiting.delete(registration.urn);
    done.add(registration.urn);
    if (kubernetes.includes(registration)) ordered.push(registration);
  };
  for (const registration of kubernetes) visit(registration, new Set());
  return ordered;
}
