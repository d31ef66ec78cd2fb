import { rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { catalog } from "../../infra/model/versions/catalog";
import { carenExtensionNames } from "../../infra/model/platform/caren-extensions";
import { localServerCertificate } from "./script-harness";
import { carenSchemaProviders } from "../../infra/model/facts/caren";

// A recording Runtime SDK extension that stands in for CAREN's *transport and names*, not for its
// logic: it serves HTTPS on loopback, answers Discovery with exactly the handlers CAREN registers
// under the ExtensionConfig name CAREN's chart gives, records every request CAPI sends, and answers
// each with Success and nothing else (no patches, no retry). DiscoverVariables is the exception:
// it answers the variable schemas CAREN publishes, rebuilt from CAREN's own CRDs the way CAREN
// builds them (tests/support/caren-variables.ts), because CAPI validates every Cluster against them and
// passes a patch only the variables its discovery defined. What CAREN would *do*
// with a request (install Cilium, patch kubeadm, garbage-collect load balancers) is not here.
//
// Wire format: sigs.k8s.io/cluster-api@v1.12.10: api/runtime/hooks/v1alpha1/ (discovery_types.go,
// lifecyclehooks_types.go, topologymutation_types.go); paths: exp/runtime/catalog/catalog.go
// (GVHToPath: /<group>/<version>/<lower-case hook>/<handler>).

export const hooksApiVersion = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/** One handler the extension registers in its Discovery answer. */
export interface ExtensionHandler {
  /** The handler's own name (what CAPI prefixes to `.<ExtensionConfig name>`). */
  name: string;
  hook: string;
}

/**
 * The handlers CAREN registers, by hook. GeneratePatches and DiscoverVariables come from the
 * names the program uses (infra/model/platform/caren-extensions.ts), for every schema provider and for the
 * current and the previous patch generation of the catalog's CAREN release; the lifecycle
 * handlers are CAREN's one parallel handler per hook, named `caren` (docs/architecture.md).
 */
export function carenHandlers(): ExtensionHandler[] {
  const names = carenExtensionNames();
  const own = (qualified: string) => qualified.slice(0, qualified.length - names.extensionConfig.length - 1);
  const row = catalog.caren.patchGenerations.find((entry) => entry.current === names.patchGeneration);
  const generations = row ? [row.current, row.previous] : [names.patchGeneration];
  const handlers: ExtensionHandler[] = [];
  for (const provider of carenSchemaProviders) {
    handlers.push({ name: own(names.clusterConfigVariables(provider)), hook: "DiscoverVariables" });
    if (provider !== "generic") handlers.push({ name: own(names.workerConfigVariables(provider)), hook: "DiscoverVariables" });
    for (const generation of generations) {
      const rename = (handler: string) => handler.replace(`v${names.patchGeneration}configpatch`, `v${generation}configpatch`);
      handlers.push({ name: rename(own(names.clusterPatches(provider))), hook: "GeneratePatches" });
      handlers.push({ name: rename(own(names.workerPatches(provider))), hook: "GeneratePatches" });
    }
  }
  handlers.push(
    { name: "caren-bcc", hook: "BeforeClusterCreate" },
    { name: "caren-acpi", hook: "AfterControlPlaneInitialized" },
    { name: "caren-bcu", hook: "BeforeClusterUpgrade" },
    { name: "caren-bcd", hook: "BeforeClusterDelete" },
  );
  return handlers;
}

/** One request CAPI sent. */
export interface RecordedRequest {
  /** Hook name as in the catalog, e.g. GeneratePatches. */
  hook: string;
  /** The handler's own name ("" for Discovery). */
  handler: string;
  body: Record<string, unknown>;
  at: number;
}

/** A per-hook answer override: return a response body (merged into the Success answer), or undefined for the default. */
export type ResponseOverride = (request: RecordedRequest) => Record<string, unknown> | undefined;

export interface RecordingExtension {
  /** https://127.0.0.1:<port> */
  url: string;
  caPem: string;
  handlers: ExtensionHandler[];
  requests: RecordedRequest[];
  /** Replaces the answer of matching requests while set (e.g. to hold BeforeClusterDelete). */
  override: ResponseOverride | undefined;
  /** Serves with a new certificate from now on (a re-issued Secret). */
  reload(tls: { certPem: string; keyPem: string }): void;
  stop(): Promise<void>;
}

/**
 * Starts the extension on a random loopback port. `variables` answers DiscoverVariables by
 * handler name (tests/support/caren-variables.ts builds CAREN's answers from its CRDs); a handler without
 * an entry answers no variables.
 */
export async function startRecordingExtension(
  handlers: ExtensionHandler[] = carenHandlers(),
  variables: ReadonlyMap<string, unknown[]> = new Map(),
  /** Serve with this certificate (e.g. the one cert-manager issued for the extension's Service) on this port; default: a loopback certificate, any port. */
  serving?: { certPem: string; keyPem: string; caPem: string; port: number },
): Promise<RecordingExtension> {
  const tls = serving ?? localServerCertificate("recording-extension");
  if (!serving) rmSync((tls as { dir: string }).dir, { recursive: true, force: true }); // the PEMs are in memory
  const byPath = new Map<string, ExtensionHandler>();
  for (const handler of handlers) byPath.set(`/${hooksApiVersion}/${handler.hook.toLowerCase()}/${handler.name}`, handler);
  const extension: RecordingExtension = {
    url: "",
    caPem: tls.caPem,
    handlers,
    requests: [],
    override: undefined,
    reload: () => {},
    stop: async () => {},
  };
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      // CAPI appends ?timeout=<n>s to every call.
      const url = new URL(request.url ?? "/", "https://127.0.0.1").pathname;
      const reply = (status: number, body: Record<string, unknown>) => {
        response.writeHead(status, { "Content-Type": "application/json" });
        response.end(JSON.stringify(body));
      };
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      } catch {
        reply(400, { message: "not JSON" });
        return;
      }
      if (url === `/${hooksApiVersion}/discovery`) {
        extension.requests.push({ hook: "Discovery", handler: "", body, at: Date.now() });
        reply(200, {
          apiVersion: hooksApiVersion,
          kind: "DiscoveryResponse",
          status: "Success",
          handlers: handlers.map((handler) => ({
            name: handler.name,
            requestHook: { apiVersion: hooksApiVersion, hook: handler.hook },
            timeoutSeconds: 10,
            failurePolicy: "Fail",
          })),
        });
        return;
      }
      const handler = byPath.get(url);
      if (!handler) {
        reply(404, { message: `no handler at ${url}` });
        return;
      }
      const recorded: RecordedRequest = { hook: handler.hook, handler: handler.name, body, at: Date.now() };
      extension.requests.push(recorded);
      const answer: Record<string, unknown> = { apiVersion: hooksApiVersion, kind: `${handler.hook}Response`, status: "Success" };
      if (handler.hook === "GeneratePatches") answer.items = [];
      if (handler.hook === "DiscoverVariables") answer.variables = variables.get(handler.name) ?? [];
      if (handler.hook.startsWith("Before")) answer.retryAfterSeconds = 0;
      reply(200, { ...answer, ...extension.override?.(recorded) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(serving?.port ?? 0, "127.0.0.1", () => {
      resolve();
    });
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("the recording extension has no address");
  extension.url = `https://127.0.0.1:${address.port}`;
  extension.reload = (next) => { server.setSecureContext({ cert: next.certPem, key: next.keyPem }); };
  extension.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    });
  return extension;
}
