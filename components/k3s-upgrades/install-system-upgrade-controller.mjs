#!/usr/bin/env node
// @ts-check
/**
 * Installs the system-upgrade-controller on the management cluster from its release manifest
 * (the catalog pins the release; the K3sUpgrades component runs this as a
 * `command:local:Command` at `pulumi up`, never at preview), then waits until the Plan CRD,
 * which the controller registers when it starts, is Established, so the Plan can be created.
 *
 * Every document of the manifest is applied with server-side apply (PATCH,
 * application/apply-patch+yaml, force), the way `kubectl apply --server-side` does: running
 * it again, or over an older release, converges on the manifest. Resource paths come from the
 * API server's discovery. Every request is bounded, and so is the whole run.
 *
 *   MANAGEMENT_KUBECONFIG  kubeconfig YAML of the management cluster (required)
 *   MANIFEST_URL           http(s) URL of the multi-document YAML (required; redirects followed)
 *   WAIT_FOR_CRD           a CRD to wait for until Established (optional)
 *   WAIT_SECONDS           give up after this long (default 600)
 *   POLL_MILLISECONDS      pause between attempts (default 3000)
 *
 * Exit codes: 0 applied (and the CRD Established); 1 failed (the message says where);
 * 2 missing or invalid environment. Diagnostics go to stderr; no credential is ever printed.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { URL, URLSearchParams } from "node:url";
import { parseAllDocuments } from "yaml";
import { HttpError, KubeconfigError, NetworkError, httpRequest, kubeRequest, numberFromEnv, parseKubeconfig, requireEnv, timeoutUntil } from "../kube-client.mjs";

const program = "install-system-upgrade-controller";
/** Who owns the applied fields (server-side apply). */
const fieldManager = "capi-fleet";
const maxRedirects = 5;

/** @param {string} message */
const log = (message) => console.error(`${program}: ${message}`);

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Downloads the manifest, following redirects (GitHub serves release assets through one).
 * @param {string} url
 * @param {number} deadline
 */
async function download(url, deadline) {
  let current = new URL(url);
  for (let hop = 0; hop <= maxRedirects; hop += 1) {
    const response = await httpRequest(current, { timeoutMs: Math.max(1000, deadline - Date.now()) });
    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && typeof location === "string") {
      current = new URL(location, current);
      continue;
    }
    if (response.status !== 200) throw new Error(`GET ${current.origin}${current.pathname}: HTTP ${response.status}`);
    return response.body;
  }
  throw new Error(`GET ${url}: more than ${maxRedirects} redirects`);
}

/**
 * The manifest's objects, in file order; fails on YAML errors and on documents that are not objects.
 * @param {string} text
 * @returns {{ apiVersion: string, kind: string, metadata: { name: string, namespace?: string } }[]}
 */
function manifestObjects(text) {
  const objects = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`the manifest is not valid YAML: ${document.errors[0]?.message ?? "?"}`);
    const value = /** @type {unknown} */ (document.toJS());
    if (value === null || value === undefined) continue;
    const metadata = isRecord(value) && isRecord(value.metadata) ? value.metadata : {};
    if (!isRecord(value) || typeof value.apiVersion !== "string" || typeof value.kind !== "string" || typeof metadata.name !== "string") {
      throw new Error("the manifest holds a document without apiVersion, kind and metadata.name");
    }
    objects.push(/** @type {{ apiVersion: string, kind: string, metadata: { name: string, namespace?: string } }} */ (value));
  }
  if (objects.length === 0) throw new Error("the manifest holds no objects");
  return objects;
}

/**
 * @param {import("../kube-client.mjs").KubeTarget} target
 * @param {number} deadline
 */
function discovery(target, deadline) {
  /** @type {Map<string, Map<string, { plural: string, namespaced: boolean }>>} */
  const cache = new Map();
  /**
   * How the API serves `kind` of `apiVersion`.
   * @param {string} apiVersion
   * @param {string} kind
   */
  return async (apiVersion, kind) => {
    let kinds = cache.get(apiVersion);
    if (!kinds) {
      const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const response = await kubeRequest(target, "GET", path, { timeoutMs: timeoutUntil(deadline) });
      kinds = new Map();
      if (response.status === 200 && isRecord(response.json) && Array.isArray(response.json.resources)) {
        for (const resource of response.json.resources) {
          if (isRecord(resource) && typeof resource.name === "string" && !resource.name.includes("/") && typeof resource.kind === "string") {
            kinds.set(resource.kind, { plural: resource.name, namespaced: resource.namespaced === true });
          }
        }
      } else if (response.status !== 404) {
        throw new HttpError(response.status, response.reason);
      }
      cache.set(apiVersion, kinds);
    }
    const served = kinds.get(kind);
    if (!served) throw new Error(`${apiVersion} ${kind} is not served by the management cluster`);
    return served;
  };
}

/**
 * Applies every object with server-side apply, in order.
 * @param {import("../kube-client.mjs").KubeTarget} target
 * @param {ReturnType<typeof manifestObjects>} objects
 * @param {number} deadline
 */
async function applyAll(target, objects, deadline) {
  const served = discovery(target, deadline);
  for (const object of objects) {
    const { plural, namespaced } = await served(object.apiVersion, object.kind);
    const base = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
    const namespace = namespaced ? `/namespaces/${encodeURIComponent(object.metadata.namespace ?? "default")}` : "";
    const query = new URLSearchParams({ fieldManager, force: "true" });
    const path = `${base}${namespace}/${plural}/${encodeURIComponent(object.metadata.name)}?${query.toString()}`;
    const response = await kubeRequest(target, "PATCH", path, { timeoutMs: timeoutUntil(deadline), body: object, contentType: "application/apply-patch+yaml" });
    const label = `${object.kind} ${namespaced ? `${object.metadata.namespace ?? "default"}/` : ""}${object.metadata.name}`;
    if (response.status !== 200 && response.status !== 201) throw new Error(`applying ${label}: HTTP ${response.status}: ${response.reason}`);
    log(`applied ${label}`);
  }
}

/**
 * Waits until the CRD is Established.
 * @param {import("../kube-client.mjs").KubeTarget} target
 * @param {string} name
 * @param {number} deadline
 * @param {number} pollMs
 */
async function waitForCrd(target, name, deadline, pollMs) {
  let last = "";
  for (;;) {
    const response = await kubeRequest(target, "GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`, { timeoutMs: timeoutUntil(deadline) });
    const conditions = isRecord(response.json) && isRecord(response.json.status) && Array.isArray(response.json.status.conditions) ? response.json.status.conditions : [];
    if (response.status === 200 && conditions.some((c) => isRecord(c) && c.type === "Established" && c.status === "True")) {
      log(`CRD ${name} is Established`);
      return;
    }
    const state = response.status === 404 ? "not registered yet" : response.status === 200 ? "not Established yet" : `HTTP ${response.status}: ${response.reason}`;
    if (state !== last) log(`CRD ${name}: ${state}`);
    last = state;
    if (Date.now() + pollMs > deadline) {
      throw new Error(
        `CRD ${name} is ${state}; the controller registers it when it starts: check \`kubectl -n system-upgrade get pods\` and \`kubectl -n system-upgrade logs deploy/system-upgrade-controller\``,
      );
    }
    await sleep(pollMs);
  }
}

async function main() {
  const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "MANIFEST_URL"]);
  const waitMs = numberFromEnv(program, "WAIT_SECONDS", 600) * 1000;
  const pollMs = numberFromEnv(program, "POLL_MILLISECONDS", 3000);
  if (!/^https?:\/\//.test(env.MANIFEST_URL)) {
    console.error(`${program}: MANIFEST_URL must be an http(s) URL`);
    process.exit(2);
  }
  let target;
  try {
    target = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
  } catch (error) {
    console.error(`${program}: ${error instanceof KubeconfigError ? error.message : String(error)}`);
    process.exit(2);
  }
  const deadline = Date.now() + waitMs;
  let step = `downloading ${env.MANIFEST_URL}`;
  try {
    const objects = manifestObjects(await download(env.MANIFEST_URL, deadline));
    log(`${objects.length} objects in ${env.MANIFEST_URL}`);
    step = `applying them to ${target.server}`;
    await applyAll(target, objects, deadline);
    const crd = process.env.WAIT_FOR_CRD;
    if (crd) {
      step = `waiting for CRD ${crd}`;
      await waitForCrd(target, crd, deadline, pollMs);
    }
  } catch (error) {
    const reason = error instanceof NetworkError ? `no answer: ${error.message}` : error instanceof Error ? error.message : String(error);
    console.error(`${program}: FAILED ${step}: ${reason}`);
    process.exit(1);
  }
}

await main();
