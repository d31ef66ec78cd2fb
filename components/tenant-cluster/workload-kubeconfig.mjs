#!/usr/bin/env node
// @ts-check
/**
 * Waits, bounded, until a Cluster API workload cluster is Available, then prints its
 * kubeconfig on stdout (a `command:local:Command` keeps it as a Pulumi secret; only stderr
 * is logged, so every diagnostic goes there and never a credential).
 *
 * Available is the v1beta2 condition CAPI v1.12 computes for a Cluster from
 * InfrastructureReady, ControlPlaneAvailable, WorkersAvailable, RemoteConnectionProbe and
 * TopologyReconciled (sigs.k8s.io/cluster-api@v1.12.10: api/core/v1beta2/cluster_types.go,
 * `ClusterAvailableCondition`; internal/controllers/cluster/cluster_controller_status.go,
 * `setAvailableCondition`). It counts only once CAPI has observed the Cluster's current
 * generation. On timeout the message names each of those conditions (and
 * ControlPlaneInitialized) that is not True, with its status, reason and message.
 *
 * Cluster API writes the Secret `<cluster>-kubeconfig` (key `value`) once the control plane
 * endpoint exists, long before the cluster is Available; it is read only afterwards.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig YAML of the management cluster (required)
 *   TENANT_NAMESPACE       namespace of the Cluster object (required)
 *   TENANT_CLUSTER         name of the Cluster object (required)
 *   WAIT_FOR_READY         "true" (default): wait for Available first; "false": only for the Secret
 *   WAIT_SECONDS           give up after this long (default 1800)
 *   POLL_MILLISECONDS      pause between attempts (default 10000)
 *
 * Exit codes: 0 printed; 1 gave up or the management API refused (401/403, …);
 * 2 missing or invalid environment.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  HttpError,
  KubeconfigError,
  NetworkError,
  kubeconfigSecretName,
  numberFromEnv,
  parseKubeconfig,
  readCluster,
  readKubeconfigSecret,
  requireEnv,
  timeoutUntil,
} from "../kube-client.mjs";

const program = "workload-kubeconfig";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "TENANT_NAMESPACE", "TENANT_CLUSTER"]);
const waitSeconds = numberFromEnv(program, "WAIT_SECONDS", 1800);
const intervalMs = numberFromEnv(program, "POLL_MILLISECONDS", 10_000);
const waitForReadyText = process.env.WAIT_FOR_READY ?? "";
if (!["", "true", "false"].includes(waitForReadyText)) {
  console.error(`${program}: WAIT_FOR_READY must be true or false (got ${JSON.stringify(waitForReadyText)})`);
  process.exit(2);
}
const waitForReady = waitForReadyText !== "false";

const namespace = env.TENANT_NAMESPACE;
const cluster = env.TENANT_CLUSTER;
const secret = `${namespace}/${kubeconfigSecretName(cluster)}`;

/** The condition `up` waits for. */
const availableCondition = "Available";
/**
 * What the timeout message reports besides Available: the conditions CAPI v1.12 summarises
 * into it (setAvailableCondition), and ControlPlaneInitialized, which says whether kubeadm
 * init ever finished.
 */
const reportedConditions = [
  availableCondition,
  "InfrastructureReady",
  "ControlPlaneInitialized",
  "ControlPlaneAvailable",
  "WorkersAvailable",
  "RemoteConnectionProbe",
  "TopologyReconciled",
];

/**
 * @typedef {{ type: string, status?: string, reason?: string, message?: string, observedGeneration?: number }} Condition
 */

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** @param {string | undefined} text */
function oneLine(text) {
  const line = (text ?? "").replace(/\s*\n\s*/g, " ").trim();
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}

/** @param {Condition} condition */
function describeCondition(condition) {
  const reason = condition.reason ? `, reason ${condition.reason}` : "";
  const message = oneLine(condition.message);
  return `${condition.type}: ${condition.status ?? "Unknown"}${reason}${message ? `: ${message}` : ""}`;
}

/**
 * Whether the Cluster is Available at its current generation, and if not, why: one line per
 * reported condition that is not True (or not reported at all).
 * @param {Record<string, unknown>} object
 * @returns {{ ready: boolean, problems: string[] }}
 */
function readiness(object) {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const status = isRecord(object.status) ? object.status : {};
  const generation = typeof metadata.generation === "number" ? metadata.generation : 0;
  /** @type {Condition[]} */
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.filter((condition) => isRecord(condition) && typeof condition.type === "string")
    : [];
  const byType = new Map(conditions.map((condition) => [condition.type, condition]));
  const problems = reportedConditions.flatMap((type) => {
    const condition = byType.get(type);
    if (!condition) return [`${type}: not reported yet`];
    return condition.status === "True" ? [] : [describeCondition(condition)];
  });
  const available = byType.get(availableCondition);
  const observed = typeof status.observedGeneration === "number" ? status.observedGeneration : 0;
  const availableObserved = typeof available?.observedGeneration === "number" ? available.observedGeneration : observed;
  if (available?.status === "True" && (observed < generation || availableObserved < generation)) {
    problems.unshift(`${availableCondition}: True, but for generation ${Math.min(observed, availableObserved)}; CAPI has not yet observed generation ${generation}`);
  }
  return { ready: available?.status === "True" && observed >= generation && availableObserved >= generation, problems };
}

/** @type {import("../kube-client.mjs").KubeTarget} */
let management;
try {
  management = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
} catch (error) {
  console.error(`${program}: ${error instanceof KubeconfigError ? error.message : "MANAGEMENT_KUBECONFIG cannot be read"}`);
  process.exit(2);
}

/**
 * The waiting state for an error that may pass (unreachable API, 5xx, 429); exits 1 for any
 * other (401, 403, …), naming what was read and the RBAC it needs.
 * @param {unknown} error
 * @param {string} what e.g. "Secret tenant-a/alpha-kubeconfig"
 * @param {string} rbac e.g. "get secrets"
 */
function transientOrExit(error, what, rbac) {
  if (error instanceof NetworkError) {
    return `the management API at ${management.server} cannot be reached (${error.message})`;
  }
  if (error instanceof HttpError && (error.status >= 500 || error.status === 429)) {
    return `the management API answered ${error.message}`;
  }
  const detail = error instanceof Error ? error.message : String(error);
  console.error(`${program}: cannot read ${what} for cluster ${namespace}/${cluster}: ${detail}. Check the management kubeconfig's credentials and their RBAC (${rbac} in ${namespace}).`);
  process.exit(1);
}

const describeCommand = `kubectl -n ${namespace} describe cluster ${cluster}`;
const objectsCommand = `kubectl -n ${namespace} get hetznercluster,kubeadmcontrolplane,machinedeployments,machines`;

const deadline = Date.now() + waitSeconds * 1000;
let last = "";
let ready = !waitForReady;
/** @type {string[]} */
let problems = [];
for (;;) {
  let state = "";
  if (!ready) {
    try {
      const object = await readCluster(management, namespace, cluster, timeoutUntil(deadline));
      if (object === undefined) {
        problems = ["the Cluster does not exist"];
      } else {
        ({ ready, problems } = readiness(object));
      }
      state = ready ? "" : problems.join("; ");
      if (ready) {
        console.error(`${program}: cluster ${namespace}/${cluster} is ${availableCondition}`);
      }
    } catch (error) {
      state = transientOrExit(error, `Cluster ${namespace}/${cluster}`, "get clusters.cluster.x-k8s.io");
    }
  }
  if (ready) {
    try {
      const kubeconfig = await readKubeconfigSecret(management, namespace, cluster, timeoutUntil(deadline));
      if (kubeconfig !== undefined) {
        console.error(`${program}: read the kubeconfig of cluster ${namespace}/${cluster} from Secret ${secret}`);
        await new Promise((resolve) => process.stdout.write(kubeconfig, resolve));
        process.exit(0);
      }
      state = "the Secret does not exist yet";
    } catch (error) {
      state = transientOrExit(error, `Secret ${secret}`, "get secrets");
    }
  }
  const waitingFor = ready ? `Secret ${secret}` : `cluster ${namespace}/${cluster} to become ${availableCondition}`;
  if (state !== last) {
    console.error(`${program}: waiting for ${waitingFor}: ${state}`);
    last = state;
  }
  if (Date.now() + intervalMs > deadline) {
    if (!ready) {
      console.error(
        `${program}: gave up after ${waitSeconds} s waiting for cluster ${namespace}/${cluster} to become ${availableCondition}; conditions not True:\n` +
          problems.map((problem) => `  - ${problem}\n`).join("") +
          `Check the cluster with \`${describeCommand}\` and its events, then \`${objectsCommand}\` and the CAPI/CAPH controller logs. ` +
          `The cluster stays as it is; run \`pulumi up\` again to wait again.`,
      );
    } else {
      console.error(
        `${program}: gave up after ${waitSeconds} s waiting for Secret ${secret}, the kubeconfig Cluster API writes for cluster ${namespace}/${cluster} once its control plane endpoint exists; last state: ${state}. ` +
          `Check the cluster with \`${describeCommand}\` (conditions InfrastructureReady and ControlPlaneInitialized, and the events), ` +
          `then its infrastructure and control plane objects (\`${objectsCommand}\`) and the CAPI/CAPH controller logs.`,
      );
    }
    process.exit(1);
  }
  await sleep(intervalMs);
}
