// @ts-check
/**
 * A small Kubernetes REST client shared by the scripts that `command:local:Command`
 * resources run (workload-kubeconfig.mjs, drain-load-balancers.mjs): kubeconfig parsing
 * (current context; CA, client certificate and key, or bearer token, all embedded), one
 * HTTP(S) request helper with a hard timeout on every request so nothing hangs, and the
 * reader for the `<cluster>-kubeconfig` Secret Cluster API keeps for each workload cluster.
 *
 * Nothing here prints or puts into an error message any credential or kubeconfig content.
 */
import { Buffer } from "node:buffer";
import http from "node:http";
import https from "node:https";
import { clearTimeout, setTimeout } from "node:timers";
import { URL } from "node:url";
import { parse } from "yaml";

/** Upper bound for one request; callers pass less when their own deadline is closer. */
export const requestTimeoutMs = 15_000;

/** The API server could not be reached or did not answer in time (no HTTP status). */
export class NetworkError extends Error {}

/** The server answered with an unexpected HTTP status. */
export class HttpError extends Error {
  /**
   * @param {number} status
   * @param {string} reason
   */
  constructor(status, reason) {
    super(`HTTP ${status}: ${reason}`);
    this.status = status;
    this.reason = reason;
  }
}

/** A kubeconfig this client cannot use; the message never quotes its content. */
export class KubeconfigError extends Error {}

/**
 * Where and how to reach one API server: the current context of a kubeconfig.
 * @typedef {object} KubeTarget
 * @property {string} server API server URL, e.g. https://203.0.113.10:6443
 * @property {string} cluster name of the kubeconfig cluster entry (for messages)
 * @property {string} [ca] CA certificate PEM; the system roots when absent
 * @property {string} [cert] client certificate PEM
 * @property {string} [key] client key PEM
 * @property {string} [token] bearer token
 * @property {boolean} insecure insecure-skip-tls-verify
 * @property {string} [serverName] tls-server-name
 */

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The `field` entry of a kubeconfig list (`clusters`, `contexts`, `users`) named `name`.
 * @param {Record<string, unknown>} document
 * @param {string} list
 * @param {string} field
 * @param {unknown} name
 * @returns {Record<string, unknown> | undefined}
 */
function namedEntry(document, list, field, name) {
  const entries = Array.isArray(document[list]) ? /** @type {unknown[]} */ (document[list]) : [];
  const entry = entries.find((candidate) => isRecord(candidate) && candidate.name === name);
  return isRecord(entry) && isRecord(entry[field]) ? entry[field] : undefined;
}

/**
 * Reads the current context of a kubeconfig (or its only context when current-context
 * is unset).
 * @param {string} text kubeconfig YAML
 * @param {string} label how to call the kubeconfig in messages, e.g. "MANAGEMENT_KUBECONFIG"
 * @returns {KubeTarget}
 */
export function parseKubeconfig(text, label) {
  /** @type {unknown} */
  let document;
  try {
    document = parse(text);
  } catch {
    throw new KubeconfigError(`${label} is not valid YAML; expected the contents of a kubeconfig file`);
  }
  if (!isRecord(document) || !Array.isArray(document.clusters)) {
    throw new KubeconfigError(`${label} is not a kubeconfig: it has no clusters list (give the file contents, not its path)`);
  }
  const contexts = Array.isArray(document.contexts) ? document.contexts : [];
  let contextName = document["current-context"];
  if ((contextName === undefined || contextName === "") && contexts.length === 1 && isRecord(contexts[0])) {
    contextName = contexts[0].name;
  }
  const context = namedEntry(document, "contexts", "context", contextName);
  if (!context) {
    throw new KubeconfigError(`${label} has no current-context that names one of its contexts`);
  }
  const cluster = namedEntry(document, "clusters", "cluster", context.cluster);
  const server = cluster?.server;
  if (!cluster || typeof server !== "string" || !/^https?:\/\//.test(server)) {
    throw new KubeconfigError(`${label}: the current context's cluster has no http(s) server URL`);
  }
  const user = namedEntry(document, "users", "user", context.user) ?? {};

  /**
   * @param {Record<string, unknown>} entry
   * @param {string} field
   */
  const data = (entry, field) => {
    const value = entry[`${field}-data`];
    if (typeof value === "string" && value !== "") {
      return Buffer.from(value, "base64").toString("utf8");
    }
    if (entry[field] !== undefined) {
      throw new KubeconfigError(`${label} refers to a file for ${field}; embed it as ${field}-data instead`);
    }
    return undefined;
  };

  const ca = data(cluster, "certificate-authority");
  const cert = data(user, "client-certificate");
  const key = data(user, "client-key");
  const token = typeof user.token === "string" && user.token !== "" ? user.token : undefined;
  if ((cert === undefined) !== (key === undefined)) {
    throw new KubeconfigError(`${label}: the current user has only one of client-certificate-data and client-key-data`);
  }
  if (cert === undefined && token === undefined) {
    const other = ["exec", "auth-provider", "tokenFile", "username"].filter((field) => user[field] !== undefined);
    throw new KubeconfigError(
      `${label}: the current user has neither client-certificate-data/client-key-data nor a token` +
        (other.length > 0 ? ` (${other.join(", ")} is not supported here)` : ""),
    );
  }
  /** @type {KubeTarget} */
  const target = { server, cluster: String(context.cluster), insecure: cluster["insecure-skip-tls-verify"] === true };
  if (ca !== undefined) target.ca = ca;
  if (cert !== undefined) target.cert = cert;
  if (key !== undefined) target.key = key;
  if (token !== undefined) target.token = token;
  if (typeof cluster["tls-server-name"] === "string") target.serverName = cluster["tls-server-name"];
  return target;
}

/**
 * One HTTP(S) request with a hard overall timeout. Rejects with NetworkError when no
 * complete answer arrives (refused, TLS failure, reset, timeout); resolves with any status.
 * @param {URL} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string, timeoutMs: number, tls?: https.RequestOptions }} options
 * @returns {Promise<{ status: number, body: string, headers: http.IncomingHttpHeaders }>}
 */
export function httpRequest(url, options) {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === "http:" ? http : https;
    let settled = false;
    /** @param {() => void} settle */
    const once = (settle) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        settle();
      }
    };
    /** @param {unknown} error */
    const fail = (error) => {
      once(() => {
        reject(error instanceof NetworkError ? error : new NetworkError(describeNetworkError(error)));
      });
    };
    /** @type {Record<string, string>} */
    const headers = { ...options.headers };
    // Node frames no body for a DELETE unless its length is given (no chunked encoding by default
    // for DELETE), so the API server would never see a DELETE's DeleteOptions (preconditions,
    // propagationPolicy).
    if (options.body !== undefined) headers["Content-Length"] = String(Buffer.byteLength(options.body));
    const request = transport.request(
      url,
      { ...options.tls, method: options.method ?? "GET", headers, agent: false },
      (response) => {
        /** @type {Buffer[]} */
        const chunks = [];
        response.on("data", (/** @type {Buffer} */ chunk) => chunks.push(chunk));
        response.on("end", () => {
          once(() => {
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: response.headers });
          });
        });
        response.on("error", fail);
        response.on("close", () => {
          fail(new NetworkError("connection closed before the answer was complete"));
        });
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new NetworkError(`no answer within ${Math.round(options.timeoutMs)} ms`));
    }, options.timeoutMs);
    request.on("error", fail);
    request.end(options.body);
  });
}

/**
 * A one-line description of a connection error, e.g. "connect ECONNREFUSED 127.0.0.1:1".
 * @param {unknown} error
 */
function describeNetworkError(error) {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const code = /** @type {{ code?: unknown }} */ (error).code;
  return typeof code === "string" && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * The reason a server gives for a status: a Kubernetes Status message, a Hetzner error
 * message, or the standard status text. Shortened; never the raw body.
 * @param {number} status
 * @param {unknown} json
 */
export function statusReason(status, json) {
  let reason;
  if (isRecord(json)) {
    if (typeof json.message === "string" && json.message !== "") {
      reason = json.message;
    } else if (typeof json.reason === "string" && json.reason !== "") {
      reason = json.reason;
    } else if (isRecord(json.error) && typeof json.error.message === "string") {
      reason = typeof json.error.code === "string" ? `${json.error.code}: ${json.error.message}` : json.error.message;
    }
  }
  reason ??= http.STATUS_CODES[status] ?? "unknown status";
  return reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
}

/** @param {string} text */
function parseJson(text) {
  try {
    return /** @type {unknown} */ (JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * A request to a Kubernetes API server.
 * @param {KubeTarget} target
 * @param {string} method
 * @param {string} path absolute API path, e.g. /api/v1/services
 * @param {{ timeoutMs: number, body?: unknown, contentType?: string }} options `contentType` of the
 *   JSON body, e.g. application/apply-patch+yaml for server-side apply (default application/json)
 * @returns {Promise<{ status: number, json: unknown, reason: string }>}
 */
export async function kubeRequest(target, method, path, options) {
  const url = new URL(`${target.server.replace(/\/+$/, "")}${path}`);
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (target.token !== undefined) {
    headers.Authorization = `Bearer ${target.token}`;
  }
  /** @type {https.RequestOptions} */
  const tls = { rejectUnauthorized: !target.insecure };
  if (target.ca !== undefined) tls.ca = target.ca;
  if (target.cert !== undefined) tls.cert = target.cert;
  if (target.key !== undefined) tls.key = target.key;
  if (target.serverName !== undefined) tls.servername = target.serverName;
  /** @type {string | undefined} */
  let body;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] = options.contentType ?? "application/json";
  }
  const response = await httpRequest(url, { method, headers, body, timeoutMs: options.timeoutMs, tls });
  const json = parseJson(response.body);
  return { status: response.status, json, reason: statusReason(response.status, json) };
}

/** @param {string} cluster */
export function kubeconfigSecretName(cluster) {
  return `${cluster}-kubeconfig`;
}

/**
 * Reads the kubeconfig Cluster API keeps for a workload cluster (Secret
 * `<cluster>-kubeconfig`, key `value`). Resolves undefined when the API says the Secret
 * does not exist (a Kubernetes NotFound Status, not any 404); throws NetworkError when the
 * API cannot be reached and HttpError for any other answer.
 * @param {KubeTarget} management
 * @param {string} namespace
 * @param {string} cluster
 * @param {number} timeoutMs
 * @returns {Promise<string | undefined>}
 */
export async function readKubeconfigSecret(management, namespace, cluster, timeoutMs) {
  const name = kubeconfigSecretName(cluster);
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
  const response = await kubeRequest(management, "GET", path, { timeoutMs });
  const json = response.json;
  if (response.status === 404 && isRecord(json) && json.kind === "Status" && json.reason === "NotFound") {
    return undefined;
  }
  if (response.status !== 200) {
    throw new HttpError(response.status, response.reason);
  }
  const value = isRecord(json) && isRecord(json.data) ? json.data.value : undefined;
  if (typeof value !== "string" || value === "") {
    throw new Error(`Secret ${namespace}/${name} has no data.value`);
  }
  return Buffer.from(value, "base64").toString("utf8");
}

/**
 * API path of a Cluster API Cluster (the v1beta2 API CAPI v1.12 serves and stores).
 * @param {string} namespace
 * @param {string} cluster
 */
export function clusterPath(namespace, cluster) {
  return `/apis/cluster.x-k8s.io/v1beta2/namespaces/${encodeURIComponent(namespace)}/clusters/${encodeURIComponent(cluster)}`;
}

/**
 * Reads a Cluster API Cluster. Resolves undefined when the API says it does not exist (a
 * Kubernetes NotFound Status); throws NetworkError when the API cannot be reached and
 * HttpError for any other answer.
 * @param {KubeTarget} management
 * @param {string} namespace
 * @param {string} cluster
 * @param {number} timeoutMs
 * @returns {Promise<Record<string, unknown> | undefined>}
 */
export async function readCluster(management, namespace, cluster, timeoutMs) {
  const response = await kubeRequest(management, "GET", clusterPath(namespace, cluster), { timeoutMs });
  const json = response.json;
  if (response.status === 404 && isRecord(json) && json.kind === "Status" && json.reason === "NotFound") {
    return undefined;
  }
  if (response.status !== 200 || !isRecord(json)) {
    throw new HttpError(response.status, response.reason);
  }
  return json;
}

/**
 * The named environment variables; exits 2 naming those that are unset or empty.
 * @template {string} Name
 * @param {string} program
 * @param {readonly Name[]} names
 * @returns {Record<Name, string>}
 */
export function requireEnv(program, names) {
  const missing = names.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    console.error(`${program}: missing environment variables: ${missing.join(", ")}`);
    process.exit(2);
  }
  return /** @type {Record<Name, string>} */ (Object.fromEntries(names.map((name) => [name, process.env[name] ?? ""])));
}

/**
 * A positive number from the environment, or the default when unset; exits 2 when invalid.
 * @param {string} program
 * @param {string} name
 * @param {number} fallback
 */
export function numberFromEnv(program, name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === "") {
    return fallback;
  }
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${program}: ${name} must be a positive number (got ${JSON.stringify(text)})`);
    process.exit(2);
  }
  return value;
}

/**
 * The timeout for the next request: at most requestTimeoutMs, at least one second, and
 * otherwise what is left until the deadline.
 * @param {number} deadline epoch milliseconds
 */
export function timeoutUntil(deadline) {
  return Math.min(requestTimeoutMs, Math.max(1000, deadline - Date.now()));
}
