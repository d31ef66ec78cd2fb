import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KubeApiServer } from "../kube-apiserver";
import type { ServiceEgress } from "../service-egress";

/**
 * STAND-IN for cert-manager's controller, cainjector and webhook, whose binaries the Go module
 * proxy here does not serve (their `cmd/*` modules are refused; the root module holds the chart
 * and CRDs). The chart itself is installed for real; this plays the running parts, for the objects
 * the platform's charts and providers create:
 * - Issuers (selfSigned, ca) become Ready; a Certificate gets its Secret (tls.crt, tls.key, ca.crt)
 *   signed as its issuer says, and Ready (no renewal, no ACME, no other issuer kinds);
 * - `cert-manager.io/inject-ca-from` and `…-from-secret` fill the caBundle of webhook
 *   configurations and CRD conversion webhooks, as cainjector does;
 * - the webhook Service answers every admission review with "allowed" (no defaulting, no
 *   validation), with a serving certificate from the CA it keeps in `cert-manager-webhook-ca`, the
 *   Secret the chart's webhook configurations name (github.com/cert-manager/cert-manager@v1.21.2:
 *   deploy/charts/cert-manager/templates/webhook-*-webhook.yaml).
 */
export interface CertManagerStandIn {
  /** Certificates issued, as namespace/name. */
  issued: string[];
  stop(): Promise<void>;
}

interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  webhooks?: { clientConfig: { caBundle?: string } }[];
}

interface KeyPair {
  cert: string;
  key: string;
}

const namespace = "cert-manager";
const webhookService = "cert-manager-webhook";
const webhookCaSecret = "cert-manager-webhook-ca";

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A key pair for `dnsNames`, self-signed or signed by `ca`; `isCA` makes it a CA. */
export function issue(commonName: string, dnsNames: readonly string[], isCA: boolean, ca?: KeyPair): KeyPair {
  const dir = mkdtempSync(path.join(tmpdir(), "cert-"));
  try {
    const ext = [
      `basicConstraints=critical,CA:${isCA ? "TRUE" : "FALSE"}`,
      isCA ? "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" : "keyUsage=critical,digitalSignature,keyEncipherment",
      ...(dnsNames.length > 0 ? [`subjectAltName=${dnsNames.map((name) => `DNS:${name}`).join(",")}`] : []),
      ...(isCA ? [] : ["extendedKeyUsage=serverAuth,clientAuth"]),
    ].join("\n");
    writeFileSync(path.join(dir, "ext.cnf"), `${ext}\n`);
    openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "tls.key"]);
    openssl(dir, ["req", "-new", "-key", "tls.key", "-subj", `/CN=${commonName.slice(0, 64)}`, "-out", "tls.csr"]);
    if (ca) {
      writeFileSync(path.join(dir, "ca.crt"), ca.cert);
      writeFileSync(path.join(dir, "ca.key"), ca.key);
      openssl(dir, ["x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "tls.crt"]);
    } else {
      openssl(dir, ["x509", "-req", "-in", "tls.csr", "-signkey", "tls.key", "-days", "2", "-extfile", "ext.cnf", "-out", "tls.crt"]);
    }
    // PKCS#8, as cert-manager writes keys by default (privateKey.encoding PKCS1 for RSA only).
    openssl(dir, ["pkcs8", "-topk8", "-nocrypt", "-in", "tls.key", "-out", "tls.pk8"]);
    return { cert: readFileSync(path.join(dir, "tls.crt"), "utf8"), key: readFileSync(path.join(dir, "tls.pk8"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
const unb64 = (text: string | undefined) => (text === undefined ? undefined : Buffer.from(text, "base64").toString("utf8"));

export async function startCertManagerStandIn(server: KubeApiServer, egress: ServiceEgress): Promise<CertManagerStandIn> {
  const issued: string[] = [];
  const webhookCa = issue("cert-manager-webhook-ca", [], true);
  const serving = issue(`${webhookService}.${namespace}.svc`, [`${webhookService}.${namespace}.svc`, `${webhookService}.${namespace}.svc.cluster.local`], false, webhookCa);
  const webhook: Server = createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      const review = JSON.parse(body || "{}") as { apiVersion?: string; request?: { uid?: string } };
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: review.request?.uid ?? "", allowed: true } }));
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve));
  const port = (webhook.address() as { port: number }).port;
  egress.route(`${webhookService}.${namespace}`, port);

  const list = async (apiPath: string): Promise<KubeObject[]> => {
    const answer = await server.request("GET", apiPath);
    return answer.status === 200 ? ((answer.json.items as KubeObject[] | undefined) ?? []) : [];
  };
  const get = async (apiPath: string): Promise<KubeObject | undefined> => {
    const answer = await server.request("GET", apiPath);
    return answer.status === 200 ? (answer.json as unknown as KubeObject) : undefined;
  };
  const patch = (apiPath: string, body: unknown) => server.request("PATCH", apiPath, body, "application/merge-patch+json");
  const ready = (reason: string) => ({ conditions: [{ type: "Ready", status: "True", reason, message: `${reason} (cert-manager stand-in)`, lastTransitionTime: new Date().toISOString() }] });
  const secretPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/secrets/${name}`;

  const reconcile = async () => {
    // The webhook's CA Secret, which the chart's webhook configurations inject from.
    if ((await get(`/api/v1/namespaces/${namespace}`)) && !(await get(secretPath(namespace, webhookCaSecret)))) {
      await server.request("POST", `/api/v1/namespaces/${namespace}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: webhookCaSecret, namespace },
        type: "kubernetes.io/tls",
        data: { "ca.crt": b64(webhookCa.cert), "tls.crt": b64(webhookCa.cert), "tls.key": b64(webhookCa.key) },
      });
    }
    for (const issuer of await list("/apis/cert-manager.io/v1/issuers")) {
      const conditions = (issuer.status?.conditions as { type: string; status: string }[] | undefined) ?? [];
      if (!conditions.some((condition) => condition.type === "Ready" && condition.status === "True")) {
        await patch(`/apis/cert-manager.io/v1/namespaces/${issuer.metadata.namespace}/issuers/${issuer.metadata.name}/status`, { status: ready("IsReady") });
      }
    }
    for (const certificate of await list("/apis/cert-manager.io/v1/certificates")) {
      const ns = certificate.metadata.namespace!;
      const spec = certificate.spec as { secretName: string; dnsNames?: string[]; commonName?: string; isCA?: boolean; issuerRef: { name: string; kind?: string } };
      if (await get(secretPath(ns, spec.secretName))) continue;
      const issuerPath = spec.issuerRef.kind === "ClusterIssuer" ? `/apis/cert-manager.io/v1/clusterissuers/${spec.issuerRef.name}` : `/apis/cert-manager.io/v1/namespaces/${ns}/issuers/${spec.issuerRef.name}`;
      const issuer = await get(issuerPath);
      if (!issuer) continue;
      let ca: KeyPair | undefined;
      if (issuer.spec?.ca) {
        const caSecret = await get(secretPath(ns, (issuer.spec.ca as { secretName: string }).secretName));
        const caCert = unb64(caSecret?.data?.["tls.crt"]);
        const caKey = unb64(caSecret?.data?.["tls.key"]);
        if (!caCert || !caKey) continue;
        ca = { cert: caCert, key: caKey };
      } else if (!issuer.spec?.selfSigned) {
        throw new Error(`the cert-manager stand-in issues only from selfSigned and ca issuers, not ${JSON.stringify(issuer.spec)} (Certificate ${ns}/${certificate.metadata.name})`);
      }
      const pair = issue(spec.commonName ?? spec.dnsNames?.[0] ?? certificate.metadata.name, spec.dnsNames ?? [], spec.isCA === true, ca);
      await server.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: spec.secretName, namespace: ns, annotations: { "cert-manager.io/certificate-name": certificate.metadata.name, "cert-manager.io/issuer-name": spec.issuerRef.name } },
        type: "kubernetes.io/tls",
        data: { "tls.crt": b64(pair.cert), "tls.key": b64(pair.key), "ca.crt": b64(ca?.cert ?? pair.cert) },
      });
      await patch(`/apis/cert-manager.io/v1/namespaces/${ns}/certificates/${certificate.metadata.name}/status`, { status: ready("Ready") });
      issued.push(`${ns}/${certificate.metadata.name}`);
    }
    // cainjector: the CA of a Certificate's Secret, or of a named Secret.
    const caOf = async (annotations: Record<string, string> | undefined): Promise<string | undefined> => {
      const fromCertificate = annotations?.["cert-manager.io/inject-ca-from"];
      const fromSecret = annotations?.["cert-manager.io/inject-ca-from-secret"];
      if (fromCertificate) {
        const [ns, name] = fromCertificate.split("/");
        const certificate = await get(`/apis/cert-manager.io/v1/namespaces/${ns}/certificates/${name}`);
        const secret = certificate && (await get(secretPath(ns!, (certificate.spec as { secretName: string }).secretName)));
        return secret?.data?.["ca.crt"];
      }
      if (fromSecret) {
        const [ns, name] = fromSecret.split("/");
        return (await get(secretPath(ns!, name!)))?.data?.["ca.crt"];
      }
      return undefined;
    };
    for (const kind of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
      for (const configuration of await list(`/apis/admissionregistration.k8s.io/v1/${kind}`)) {
        const caBundle = await caOf(configuration.metadata.annotations);
        if (!caBundle || (configuration.webhooks ?? []).every((webhook) => webhook.clientConfig.caBundle === caBundle)) continue;
        const webhooks = (configuration.webhooks ?? []).map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } }));
        await server.request("PUT", `/apis/admissionregistration.k8s.io/v1/${kind}/${configuration.metadata.name}`, { ...configuration, webhooks });
      }
    }
    for (const crd of await list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")) {
      const conversion = crd.spec?.conversion as { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } | undefined;
      if (conversion?.strategy !== "Webhook") continue;
      const caBundle = await caOf(crd.metadata.annotations);
      if (!caBundle || conversion.webhook?.clientConfig?.caBundle === caBundle) continue;
      await patch(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, { spec: { conversion: { webhook: { clientConfig: { caBundle } } } } });
    }
  };

  const state = { running: true };
  let failure: unknown;
  const loop = (async () => {
    while (state.running) {
      try {
        await reconcile();
      } catch (error) {
        failure = error;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    issued,
    stop: async () => {
      state.running = false;
      await loop;
      await new Promise<void>((resolve) => webhook.close(() => { resolve(); }));
      if (failure) console.warn(`cert-manager stand-in: last error: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}`);
    },
  };
}
