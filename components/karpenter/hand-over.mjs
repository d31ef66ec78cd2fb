#!/usr/bin/env node
// @ts-check
/**
 * Hands a tenant's Karpenter pools to karpenter-provider-cluster-api, once per MachineDeployment:
 * puts the provider's member label on it and scales it to zero. The label cannot come through the
 * Cluster's topology: CAPI copies topology labels onto the Machine template too, and the provider
 * takes a new server only from a Machine without that label
 * (sigs.k8s.io/karpenter-provider-cluster-api@v0.2.0: pkg/cloudprovider/cloudprovider.go,
 * `pollForUnclaimedMachineInMachineDeploymentWithTimeout`; pkg/providers/machinedeployment/machinedeployment.go,
 * `List`). Zero, because CAPI's webhook gives a new MachineDeployment without replicas or
 * autoscaler bounds one replica (sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/machinedeployment.go,
 * `calculateMachineDeploymentReplicas`), a server Karpenter would not own. A MachineDeployment that
 * already has the label is left alone: its replicas are Karpenter's from then on.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig YAML of the management cluster (required)
 *   TENANT_NAMESPACE       namespace of the Cluster object (required)
 *   TENANT_CLUSTER         name of the Cluster object (required)
 *   POOLS                  the Karpenter pools' names, comma-separated (required)
 *   WAIT_SECONDS           give up when a pool's MachineDeployment does not exist after this long (default 600)
 *   POLL_MILLISECONDS      pause between attempts (default 5000)
 *
 * Prints one line per pool on stderr. Exit codes: 0 done; 1 gave up or the API refused; 2 missing
 * or invalid environment.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { KubeconfigError, kubeRequest, numberFromEnv, parseKubeconfig, requireEnv, timeoutUntil } from "../kube-client.mjs";

const program = "karpenter-hand-over";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "TENANT_NAMESPACE", "TENANT_CLUSTER", "POOLS"]);
const waitSeconds = numberFromEnv(program, "WAIT_SECONDS", 600);
const intervalMs = numberFromEnv(program, "POLL_MILLISECONDS", 5000);
// The provider's member label (pkg/providers/providers.go, `NodePoolMemberLabel`); the model's karpenterMemberLabel.
const memberLabel = "node.cluster.x-k8s.io/karpenter-member";
const pools = env.POOLS.split(",").map((pool) => pool.trim()).filter(Boolean);

/** @type {import("../kube-client.mjs").KubeTarget} */
let management;
try {
  management = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
} catch (error) {
  console.error(`${program}: ${error instanceof KubeconfigError ? error.message : String(error)}`);
  process.exit(2);
}

const collection = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${encodeURIComponent(env.TENANT_NAMESPACE)}/machinedeployments`;
const deadline = Date.now() + waitSeconds * 1000;

/**
 * The pool's MachineDeployment, by the labels CAPI gives it (cluster name, topology pool name).
 * @param {string} pool
 */
async function machineDeploymentOf(pool) {
  const selector = `cluster.x-k8s.io/cluster-name=${env.TENANT_CLUSTER},topology.cluster.x-k8s.io/deployment-name=${pool}`;
  const response = await kubeRequest(management, "GET", `${collection}?labelSelector=${encodeURIComponent(selector)}`, { timeoutMs: timeoutUntil(deadline) });
  if (response.status !== 200) throw new Error(`listing MachineDeployments ${selector}: HTTP ${response.status} ${response.reason}`);
  const items = /** @type {{ items?: { metadata: { name: string, labels?: Record<string, string> } }[] }} */ (response.json).items ?? [];
  return items[0];
}

try {
  for (const pool of pools) {
    let md = await machineDeploymentOf(pool);
    while (!md) {
      if (Date.now() > deadline) {
        console.error(`${program}: no MachineDeployment of pool ${pool} of Cluster ${env.TENANT_NAMESPACE}/${env.TENANT_CLUSTER} after ${waitSeconds} s; CAPI creates it from the Cluster's topology`);
        process.exit(1);
      }
      await sleep(intervalMs);
      md = await machineDeploymentOf(pool);
    }
    if (md.metadata.labels?.[memberLabel] !== undefined) {
      console.error(`${program}: ${pool}: MachineDeployment ${md.metadata.name} is Karpenter's already; left alone`);
      continue;
    }
    const patch = { metadata: { labels: { [memberLabel]: "" } }, spec: { replicas: 0 } };
    const response = await kubeRequest(management, "PATCH", `${collection}/${encodeURIComponent(md.metadata.name)}`, { timeoutMs: timeoutUntil(deadline), body: patch, contentType: "application/merge-patch+json" });
    if (response.status !== 200) throw new Error(`handing MachineDeployment ${md.metadata.name} to Karpenter: HTTP ${response.status} ${response.reason}`);
    console.error(`${program}: ${pool}: MachineDeployment ${md.metadata.name} handed to Karpenter (label ${memberLabel}, replicas 0)`);
  }
} catch (error) {
  console.error(`${program}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
