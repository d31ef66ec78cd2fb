#!/usr/bin/env node
// @ts-check
/**
 * `existing` mode, before anything is installed: does the cluster already run cert-manager that
 * the fleet does not own? Helm refuses to install a chart whose CRDs another release owns ("exists
 * and cannot be imported into the current release": helm.sh/helm/v3@v3.18.6, the Kubernetes
 * provider 4.25.0's, pkg/action/validate.go, existingResourceConflict; cert-manager's chart renders its CRDs as templates with crds.enabled:
 * github.com/cert-manager/cert-manager@v1.21.2, deploy/charts/cert-manager/templates/crd-*.yaml), so
 * without this check `up` would stop half-way, after other platform resources were created.
 * The fleet's Kubernetes provider waits for this command, so nothing in the cluster changes before it passes.
 *
 *   MANAGEMENT_KUBECONFIG   kubeconfig of the cluster (required)
 *   CERT_MANAGER            "install" (the fleet installs cert-manager) or "existing" (it uses the cluster's)
 *   CERT_MANAGER_RELEASE    the fleet's Helm release name for cert-manager, and
 *   CERT_MANAGER_NAMESPACE  its namespace: a CRD Helm annotates with both is the fleet's own
 *
 * Exit codes: 0 the cluster suits the setting; 1 it does not (the message names the conflict and
 * the setting), or the API could not be read; 2 missing or invalid environment.
 */
import { HttpError, KubeconfigError, NetworkError, kubeRequest, parseKubeconfig, requestTimeoutMs, requireEnv } from "../kube-client.mjs";

const program = "existing-cluster-preflight";
const env = requireEnv(program, ["MANAGEMENT_KUBECONFIG", "CERT_MANAGER", "CERT_MANAGER_RELEASE", "CERT_MANAGER_NAMESPACE"]);
if (!["install", "existing"].includes(env.CERT_MANAGER)) {
  console.error(`${program}: CERT_MANAGER must be install or existing (got ${JSON.stringify(env.CERT_MANAGER)})`);
  process.exit(2);
}
/** The CRD every cert-manager release installs (cert-manager.io/v1 Certificate). */
const certManagerCrd = "certificates.cert-manager.io";
const setting = "management.certManager";

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Who installed an object, as Helm (annotations) and the recommended labels say. */
function ownerOf(/** @type {Record<string, unknown>} */ object) {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const labels = isRecord(metadata.labels) ? metadata.labels : {};
  const release = typeof annotations["meta.helm.sh/release-name"] === "string" ? annotations["meta.helm.sh/release-name"] : undefined;
  const namespace = typeof annotations["meta.helm.sh/release-namespace"] === "string" ? annotations["meta.helm.sh/release-namespace"] : undefined;
  const version = typeof labels["app.kubernetes.io/version"] === "string" ? labels["app.kubernetes.io/version"] : undefined;
  return { release, namespace, version };
}

let crd;
try {
  const target = parseKubeconfig(env.MANAGEMENT_KUBECONFIG, "MANAGEMENT_KUBECONFIG");
  const response = await kubeRequest(target, "GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${certManagerCrd}`, { timeoutMs: requestTimeoutMs });
  const details = isRecord(response.json) ? response.json.details : undefined;
  if (response.status === 404 && isRecord(details) && details.name === certManagerCrd) {
    crd = undefined;
  } else if (response.status === 200 && isRecord(response.json)) {
    crd = response.json;
  } else {
    throw new HttpError(response.status, response.reason);
  }
} catch (error) {
  if (error instanceof KubeconfigError || error instanceof NetworkError || error instanceof HttpError) {
    console.error(`${program}: cannot read the cluster's CustomResourceDefinitions: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

if (env.CERT_MANAGER === "existing") {
  if (!crd) {
    console.error(`${program}: ${setting} is existing, but the cluster runs no cert-manager (no CustomResourceDefinition ${certManagerCrd}); install cert-manager first, or set ${setting}: install to let the fleet install it`);
    process.exit(1);
  }
  const owner = ownerOf(crd);
  console.error(`${program}: using the cluster's cert-manager${owner.version ? ` ${owner.version}` : ""} (${setting}: existing)`);
  process.exit(0);
}

if (crd) {
  const owner = ownerOf(crd);
  const ours = owner.release === env.CERT_MANAGER_RELEASE && owner.namespace === env.CERT_MANAGER_NAMESPACE;
  if (!ours) {
    const who = owner.release ? `Helm release ${owner.namespace ?? "?"}/${owner.release}` : "something other than Helm";
    console.error(
      `${program}: the cluster already runs cert-manager${owner.version ? ` ${owner.version}` : ""}, installed by ${who} ` +
        `(CustomResourceDefinition ${certManagerCrd}); the fleet would install its own as Helm release ` +
        `${env.CERT_MANAGER_NAMESPACE}/${env.CERT_MANAGER_RELEASE}, which Helm refuses over CRDs another owner holds. ` +
        `Nothing was changed. Set ${setting}: existing to use the cluster's cert-manager (docs/platform.md), or remove it first.`,
    );
    process.exit(1);
  }
}
console.error(`${program}: no cert-manager of another owner; the fleet installs its own (${setting}: install)`);
