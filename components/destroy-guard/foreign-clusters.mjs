#!/usr/bin/env node
// @ts-check
/**
 * The delete of the fleet's destroy guard, which `pulumi destroy` (or removing the whole platform)
 * runs before it deletes anything else of the management stack: stops when Clusters that this
 * stack does not declare use the fleet's ClusterClass, such as tenants Flux created from the fleet
 * repository or the tenants of shard stacks. Cluster API refuses to delete a ClusterClass that
 * Clusters use (sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/clusterclass.go, "ClusterClass
 * cannot be deleted because it is used by Cluster(s)"), so without this the destroy would stop
 * half-way, after Flux, CAREN and Cluster API's own pieces were gone.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig of the management cluster (required)
 *   CLASS_NAMESPACE        namespace of the fleet's ClusterClass (required)
 *   CLASS_NAME             its name (required)
 *   DECLARED_CLUSTERS      JSON list of "namespace/name" of the Clusters this stack declares (required)
 *
 * Exit codes: 0 no other Cluster uses the class (or Cluster API is not installed); 1 some do (the
 * message names them), or the API could not be read; 2 missing or invalid environment.
 */
import { HttpError, KubeconfigError, NetworkError, kubeRequest, parseKubeconfig, requestTimeoutMs, requireEnv } from "../kube-client.mjs";

const program = "destroy-guard";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "CLASS_NAMESPACE", "CLASS_NAME", "DECLARED_CLUSTERS"]);
/** @type {unknown} */
let declaredValue;
try {
  declaredValue = JSON.parse(env.DECLARED_CLUSTERS);
} catch {
  declaredValue = undefined;
}
if (!Array.isArray(declaredValue) || !declaredValue.every((entry) => typeof entry === "string")) {
  console.error(`${program}: DECLARED_CLUSTERS must be a JSON list of "namespace/name" strings`);
  process.exit(2);
}
const declared = new Set(/** @type {string[]} */ (declaredValue));
const classKey = `${env.CLASS_NAMESPACE}/${env.CLASS_NAME}`;

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The ClusterClass a Cluster's topology names, as "namespace/name" (the class namespace defaults to the Cluster's). */
function classOf(/** @type {Record<string, unknown>} */ cluster, /** @type {string} */ namespace) {
  const spec = isRecord(cluster.spec) ? cluster.spec : {};
  const topology = isRecord(spec.topology) ? spec.topology : {};
  const classRef = isRecord(topology.classRef) ? topology.classRef : {};
  if (typeof classRef.name !== "string") return undefined;
  return `${typeof classRef.namespace === "string" && classRef.namespace ? classRef.namespace : namespace}/${classRef.name}`;
}

let items;
try {
  const target = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
  // v1beta2, the version the fleet writes and CAPI v1.12 stores (sigs.k8s.io/cluster-api@v1.12.10: api/core/v1beta2).
  const response = await kubeRequest(target, "GET", "/apis/cluster.x-k8s.io/v1beta2/clusters", { timeoutMs: requestTimeoutMs });
  if (response.status === 404) {
    console.error(`${program}: Cluster API is not installed; no Cluster uses ${classKey}`);
    process.exit(0);
  }
  if (response.status !== 200 || !isRecord(response.json) || !Array.isArray(response.json.items)) {
    throw new HttpError(response.status, response.reason);
  }
  items = response.json.items;
} catch (error) {
  if (error instanceof KubeconfigError || error instanceof NetworkError || error instanceof HttpError) {
    console.error(`${program}: cannot list the Clusters: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

const foreign = items.flatMap((item) => {
  if (!isRecord(item) || !isRecord(item.metadata)) return [];
  const namespace = typeof item.metadata.namespace === "string" ? item.metadata.namespace : "";
  const key = `${namespace}/${typeof item.metadata.name === "string" ? item.metadata.name : ""}`;
  return classOf(item, namespace) === classKey && !declared.has(key) ? [key] : [];
});
if (foreign.length > 0) {
  console.error(
    `${program}: stopped before deleting anything: ${foreign.length} Cluster(s) that this stack does not declare use the ClusterClass ${classKey}: ${foreign.sort().join(", ")} ` +
      `(created by Flux from the fleet repository, or tenants of a shard stack). Cluster API refuses to delete a class in use, so the destroy would stop half-way. ` +
      `Delete those Clusters first (each takes its servers and load balancers with it; docs/operations.md), then run the destroy again.`,
  );
  process.exit(1);
}
console.error(`${program}: no Cluster but this stack's uses ${classKey}`);
