import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * How kube-apiserver reaches a Service that a host process serves: webhooks, CRD conversion and
 * extension servers named by a Service. The API server dials a Service reference at the
 * Service's ClusterIP (k8s.io/kubernetes@v1.35.4: cmd/kube-apiserver/app/server.go,
 * buildServiceResolver, `NewClusterIPServiceResolver` unless aggregator routing is on) through the
 * egress selector's `cluster` connection when one is configured (k8s.io/apiserver@v0.35.4:
 * pkg/util/webhook/authentication.go; pkg/server/egressselector/config.go validates an HTTPConnect
 * proxy on a Unix socket). This is that proxy: it looks the ClusterIP up among the Services
 * (`lookup`, set once the API server runs), and a Service a test routes goes to its loopback port;
 * anything else is refused with a 502 that names it. Start the API server with
 * `--egress-selector-config-file=<configFile>`.
 */
export interface ServiceEgress {
  /** The EgressSelectorConfiguration file for kube-apiserver. */
  configFile: string;
  /** The same proxy on loopback TCP, as HTTPS_PROXY for host processes that call Services (a CAPI manager calling a runtime extension); set NO_PROXY=127.0.0.1 with it. */
  proxyUrl: string;
  /** Sends `<name>.<namespace>` (any port) to 127.0.0.1:`port`. */
  route(service: string, port: number): void;
  /** How a ClusterIP becomes `<name>.<namespace>` (e.g. a list of the API server's Services). */
  lookup?: (clusterIp: string) => Promise<string | undefined>;
  /** Every CONNECT target asked for, in order. */
  connects: string[];
  stop(): Promise<void>;
}

/** Whether something accepts connections on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(port, "127.0.0.1", () => {
      probe.destroy();
      resolve(true);
    });
    probe.on("error", () => { resolve(false); });
  });
}

/** `<name>.<namespace>` of `host:port` when the host names a Service, else undefined. */
export function serviceOf(target: string): string | undefined {
  const host = target.replace(/:\d+$/, "");
  const match = /^([a-z0-9-]+)\.([a-z0-9-]+)(?:\.svc(?:\.cluster\.local)?)?$/.exec(host);
  return match ? `${match[1]}.${match[2]}` : undefined;
}

/**
 * `holdMs`: how long a CONNECT to a Service that has no route yet, or whose process does not accept
 * yet, waits before the 502. A Deployment's pods count as Ready only once they serve, but kwok
 * makes them Ready at once while the real process starts on the host a moment later; holding the
 * connection (less than the API server's 10 s webhook timeout) gives back that order.
 */
export async function startServiceEgress(options: { holdMs?: number } = {}): Promise<ServiceEgress> {
  const holdMs = options.holdMs ?? 0;
  // eslint-disable-next-line prefer-const -- assigned below, read by the connection handler
  let egress: ServiceEgress;
  const dir = mkdtempSync(path.join(tmpdir(), "egress-"));
  const socketPath = path.join(dir, "egress.sock");
  const routes = new Map<string, number>();
  const connects: string[] = [];
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    let head = Buffer.alloc(0);
    const onData = async (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.removeAllListeners("data");
      const [method = "", target = ""] = head.subarray(0, end).toString("latin1").split("\r\n")[0]!.split(" ");
      connects.push(target);
      const host = target.replace(/:\d+$/, "");
      const service = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? await egress.lookup?.(host) : serviceOf(target);
      const until = Date.now() + holdMs;
      let port = service === undefined ? undefined : routes.get(service);
      while (method === "CONNECT" && service !== undefined && (port === undefined || !(await accepts(port))) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        port = routes.get(service);
      }
      if (method !== "CONNECT" || port === undefined) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nno route for ${target} (the test routes only the Services its host processes serve)\n`);
        return;
      }
      const upstream = connect(port, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      open.add(upstream);
      upstream.on("close", () => open.delete(upstream));
      upstream.on("error", (error) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\n${target}: ${error.message}\n`));
      client.on("error", () => upstream.destroy());
    };
    client.on("data", (chunk: Buffer) => void onData(chunk).catch(() => client.destroy()));
    client.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const tcp = createServer((socket) => server.emit("connection", socket));
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
  const proxyUrl = `http://127.0.0.1:${(tcp.address() as { port: number }).port}`;
  const configFile = path.join(dir, "egress-selector.yaml");
  writeFileSync(
    configFile,
    [
      "apiVersion: apiserver.k8s.io/v1beta1",
      "kind: EgressSelectorConfiguration",
      "egressSelections:",
      "- name: cluster",
      "  connection:",
      "    proxyProtocol: HTTPConnect",
      "    transport:",
      "      uds:",
      `        udsName: ${socketPath}`,
      "",
    ].join("\n"),
  );
  egress = {
    configFile,
    proxyUrl,
    route: (service, port) => routes.set(service, port),
    connects,
    stop: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => { resolve(); }));
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return egress;
}

/** A `lookup` that finds a ClusterIP among the API server's Services. */
export function clusterIpLookup(server: { request(method: string, apiPath: string): Promise<{ status: number; json: Record<string, unknown> }> }) {
  return async (clusterIp: string): Promise<string | undefined> => {
    const answer = await server.request("GET", "/api/v1/services");
    const services = (answer.json.items as { metadata: { name: string; namespace: string }; spec?: { clusterIP?: string } }[] | undefined) ?? [];
    const found = services.find((service) => service.spec?.clusterIP === clusterIp);
    return found ? `${found.metadata.name}.${found.metadata.namespace}` : undefined;
  };
}
