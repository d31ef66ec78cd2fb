#!/usr/bin/env node
// @ts-check
/**
 * Prints the kubeconfig of a Cluster API workload cluster on stdout (a
 * `command:local:Command` keeps it as a Pulumi secret; only stderr is logged, so every
 * diagnostic goes there and never a credential).
 *
 * Cluster API writes the Secret `<cluster>-kubeconfig` (key `value`) once the control plane
 * endpoint exists, so this waits, bounded, while the Secret is not there yet.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig YAML of the management cluster (required)
 *   TENANT_NAMESPACE       namespace of the Cluster object (required)
 *   TENANT_CLUSTER         name of the Cluster object (required)
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
  readKubeconfigSecret,
  requireEnv,
  timeoutUntil,
} from "./lib/kube-client.mjs";

const program = "workload-kubeconfig";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "TENANT_NAMESPACE", "TENANT_CLUSTER"]);
const waitSeconds = numberFromEnv(program, "WAIT_SECONDS", 1800);
const intervalMs = numberFromEnv(program, "POLL_MILLISECONDS", 10_000);

const namespace = env.TENANT_NAMESPACE;
const cluster = env.TENANT_CLUSTER;
const secret = `${namespace}/${kubeconfigSecretName(cluster)}`;

/** @type {import("./lib/kube-client.mjs").KubeTarget} */
let management;
try {
  management = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
} catch (error) {
  console.error(`${program}: ${error instanceof KubeconfigError ? error.message : "MANAGEMENT_KUBECONFIG cannot be read"}`);
  process.exit(2);
}

const deadline = Date.now() + waitSeconds * 1000;
let last = "";
for (;;) {
  let state;
  try {
    const kubeconfig = await readKubeconfigSecret(management, namespace, cluster, timeoutUntil(deadline));
    if (kubeconfig !== undefined) {
      console.error(`${program}: read the kubeconfig of cluster ${namespace}/${cluster} from Secret ${secret}`);
      await new Promise((resolve) => process.stdout.write(kubeconfig, resolve));
      process.exit(0);
    }
    state = "the Secret does not exist yet";
  } catch (error) {
    if (error instanceof NetworkError) {
      state = `the management API at ${management.server} cannot be reached (${error.message})`;
    } else if (error instanceof HttpError && (error.status >= 500 || error.status === 429)) {
      state = `the management API answered ${error.message}`;
    } else {
      const detail = error instanceof Error ? error.message : String(error);
      console.error(`${program}: cannot read Secret ${secret} for cluster ${namespace}/${cluster}: ${detail}. Check the management kubeconfig's credentials and their RBAC (get secrets in ${namespace}).`);
      process.exit(1);
    }
  }
  if (state !== last) {
    console.error(`${program}: waiting for Secret ${secret}: ${state}`);
    last = state;
  }
  if (Date.now() + intervalMs > deadline) {
    console.error(
      `${program}: gave up after ${waitSeconds} s waiting for Secret ${secret}, the kubeconfig Cluster API writes for cluster ${namespace}/${cluster} once its control plane endpoint exists; last state: ${state}. ` +
        `Check the cluster with \`kubectl -n ${namespace} describe cluster ${cluster}\` (conditions InfrastructureReady and ControlPlaneInitialized, and the events), ` +
        `then its infrastructure and control plane objects (\`kubectl -n ${namespace} get hetznercluster,kubeadmcontrolplane,machines\`) and the CAPI/CAPH controller logs.`,
    );
    process.exit(1);
  }
  await sleep(intervalMs);
}
