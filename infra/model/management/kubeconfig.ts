import { parse, stringify } from "yaml";

/** The parts of a client certificate kubeconfig the program builds for the management cluster. */
export interface ClientCertificateKubeconfig {
  /** Name used for the cluster, user and context entries. */
  readonly name: string;
  /** API endpoint, e.g. https://203.0.113.10:6443. */
  readonly server: string;
  readonly certificateAuthorityPem: string;
  readonly clientCertificatePem: string;
  readonly clientKeyPem: string;
}

/** Renders a kubeconfig that authenticates with a client certificate. */
export function buildKubeconfig(spec: ClientCertificateKubeconfig): string {
  const base64 = (pem: string) => Buffer.from(pem, "utf8").toString("base64");
  return stringify({
    // Stryker disable next-line StringLiteral: equivalent, client-go's clientcmd (kubectl, the Kubernetes provider) reads an empty apiVersion as v1
    apiVersion: "v1",
    // Stryker disable next-line StringLiteral: equivalent, clientcmd reads an empty kind as Config (kubectl 1.35.4 resolves the file either way)
    kind: "Config",
    clusters: [
      { name: spec.name, cluster: { server: spec.server, "certificate-authority-data": base64(spec.certificateAuthorityPem) } },
    ],
    users: [
      {
        name: `${spec.name}-admin`,
        user: {
          "client-certificate-data": base64(spec.clientCertificatePem),
          "client-key-data": base64(spec.clientKeyPem),
        },
      },
    ],
    contexts: [{ name: spec.name, context: { cluster: spec.name, user: `${spec.name}-admin` } }],
    "current-context": spec.name,
  });
}

interface KubeconfigDocument {
  "current-context"?: unknown;
  contexts?: { name?: unknown; context?: { cluster?: unknown; user?: unknown } }[];
  clusters?: { name?: unknown; cluster?: { server?: unknown } }[];
  users?: { name?: unknown; user?: Record<string, unknown> }[];
}

/** How the current context's user authenticates, as far as scripts outside the Kubernetes provider care. */
export type KubeconfigCredentials = "inline" | "other";

/**
 * Finds the API server URL of a kubeconfig's current context. Returns a problem text
 * instead (never quoting the content, which holds credentials).
 */
export function kubeconfigServer(text: string): { server: string; credentials: KubeconfigCredentials } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch {
    return { problem: "is not valid YAML; expected the contents of a kubeconfig file" };
  }
  // Stryker disable next-line ConditionalExpression: equivalent, a scalar (a path, a number) has no clusters list either
  if (typeof parsed !== "object" || parsed === null || !Array.isArray((parsed as KubeconfigDocument).clusters)) {
    return { problem: "is not a kubeconfig: it has no clusters list (give the file contents, not its path)" };
  }
  const document = parsed as KubeconfigDocument & { clusters: NonNullable<KubeconfigDocument["clusters"]> };
  const contextName = document["current-context"];
  const context = document.contexts?.find((entry) => entry.name === contextName);
  if (!context) {
    return { problem: "has no current-context that names one of its contexts" };
  }
  const cluster = document.clusters.find((entry) => entry.name === context.context?.cluster);
  const server = cluster?.cluster?.server;
  if (typeof server !== "string" || !server.startsWith("https://")) {
    return { problem: "current context's cluster has no https:// server URL" };
  }
  const userName = context.context?.user;
  const userEntry = document.users?.find((entry) => entry.name === userName);
  // kubectl refuses it too ("cannot locate user"); a client would go on without credentials.
  if (userName !== undefined && !userEntry) {
    return { problem: "current context's user is not one of its users" };
  }
  const user = userEntry?.user ?? {};
  const inline =
    (typeof user["client-certificate-data"] === "string" && typeof user["client-key-data"] === "string") || typeof user.token === "string";
  return { server, credentials: inline ? "inline" : "other" };
}
