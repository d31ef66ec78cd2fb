#!/usr/bin/env node
// @ts-check
/**
 * Waits until the management cluster's API server admits the objects the fleet is about to create,
 * by creating each as a server-side dry run (`?dryRun=All`: admission, webhooks included, runs;
 * nothing is stored). Used by the ClusterApi component (a command:local:Command) between the
 * cluster-api-operator's release and its provider resources: the operator's webhooks must be
 * serving, and cert-manager's cainjector must have put their CA in the webhook configurations,
 * before the API server can admit a provider. Helm's wait covers neither (the CA is injected
 * asynchronously), and the Kubernetes provider retries only NotFound and NoMatch
 * (pulumi-kubernetes@v4.25.0: provider/pkg/await/await.go, Creation), so without this wait `up`
 * fails at the first provider with "failed calling webhook".
 *
 * Environment:
 *   MANAGEMENT_KUBECONFIG   kubeconfig of the management cluster (a secret)
 *   ADMISSION_REQUESTS      JSON array of { path, body }: the collection to create in and the object
 *   ADMISSION_WAIT_SECONDS  how long to wait (default 600); ADMISSION_POLL_MILLISECONDS (default 2000)
 *
 * Exit codes: 0 every object was admitted (or already exists); 1 the wait ran out, or the API server
 * refused an object for a reason waiting does not change (the message names the object and the
 * reason); 2 missing or invalid environment.
 */
import { HttpError, KubeconfigError, NetworkError, kubeRequest, numberFromEnv, parseKubeconfig, requireEnv, timeoutUntil } from "../kube-client.mjs";

const program = "wait-for-admission";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "ADMISSION_REQUESTS"]);
const waitSeconds = numberFromEnv(program, "ADMISSION_WAIT_SECONDS", 600);
const pollMs = numberFromEnv(program, "ADMISSION_POLL_MILLISECONDS", 2000);

/** @type {{ path: string, body: { kind?: string, metadata?: { name?: string, namespace?: string } } }[]} */
let requests;
try {
  requests = JSON.parse(env.ADMISSION_REQUESTS);
  if (!Array.isArray(requests) || requests.some((request) => typeof request?.path !== "string" || typeof request?.body !== "object")) throw new Error("expected an array of { path, body }");
} catch (error) {
  console.error(`${program}: ADMISSION_REQUESTS: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
let target;
try {
  target = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
} catch (error) {
  if (error instanceof KubeconfigError) {
    console.error(`${program}: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

/**
 * Whether an answer may change by waiting: a webhook not reachable or not trusted yet (the API server
 * answers 500 InternalError "failed calling webhook"), the API server or an aggregated API not ready
 * (503, 429), a kind whose CRD is not served yet (404 without a Status reason of the object).
 * @param {number} status
 * @param {string} reason
 */
function transient(status, reason) {
  return status === 500 || status === 502 || status === 503 || status === 504 || status === 429 || (status === 404 && !/already exists/.test(reason));
}

const describe = (/** @type {(typeof requests)[number]} */ request) =>
  `${request.body.kind ?? "object"} ${request.body.metadata?.namespace ? `${request.body.metadata.namespace}/` : ""}${request.body.metadata?.name ?? "?"}`;

const deadline = Date.now() + waitSeconds * 1000;
const pending = new Set(requests);
/** @type {Map<(typeof requests)[number], string>} */
const last = new Map();
for (;;) {
  for (const request of [...pending]) {
    let answer;
    try {
      const response = await kubeRequest(target, "POST", `${request.path}?dryRun=All`, { body: request.body, timeoutMs: timeoutUntil(deadline) });
      answer = { status: response.status, reason: response.reason };
    } catch (error) {
      if (!(error instanceof NetworkError || error instanceof HttpError)) throw error;
      answer = { status: 0, reason: error.message };
    }
    if ((answer.status >= 200 && answer.status < 300) || answer.status === 409) {
      console.error(`${program}: the API server admits ${describe(request)}`);
      pending.delete(request);
    } else if (answer.status !== 0 && !transient(answer.status, answer.reason)) {
      console.error(`${program}: the API server refuses ${describe(request)} (HTTP ${answer.status}): ${answer.reason}`);
      process.exit(1);
    } else {
      const text = answer.status === 0 ? answer.reason : `HTTP ${answer.status}: ${answer.reason}`;
      if (last.get(request) !== text) console.error(`${program}: not yet admitted: ${describe(request)} (${text})`);
      last.set(request, text);
    }
  }
  if (pending.size === 0) process.exit(0);
  if (Date.now() + pollMs > deadline) {
    const waiting = [...pending].map((request) => `${describe(request)}: ${last.get(request) ?? "no answer"}`).join("; ");
    console.error(`${program}: gave up after ${waitSeconds}s; still not admitted: ${waiting}. Check that the webhook's Deployment is running and that cert-manager has injected its CA (kubectl get validatingwebhookconfigurations -o yaml, caBundle).`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, pollMs));
}
