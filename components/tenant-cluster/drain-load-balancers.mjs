#!/usr/bin/env node
// @ts-check
/**
 * Deletes every `type: LoadBalancer` Service of a Cluster API workload cluster and waits,
 * bounded, until Hetzner has removed their load balancers. It is the `delete` command of a
 * `command:local:Command` that Pulumi deletes before the tenant's Cluster object: CAREN's
 * BeforeClusterDelete load-balancer cleanup may not fire, and a load balancer the hcloud
 * CCM created outlives the cluster (and keeps costing) unless its Service goes first.
 *
 * How "removed" is known: the hcloud CCM keeps the finalizer
 * `service.kubernetes.io/load-balancer-cleanup` on a Service until it has deleted the
 * Service's Hetzner load balancer, so a Service that has vanished means its load balancer
 * is gone. With HCLOUD_TOKEN the script also asks Hetzner for load balancers labelled
 * `hcloud-ccm/service-uid` with one of the Services' UIDs until there are none.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig YAML of the management cluster (required)
 *   TENANT_NAMESPACE       namespace of the Cluster object (required)
 *   TENANT_CLUSTER         name of the Cluster object (required)
 *   WORKLOAD_KUBECONFIG    stored workload kubeconfig, used only when the management API
 *                          cannot be reached (optional)
 *   HCLOUD_TOKEN           the tenant's Hetzner project token, to confirm (optional)
 *   HCLOUD_ENDPOINT        Hetzner API (default https://api.hetzner.cloud/v1)
 *   DRAIN_WAIT_SECONDS     give up after this long (default 600)
 *   POLL_MILLISECONDS      pause between polls (default 5000)
 *   CAPI_FLEET_LB_DRAIN    `skip` skips the drain with a warning; load balancers may be
 *                          orphaned. Escape hatch: `CAPI_FLEET_LB_DRAIN=skip pulumi destroy`
 *
 * Exit codes: 0 drained, nothing to drain, or skipped; 1 gave up or was refused (the
 * destroy stops before the Cluster is deleted); 2 missing or invalid environment.
 * Everything is written to stderr; stdout stays empty.
 */
import { URL, URLSearchParams } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import {
  HttpError,
  KubeconfigError,
  NetworkError,
  httpRequest,
  kubeRequest,
  kubeconfigSecretName,
  numberFromEnv,
  parseKubeconfig,
  readKubeconfigSecret,
  requireEnv,
  statusReason,
  timeoutUntil,
} from "../kube-client.mjs";

const program = "drain-load-balancers";
const escapeHatch = "CAPI_FLEET_LB_DRAIN=skip pulumi destroy";
const uidLabel = "hcloud-ccm/service-uid";

/** @typedef {import("../kube-client.mjs").KubeTarget} KubeTarget */
/**
 * @typedef {object} TrackedService
 * @property {string} namespace
 * @property {string} name
 * @property {string} uid
 * @property {string[]} ingress IPs and hostnames from status.loadBalancer.ingress
 * @property {boolean} deleting has a deletionTimestamp
 */
/** @typedef {{ id: string, name: string, ip: string }} HetznerLoadBalancer */

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
  process.exit(code);
}

const drainSetting = process.env.CAPI_FLEET_LB_DRAIN ?? "";
if (drainSetting === "skip") {
  const cluster = `${process.env.TENANT_NAMESPACE ?? "?"}/${process.env.TENANT_CLUSTER ?? "?"}`;
  log("*************************************************************************************");
  log(`WARNING: CAPI_FLEET_LB_DRAIN=skip: NOT deleting the LoadBalancer Services of cluster ${cluster}.`);
  log("Hetzner load balancers created for them may be ORPHANED in the tenant's Hetzner project and keep costing money.");
  log(`Check with: hcloud load-balancer list --selector '${uidLabel}' (in the tenant's project) and delete leftovers.`);
  log("*************************************************************************************");
  process.exit(0);
}
if (drainSetting !== "") {
  fail(`CAPI_FLEET_LB_DRAIN must be unset or "skip" (got ${JSON.stringify(drainSetting)})`, 2);
}

const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "TENANT_NAMESPACE", "TENANT_CLUSTER"]);
const waitSeconds = numberFromEnv(program, "DRAIN_WAIT_SECONDS", 600);
const intervalMs = numberFromEnv(program, "POLL_MILLISECONDS", 5000);
const hcloudToken = process.env.HCLOUD_TOKEN ?? "";
const hcloudEndpoint = (process.env.HCLOUD_ENDPOINT || "https://api.hetzner.cloud/v1").replace(/\/+$/, "");
const namespace = env.TENANT_NAMESPACE;
const clusterName = env.TENANT_CLUSTER;
const cluster = `${namespace}/${clusterName}`;
const secret = `${namespace}/${kubeconfigSecretName(clusterName)}`;
const deadline = Date.now() + waitSeconds * 1000;

const ccmCheck = "kubectl -n kube-system get pods -l app.kubernetes.io/name=hcloud-cloud-controller-manager";
const workloadAccess = `clusterctl get kubeconfig ${clusterName} -n ${namespace}`;

/**
 * @param {string} variable
 * @param {string} text
 * @returns {KubeTarget}
 */
function kubeconfigFrom(variable, text) {
  try {
    return parseKubeconfig(text, variable);
  } catch (error) {
    return fail(error instanceof KubeconfigError ? error.message : `${variable} cannot be read`, variable === "MANAGEMENT_KUBECONFIG" ? 2 : 1);
  }
}

/** @returns {never} */
function failNothingDeleted(/** @type {string} */ why) {
  return fail(
    `${why} Nothing was deleted in Hetzner by this step, and the Cluster ${cluster} was NOT deleted (Pulumi stops the destroy before it). ` +
      `Fix access and re-run \`pulumi destroy\`, or check the tenant's Hetzner project for load balancers of this cluster ` +
      `(\`hcloud load-balancer list --selector '${uidLabel}'\`), delete them, and run \`${escapeHatch}\`.`,
  );
}

/**
 * Step a: the workload kubeconfig, read fresh from the management cluster; the stored copy
 * only when the management API cannot be reached. Undefined when the Secret does not exist.
 * @returns {Promise<KubeTarget | undefined>}
 */
async function workloadTarget() {
  const management = kubeconfigFrom("MANAGEMENT_KUBECONFIG", env.MANAGEMENT_KUBECONFIG);
  const stored = process.env.WORKLOAD_KUBECONFIG ?? "";
  let last = "";
  for (;;) {
    /** @type {string} */
    let problem;
    try {
      const text = await readKubeconfigSecret(management, namespace, clusterName, timeoutUntil(deadline));
      if (text === undefined) {
        return undefined;
      }
      return kubeconfigFrom(`Secret ${secret}`, text);
    } catch (error) {
      if (error instanceof NetworkError || (error instanceof HttpError && (error.status >= 500 || error.status === 429))) {
        problem = `the management API at ${management.server} cannot be reached (${error.message})`;
      } else {
        const detail = error instanceof Error ? error.message : String(error);
        return failNothingDeleted(`cannot read Secret ${secret} of cluster ${cluster} from the management API: ${detail}.`);
      }
    }
    if (stored !== "") {
      log(`${problem}; using the stored workload kubeconfig (WORKLOAD_KUBECONFIG)`);
      return kubeconfigFrom("WORKLOAD_KUBECONFIG", stored);
    }
    if (problem !== last) {
      log(`${problem}; retrying`);
      last = problem;
    }
    if (Date.now() + intervalMs > deadline) {
      return failNothingDeleted(`gave up after ${waitSeconds} s: ${problem}, and no WORKLOAD_KUBECONFIG was given, so the LoadBalancer Services of cluster ${cluster} could not be deleted.`);
    }
    await sleep(intervalMs);
  }
}

/**
 * @param {unknown} value
 * @returns {Record<string, unknown>}
 */
function record(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? /** @type {Record<string, unknown>} */ (value) : {};
}

/**
 * Step b: every Service in all namespaces that has type LoadBalancer.
 * @param {KubeTarget} workload
 * @returns {Promise<TrackedService[]>}
 */
async function listLoadBalancerServices(workload) {
  /** @type {TrackedService[]} */
  const services = [];
  let continueToken = "";
  do {
    const query = new URLSearchParams({ limit: "500" });
    if (continueToken !== "") query.set("continue", continueToken);
    const response = await kubeRequest(workload, "GET", `/api/v1/services?${query.toString()}`, { timeoutMs: timeoutUntil(deadline) });
    if (response.status !== 200) {
      throw new HttpError(response.status, response.reason);
    }
    const list = record(response.json);
    const items = Array.isArray(list.items) ? list.items : [];
    for (const item of items) {
      const metadata = record(record(item).metadata);
      const spec = record(record(item).spec);
      if (spec.type !== "LoadBalancer") continue;
      const ingress = record(record(record(item).status).loadBalancer).ingress;
      services.push({
        namespace: String(metadata.namespace),
        name: String(metadata.name),
        uid: String(metadata.uid),
        ingress: (Array.isArray(ingress) ? ingress : [])
          .map((entry) => record(entry).ip ?? record(entry).hostname)
          .filter((address) => typeof address === "string"),
        deleting: typeof metadata.deletionTimestamp === "string",
      });
    }
    const next = record(list.metadata).continue;
    continueToken = typeof next === "string" ? next : "";
  } while (continueToken !== "");
  return services;
}

/**
 * Deletes one Service (only that incarnation: a precondition on its UID). 404 and 409
 * (gone, or replaced by a new object the next poll will see) are fine.
 * @param {KubeTarget} workload
 * @param {TrackedService} service
 */
async function deleteService(workload, service) {
  const path = `/api/v1/namespaces/${encodeURIComponent(service.namespace)}/services/${encodeURIComponent(service.name)}`;
  const body = { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: service.uid } };
  const response = await kubeRequest(workload, "DELETE", path, { timeoutMs: timeoutUntil(deadline), body });
  if (![200, 202, 404, 409].includes(response.status)) {
    throw new HttpError(response.status, response.reason);
  }
}

/**
 * Step d: the Hetzner load balancers labelled with one of the Service UIDs.
 * @param {string[]} uids
 * @returns {Promise<HetznerLoadBalancer[]>}
 */
async function hetznerLoadBalancers(uids) {
  const query = new URLSearchParams({ label_selector: `${uidLabel} in (${uids.join(",")})`, per_page: "50" });
  const url = new URL(`${hcloudEndpoint}/load_balancers?${query.toString().replace(/\+/g, "%20")}`);
  const response = await httpRequest(url, {
    headers: { Authorization: `Bearer ${hcloudToken}`, Accept: "application/json" },
    timeoutMs: timeoutUntil(deadline),
  });
  /** @type {unknown} */
  let json;
  try {
    json = JSON.parse(response.body);
  } catch {
    json = undefined;
  }
  if (response.status !== 200) {
    throw new HttpError(response.status, statusReason(response.status, json));
  }
  const list = record(json).load_balancers;
  return (Array.isArray(list) ? list : []).map((entry) => {
    const lb = record(entry);
    const ip = record(record(record(lb).public_net).ipv4).ip;
    return { id: String(lb.id), name: String(lb.name), ip: typeof ip === "string" ? ip : "" };
  });
}

/** @param {TrackedService} service */
function describeService(service) {
  const ingress = service.ingress.length > 0 ? `ingress ${service.ingress.join(", ")}` : "no ingress address";
  return `Service ${service.namespace}/${service.name} (uid ${service.uid}, ${ingress}${service.deleting ? ", deleting" : ""})`;
}

/** @param {HetznerLoadBalancer} lb */
function describeLoadBalancer(lb) {
  return `load balancer ${lb.name} (id ${lb.id}${lb.ip ? `, ${lb.ip}` : ""})`;
}

const workload = await workloadTarget();
if (workload === undefined) {
  log(`Secret ${secret} does not exist: the control plane of cluster ${cluster} never came up, so no LoadBalancer Service can exist; nothing to drain`);
  process.exit(0);
}
log(`draining the LoadBalancer Services of cluster ${cluster} (API ${workload.server}), for at most ${waitSeconds} s`);

/** Every LoadBalancer Service seen, by UID; what the Hetzner check asks about. */
/** @type {Map<string, TrackedService>} */
const seen = new Map();
/** @type {TrackedService[] | undefined} the Services present at the last successful list */
let present;
/** @type {HetznerLoadBalancer[]} */
let atHetzner = [];
let workloadProblem = "";
let hetznerProblem = "";
let lastProgress = "";

for (;;) {
  let progress = "";
  try {
    const services = await listLoadBalancerServices(workload);
    workloadProblem = "";
    const fresh = services.filter((service) => !seen.has(service.uid));
    if (present !== undefined && fresh.length > 0) {
      log(`${fresh.length} new LoadBalancer Service(s) appeared: ${fresh.map((service) => `${service.namespace}/${service.name}`).join(", ")}; deleting them too`);
    }
    if (present === undefined && services.length > 0) {
      log(`deleting ${services.length} LoadBalancer Service(s): ${services.map((service) => `${service.namespace}/${service.name}`).join(", ")}`);
    }
    present = services;
    for (const service of services) {
      seen.set(service.uid, service);
    }
    for (const service of services.filter((candidate) => !candidate.deleting)) {
      await deleteService(workload, service);
    }
    if (services.length > 0) {
      progress = `${services.length} LoadBalancer Service(s) still present; waiting for the hcloud CCM to delete their load balancers`;
    }
  } catch (error) {
    if (error instanceof HttpError && error.status < 500 && error.status !== 429) {
      const why = `the workload API of cluster ${cluster} refused: ${error.message}.`;
      if (seen.size === 0) failNothingDeleted(why);
      fail(`${why} The Cluster ${cluster} was NOT deleted (Pulumi stops the destroy before it). Re-run \`pulumi destroy\`, or delete the load balancers in the Hetzner console and run \`${escapeHatch}\`.`);
    }
    workloadProblem = error instanceof Error ? error.message : String(error);
    progress = `the workload API at ${workload.server} does not answer (${workloadProblem}); retrying`;
  }

  if (progress === "" && (present?.length ?? 0) === 0) {
    if (hcloudToken === "" || seen.size === 0) {
      if (seen.size === 0) {
        log(`nothing to drain: cluster ${cluster} has no LoadBalancer Services`);
      } else {
        log(`all ${seen.size} LoadBalancer Service(s) are gone, so the hcloud CCM has deleted their load balancers (HCLOUD_TOKEN not set: not confirming at Hetzner)`);
      }
      process.exit(0);
    }
    try {
      atHetzner = await hetznerLoadBalancers([...seen.keys()]);
      hetznerProblem = "";
      if (atHetzner.length === 0) {
        log(`all ${seen.size} LoadBalancer Service(s) are gone and Hetzner lists none of their load balancers; drained`);
        process.exit(0);
      }
      progress = `the Services are gone; Hetzner still lists ${atHetzner.length} of their load balancer(s)`;
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) {
        fail(
          `tenant token rejected: the Hetzner API at ${hcloudEndpoint} refused HCLOUD_TOKEN (${error.message}). ` +
            `The LoadBalancer Services of cluster ${cluster} are gone (the hcloud CCM reported their load balancers deleted), but this could not be confirmed. ` +
            `Check the token of the tenant's Hetzner project, or check the project for load balancers labelled ${uidLabel} in (${[...seen.keys()].join(",")}) and run \`${escapeHatch}\`.`,
        );
      }
      if (error instanceof HttpError && error.status < 500 && error.status !== 429) {
        fail(`the Hetzner API at ${hcloudEndpoint} refused the load balancer query: ${error.message}. Check HCLOUD_TOKEN and HCLOUD_ENDPOINT, or run \`${escapeHatch}\` after checking the project by hand.`);
      }
      hetznerProblem = error instanceof Error ? error.message : String(error);
      progress = `the Services are gone; the Hetzner API at ${hcloudEndpoint} cannot be reached (${hetznerProblem}); retrying`;
    }
  }

  const countsOnly = progress.replace(/\(.*\)/, "");
  if (countsOnly !== lastProgress) {
    log(progress);
    lastProgress = countsOnly;
  }
  if (Date.now() + intervalMs > deadline) {
    break;
  }
  await sleep(intervalMs);
}

// Step e/f: the deadline passed.
const uids = [...seen.keys()];
if (present === undefined) {
  failNothingDeleted(`gave up after ${waitSeconds} s: the workload API of cluster ${cluster} at ${workload.server} could not be reached (${workloadProblem}), so its LoadBalancer Services could not be deleted.`);
}
if (present.length === 0 && hetznerProblem !== "") {
  fail(
    `gave up after ${waitSeconds} s: the LoadBalancer Services of cluster ${cluster} are gone (so the hcloud CCM reported their load balancers deleted), ` +
      `but Hetzner could not be reached to confirm (${hcloudEndpoint}: ${hetznerProblem}). Load balancer Service UIDs: ${uids.join(", ")}. ` +
      `The Cluster ${cluster} was NOT deleted (Pulumi stops the destroy before it). Re-run \`pulumi destroy\` when Hetzner answers, or check the tenant's project ` +
      `(\`hcloud load-balancer list --selector '${uidLabel} in (${uids.join(",")})'\`) and, when none are left, run \`${escapeHatch}\`.`,
  );
}
if (present.length > 0 && hcloudToken !== "") {
  // One look at Hetzner so the message names the load balancers behind the Services.
  try {
    atHetzner = await hetznerLoadBalancers(uids);
  } catch (error) {
    hetznerProblem = error instanceof Error ? error.message : String(error);
  }
}
const lines = [`gave up after ${waitSeconds} s waiting for the load balancers of cluster ${cluster} to be deleted.`];
if (present.length > 0) {
  lines.push(`Still present in the workload cluster${workloadProblem ? ` at the last answer (the API stopped answering: ${workloadProblem})` : ""}:`);
  lines.push(...present.map((service) => `  - ${describeService(service)}`));
}
if (atHetzner.length > 0) {
  lines.push("Still listed at Hetzner:", ...atHetzner.map((lb) => `  - ${describeLoadBalancer(lb)}`));
} else if (hcloudToken !== "" && hetznerProblem !== "") {
  lines.push(`Hetzner could not be asked which load balancers are left (${hetznerProblem}).`);
}
lines.push(
  `The Cluster ${cluster} was NOT deleted: Pulumi stops the destroy before deleting it.`,
  "To fix:",
  `  - check the hcloud cloud controller manager runs in the workload cluster and read its logs: ${ccmCheck} (kubeconfig: ${workloadAccess})`,
  "  - if a controller (e.g. Flux) keeps recreating the Services, suspend it",
  "  - then re-run `pulumi destroy`",
  `  - or delete the load balancers in the Hetzner console (or \`hcloud load-balancer delete <id>\`) and run \`${escapeHatch}\``,
);
fail(lines.join("\n"));
