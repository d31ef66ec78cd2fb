#!/usr/bin/env node
// @ts-check
/**
 * Backs up the fleet: every Cluster API object of the management cluster, with `clusterctl move
 * --to-directory`, into a new directory that `clusterctl move --from-directory` restores into a
 * rebuilt management cluster (docs/operations.md, "Lost the whole management cluster").
 *
 * What clusterctl writes (sigs.k8s.io/cluster-api@v1.12.10: cmd/clusterctl/client/cluster/):
 * one JSON file per object, `<Kind>_<namespace>_<name>.yaml`, mode 0600 (mover.go,
 * backupTargetObject): each Cluster with everything it owns (topology objects, Machines, the CA,
 * etcd, service-account and kubeconfig Secrets KCP generated), the ClusterClass a Cluster uses and
 * its templates even from another namespace (objectgraph.go, Discovery), kinds whose CRD is
 * labelled `clusterctl.cluster.x-k8s.io/move(-hierarchy)` (CAAPH's HelmChartProxy) and objects
 * labelled so (each tenant's `hcloud` Secret). So the directory holds every tenant's Hetzner token
 * and CA keys: it is created 0700, and it belongs encrypted, off the management cluster.
 *
 * clusterctl backs up one namespace per run (the kubeconfig context's, or `--namespace`:
 * cmd/clusterctl/client/move.go, toDirectory), so it runs once for each namespace that holds a
 * Cluster or a ClusterClass. Each run pauses that namespace's Clusters and ClusterClasses while it
 * reads them and resumes them after (mover.go, toDirectory); Clusters still provisioning or a
 * Machine without a node make it refuse (mover.go, checkProvisioningCompleted).
 *
 * Nothing here prints the kubeconfig or any object's content.
 */
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { clearTimeout, setTimeout } from "node:timers";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { HttpError, KubeconfigError, NetworkError, kubeRequest, parseKubeconfig } from "../components/kube-client.mjs";
import { stackOutputs } from "../infra/model/contract/outputs.ts";

const program = "fleet-backup";
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const usage = `usage: npm run backup -- --to <new directory> [--stack <stack> | --kubeconfig <file>] [--clusterctl <path>] [--timeout <seconds>]

Writes every Cluster API object of the management cluster (Clusters, their topology objects and
Secrets, the ClusterClass and its templates, HelmChartProxies, the tenants' hcloud Secrets) into
<new directory> with clusterctl move --to-directory, one run per namespace that holds a Cluster or
a ClusterClass. Restore: clusterctl move --from-directory <directory> --to-kubeconfig <file>.

  --to <dir>          where to write; must not exist yet (or be empty). Created with mode 0700: it
                      holds every tenant's Hetzner token and cluster CA keys. Encrypt it.
  --stack <stack>     read the management kubeconfig from the stack output managementKubeconfig
                      (pulumi stack output --show-secrets; kept in a 0600 temp file, then removed)
  --kubeconfig <file> use this kubeconfig instead (its current context)
  --clusterctl <path> the clusterctl binary (default: $CLUSTERCTL, else the one tools/capi-toolchain
                      built for the catalog's Cluster API version)
  --timeout <seconds> give up after this long (default 600); the API is probed first (15 s)

Exit codes: 0 backed up; 1 refused or failed (nothing usable written); 2 bad usage.`;

const clusterctlHint = "build it with tools/capi-toolchain build (4-10 minutes), or pass --clusterctl <path>";

/** @param {string} message */
function log(message) {
  console.error(`${program}: ${message}`);
}

/**
 * @param {string} message
 * @param {number} [code]
 * @returns {never}
 */
function fail(message, code = 1) {
  log(message);
  cleanup();
  process.exit(code);
}

/** Temp dirs to remove on exit (the kubeconfig read from the stack). @type {string[]} */
const temporary = [];
function cleanup() {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.once("exit", cleanup);
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => {
    cleanup();
    process.exit(1);
  });
}

/**
 * @param {string[]} argv
 * @returns {{ to: string, stack?: string, kubeconfig?: string, clusterctl?: string, timeoutSeconds: number }}
 */
function parseArgs(argv) {
  /** @type {Record<string, string>} */
  const values = {};
  const known = ["--to", "--stack", "--kubeconfig", "--clusterctl", "--timeout"];
  for (let index = 0; index < argv.length; index += 1) {
    const word = argv[index] ?? "";
    const [flag = "", inline] = word.split(/=(.*)/s, 2);
    if (!known.includes(flag)) fail(`unknown argument ${JSON.stringify(word)}\n${usage}`, 2);
    const value = inline ?? argv[(index += 1)];
    if (value === undefined || value === "") fail(`${flag} needs a value\n${usage}`, 2);
    values[flag] = value;
  }
  if (!values["--to"]) fail(`--to <new directory> is required\n${usage}`, 2);
  if (values["--stack"] && values["--kubeconfig"]) fail("give --stack or --kubeconfig, not both", 2);
  if (!values["--stack"] && !values["--kubeconfig"]) fail(`no management cluster: give --stack <stack> or --kubeconfig <file>\n${usage}`, 2);
  const timeoutSeconds = Number(values["--timeout"] ?? "600");
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) fail(`--timeout must be a positive number of seconds (got ${JSON.stringify(values["--timeout"])})`, 2);
  return {
    to: path.resolve(values["--to"] ?? ""),
    ...(values["--stack"] ? { stack: values["--stack"] } : {}),
    ...(values["--kubeconfig"] ? { kubeconfig: path.resolve(values["--kubeconfig"]) } : {}),
    ...(values["--clusterctl"] ? { clusterctl: values["--clusterctl"] } : {}),
    timeoutSeconds,
  };
}

/**
 * Runs a program, bounded; resolves with its stdout (never printed here).
 * @param {string} file
 * @param {string[]} args
 * @param {number} timeoutMs
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, timedOut: boolean }>}
 */
function run(file, args, timeoutMs, env = process.env) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: "SIGTERM", maxBuffer: 64 * 1024 * 1024, env, cwd: repoRoot }, (error, stdout, stderr) => {
      const failed = /** @type {(Error & { code?: unknown, killed?: boolean, signal?: string }) | null} */ (error);
      if (failed && typeof failed.code === "string") {
        resolve({ code: null, stdout: "", stderr: `${file}: ${failed.code}`, timedOut: false });
        return;
      }
      resolve({ code: failed ? (typeof failed.code === "number" ? failed.code : null) : 0, stdout, stderr, timedOut: Boolean(failed?.killed) });
    });
  });
}

/** The catalog's Cluster API version and where tools/capi-toolchain keeps its build, from its `pins`. */
async function toolchainPins() {
  const pins = await run(path.join(repoRoot, "tools", "capi-toolchain"), ["pins"], 30_000);
  if (pins.code !== 0) fail(`tools/capi-toolchain pins failed: ${pins.stderr.trim().slice(-500)}`);
  const version = /^version: (\S+)$/m.exec(pins.stdout)?.[1];
  const cache = /^cache: (.+)$/m.exec(pins.stdout)?.[1];
  if (!version || !cache) fail("tools/capi-toolchain pins printed no version or cache directory");
  return { version, cache };
}

/**
 * The clusterctl to run, checked to be the catalog's Cluster API minor (the move format and the
 * contract check follow the version: cmd/clusterctl/client/cluster/inventory.go, CheckCAPIContract).
 * @param {string | undefined} given
 */
async function locateClusterctl(given) {
  const { version, cache } = await toolchainPins();
  const candidate = given ?? process.env.CLUSTERCTL ?? path.join(cache, "bin", "clusterctl");
  if (!existsSync(candidate)) {
    fail(`no clusterctl at ${candidate}: ${clusterctlHint}`);
  }
  const reported = await run(candidate, ["version", "-o", "short"], 30_000, { ...process.env, CLUSTERCTL_DISABLE_VERSIONCHECK: "true" });
  const actual = reported.stdout.trim();
  if (reported.code !== 0 || !/^v\d+\.\d+\.\d+/.test(actual)) fail(`${candidate} is not a working clusterctl (${reported.stderr.trim().slice(-300) || `exit ${reported.code}`}): ${clusterctlHint}`);
  const minor = (/** @type {string} */ v) => v.split(".").slice(0, 2).join(".");
  if (minor(actual) !== minor(version)) fail(`${candidate} is clusterctl ${actual}; the fleet runs Cluster API ${version}: use the same minor (${clusterctlHint})`);
  return { path: candidate, version: actual };
}

/**
 * The management kubeconfig file: the given one, or the stack output written to a 0600 file in a
 * private temp dir (removed on exit).
 * @param {{ stack?: string, kubeconfig?: string }} options
 */
async function kubeconfigFile(options) {
  if (options.kubeconfig) {
    if (!existsSync(options.kubeconfig)) fail(`--kubeconfig ${options.kubeconfig}: no such file`);
    return options.kubeconfig;
  }
  const stack = options.stack ?? "";
  const output = await run(process.env.PULUMI ?? "pulumi", ["stack", "output", stackOutputs.managementKubeconfig, "--show-secrets", "--stack", stack], 120_000, {
    ...process.env,
    PULUMI_SKIP_UPDATE_CHECK: "true",
  });
  if (output.code !== 0 || output.stdout.trim() === "") {
    // pulumi's stderr names the stack or the login problem; it holds no secret.
    fail(`could not read the stack output ${stackOutputs.managementKubeconfig} of stack ${stack}${output.timedOut ? " (pulumi did not answer within 120 s)" : ""}: ${output.stderr.trim().slice(-500) || "empty output"}`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), `${program}-`));
  temporary.push(dir);
  chmodSync(dir, 0o700);
  const file = path.join(dir, "management.kubeconfig");
  writeFileSync(file, output.stdout, { mode: 0o600 });
  return file;
}

/**
 * Items of a cluster-wide list, or undefined when the API does not serve it.
 * @param {import("../components/kube-client.mjs").KubeTarget} target
 * @param {string} apiPath
 * @param {number} timeoutMs
 * @returns {Promise<{ metadata?: { name?: string, namespace?: string }, spec?: Record<string, unknown> }[] | undefined>}
 */
async function listAll(target, apiPath, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let response = await kubeRequest(target, "GET", apiPath, { timeoutMs });
  // 429 "storage is (re)initializing": a CRD's storage just after it was created; wait, bounded.
  while (response.status === 429 && Date.now() < deadline) {
    await sleep(500);
    response = await kubeRequest(target, "GET", apiPath, { timeoutMs: Math.max(1000, deadline - Date.now()) });
  }
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new HttpError(response.status, response.reason);
  const items = /** @type {{ items?: unknown }} */ (response.json).items;
  return Array.isArray(items) ? items : [];
}

/**
 * What the backup must hold for each Cluster and does not: the Cluster, its infrastructure cluster
 * and control plane (spec.infrastructureRef/controlPlaneRef, v1beta2), and its Secrets (label
 * cluster.x-k8s.io/cluster-name: the CA, etcd, service-account, proxy and kubeconfig Secrets
 * KCP generates). clusterctl skips an object silently when an owner of it is not moved
 * (cmd/clusterctl/client/cluster/mover.go, getMoveSequence), so this is checked, not assumed.
 * @param {import("../components/kube-client.mjs").KubeTarget} target
 * @param {{ metadata?: { name?: string, namespace?: string }, spec?: Record<string, unknown> }[]} clusters
 * @param {string[]} files
 * @returns {Promise<string[]>}
 */
async function missingFromBackup(target, clusters, files) {
  const missing = [];
  const has = (/** @type {string} */ kind, /** @type {string} */ namespace, /** @type {string} */ name) => files.includes(`${kind}_${namespace}_${name}.yaml`);
  for (const cluster of clusters) {
    const namespace = cluster.metadata?.namespace ?? "";
    const name = cluster.metadata?.name ?? "";
    const expected = [["Cluster", name]];
    for (const field of ["infrastructureRef", "controlPlaneRef"]) {
      const ref = /** @type {{ kind?: unknown, name?: unknown } | undefined} */ (cluster.spec?.[field]);
      if (typeof ref?.kind === "string" && typeof ref.name === "string" && ref.name !== "") expected.push([ref.kind, ref.name]);
    }
    const secrets = await listAll(target, `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/cluster-name=${name}`)}`, 15_000);
    for (const secret of secrets ?? []) expected.push(["Secret", secret.metadata?.name ?? ""]);
    for (const [kind = "", object = ""] of expected) if (!has(kind, namespace, object)) missing.push(`${kind} ${namespace}/${object}`);
  }
  return missing;
}

/**
 * Refuses a target directory that is not new (or empty): clusterctl move --from-directory restores
 * every file in the directory it is given.
 * @param {string} dir
 */
function checkDirectory(dir) {
  if (existsSync(dir)) {
    if (readdirSync(dir).length > 0) fail(`--to ${dir} exists and is not empty: clusterctl move --from-directory restores every file in it, so a backup needs a directory of its own`);
  } else if (!existsSync(path.dirname(dir))) {
    fail(`--to ${dir}: its parent directory does not exist`);
  }
}

/** @param {string} dir */
function prepareDirectory(dir) {
  if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * One `clusterctl move --to-directory` for a namespace; its log goes to stderr.
 * @param {string} clusterctl
 * @param {string[]} args
 * @param {number} timeoutMs
 * @returns {Promise<void>}
 */
function clusterctlMove(clusterctl, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(clusterctl, args, { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CLUSTERCTL_DISABLE_VERSIONCHECK: "true" } });
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`clusterctl ${args.join(" ")} did not finish within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`clusterctl ${args.join(" ")} failed (${signal ? `killed by ${signal}` : `exit ${code}`})`));
    });
  });
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(usage);
    return;
  }
  const options = parseArgs(argv);
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  checkDirectory(options.to);
  const clusterctl = await locateClusterctl(options.clusterctl);
  const kubeconfig = await kubeconfigFile(options);

  /** @type {import("../components/kube-client.mjs").KubeTarget} */
  let target;
  try {
    target = parseKubeconfig(readFileSync(kubeconfig, "utf8"), options.kubeconfig ? `--kubeconfig ${options.kubeconfig}` : `the stack output ${stackOutputs.managementKubeconfig} of ${options.stack ?? ""}`);
  } catch (error) {
    if (error instanceof KubeconfigError) fail(error.message);
    throw error;
  }

  // What there is to back up, and whether the API answers at all (bounded: no clusterctl retry loop).
  /** @type {{ metadata?: { name?: string, namespace?: string }, spec?: Record<string, unknown> }[] | undefined} */
  let clusters;
  /** @type {{ metadata?: { name?: string, namespace?: string } }[]} */
  let classes;
  try {
    clusters = await listAll(target, "/apis/cluster.x-k8s.io/v1beta2/clusters", 15_000);
    classes = (await listAll(target, "/apis/cluster.x-k8s.io/v1beta2/clusterclasses", 15_000)) ?? [];
  } catch (error) {
    if (error instanceof NetworkError) fail(`the management cluster's API ${target.server} did not answer (${error.message}); nothing was backed up`);
    if (error instanceof HttpError) fail(`the management cluster's API ${target.server} refused to list Clusters: ${error.message}; nothing was backed up`);
    throw error;
  }
  if (clusters === undefined) fail(`${target.server} serves no cluster.x-k8s.io/v1beta2 Clusters: Cluster API is not installed there; nothing was backed up`);
  if (clusters.length === 0) fail(`${target.server} holds no Cluster objects: the fleet is empty, nothing to back up`);
  const namespaces = [...new Set([...clusters, ...classes].map((object) => object.metadata?.namespace ?? ""))].filter(Boolean).sort();

  prepareDirectory(options.to);
  log(`clusterctl ${clusterctl.version}: backing up ${clusters.length} Clusters and ${classes.length} ClusterClasses in ${namespaces.length} namespaces (${namespaces.join(", ")}) to ${options.to}`);
  for (const namespace of namespaces) {
    const left = deadline - Date.now();
    if (left <= 0) fail(`--timeout ${options.timeoutSeconds} s reached before namespace ${namespace}; the directory is incomplete, do not restore it`);
    try {
      await clusterctlMove(clusterctl.path, ["move", "--to-directory", options.to, "--kubeconfig", kubeconfig, "--namespace", namespace], left);
    } catch (error) {
      fail(
        `${error instanceof Error ? error.message : String(error)}\nThe directory is incomplete, do not restore it. If clusterctl was stopped midway, Clusters or ClusterClasses of namespace ${namespace} may still be paused (spec.paused, annotation cluster.x-k8s.io/paused): check with kubectl get clusters -A.`,
      );
    }
  }

  // clusterctl writes 0600 files; make sure, and check that every Cluster made it.
  const files = readdirSync(options.to);
  for (const file of files) chmodSync(path.join(options.to, file), 0o600);
  const missing = await missingFromBackup(target, clusters, files);
  if (missing.length > 0) {
    fail(
      `clusterctl left out ${missing.join(", ")}: the directory is incomplete, do not restore it. clusterctl moves an object only once every owner it references is moved; the ownerReference to a deleted owner (e.g. the topology's <cluster>-shim Secret, until the garbage collector removes the reference) keeps an object out. Check ownerReferences with kubectl get -o yaml, then back up again.`,
    );
  }
  /** @type {Record<string, number>} */
  const byKind = {};
  for (const file of files) {
    const kind = file.split("_")[0] ?? "?";
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  console.log(
    `backed up ${files.length} objects of ${clusters.length} Clusters to ${options.to} (mode 0700; it holds tenant tokens and CA keys: encrypt it): ${Object.entries(byKind)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, count]) => `${count} ${kind}`)
      .join(", ")}`,
  );
}

main().catch((/** @type {unknown} */ error) => fail(error instanceof Error ? error.message : String(error)));
