import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, halt, type KubeApiServer } from "./kube-apiserver";
import type { ServiceEgress } from "./service-egress";

/**
 * Runs a real controller as a host process in place of the Deployment a chart or provider
 * installs (whose pods kwok only simulates): once its webhook serving Secret exists (issued
 * through cert-manager, as in the cluster), the certificate goes to a directory, the process starts
 * with its webhook on a loopback port, and the API server's egress sends its webhook Service there.
 */
export interface HostControllerSpec {
  name: string;
  /** The controller's binary; absent: `serve`, or else a STAND-IN webhook that allows every admission review (a provider that cannot be built here). */
  binary?: string;
  /** An in-process server instead of a binary (a named stand-in), given the issued certificate and the port. */
  serve?(tls: { certPem: string; keyPem: string; caPem: string; port: number }): Promise<{ stop(): Promise<void>; reload?(tls: { certPem: string; keyPem: string }): void }>;
  /** The Secret (tls.crt, tls.key) its webhook serves with: `namespace/name`; absent: it serves no webhook and starts at once. */
  servingSecret?: string;
  /** The webhook Service: `name.namespace` (with `servingSecret`). */
  webhookService?: string;
  /** More Services that reach the same port (a manager serving two Services, as CAREN's does). */
  alsoServes?: readonly string[];
  /** The Deployment (`namespace/name`) and container whose `args` the cluster holds: it starts once they exist, and `args` gets them. */
  deployedArgs?: { deployment: string; container: string };
  /** Its flags, given the kubeconfig file, the certificate directory, the webhook port and the deployed container's args (with `deployedArgs`). */
  args?(kubeconfig: string, certDir: string, webhookPort: number, deployed: readonly string[]): string[];
  env?: NodeJS.ProcessEnv;
}

export interface HostControllers {
  /** Names of the controllers started so far. */
  started: string[];
  logs(): string;
  stop(): Promise<void>;
}

export function runHostControllers(server: KubeApiServer, kubeconfigText: string, egress: ServiceEgress, specs: readonly HostControllerSpec[]): HostControllers {
  const dir = mkdtempSync(path.join(tmpdir(), "host-controllers-"));
  const kubeconfig = path.join(dir, "kubeconfig");
  writeFileSync(kubeconfig, kubeconfigText);
  const children: ChildProcess[] = [];
  const standIns: Server[] = [];
  const inProcess: { stop(): Promise<void> }[] = [];
  const reloads = new Map<HostControllerSpec, (tls: { certPem: string; keyPem: string }) => void>();
  const started: string[] = [];
  const pending = new Set(specs);
  const state = { running: true };
  /** What each started controller serves with now, to follow a re-issued Secret (a destroy and a new `up` issue new ones). */
  const serving = new Map<HostControllerSpec, { certDir: string; data: string; reload?(tls: { certPem: string; keyPem: string }): void }>();
  const loop = (async () => {
    while (state.running) {
      try {
        await step();
      } catch {
        // A request that failed (the API server busy or restarting): the next round tries again.
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  /**
   * Starts a controller binary, restarted when it exits, as a pod's container is (restartPolicy
   * Always): a controller that starts before its CRDs are served exits, and comes back. KUBECONFIG
   * is set for controllers that take no --kubeconfig flag.
   */
  function launchBinary(spec: HostControllerSpec, binary: string, certDir: string, port: number, deployed: readonly string[] = []) {
    const launch = () => {
      const fd = openSync(path.join(dir, `${spec.name}.log`), "a");
      const child = spawn("timeout", ["--kill-after=10", "3600", binary, ...(spec.args?.(kubeconfig, certDir, port, deployed) ?? [])], { cwd: dir, stdio: ["ignore", fd, fd], env: { ...process.env, KUBECONFIG: kubeconfig, ...spec.env } });
      closeSync(fd);
      children.push(child);
      child.once("exit", () => {
        if (state.running) setTimeout(launch, 1000);
      });
    };
    launch();
  }
  async function step() {
    {
      for (const [spec, current] of serving) {
        const [namespace, name] = (spec.servingSecret ?? "").split("/");
        const answer = await server.request("GET", `/api/v1/namespaces/${namespace}/secrets/${name}`);
        if (answer.status !== 200) continue;
        const data = answer.json.data as Record<string, string>;
        if (JSON.stringify(data) === current.data) continue;
        // As a Secret volume updates in a pod: the files change, and controller-runtime's certwatcher reloads them.
        for (const file of ["tls.crt", "tls.key"]) writeFileSync(path.join(current.certDir, file), Buffer.from(data[file] ?? "", "base64"));
        current.reload?.({ certPem: Buffer.from(data["tls.crt"] ?? "", "base64").toString("utf8"), keyPem: Buffer.from(data["tls.key"] ?? "", "base64").toString("utf8") });
        current.data = JSON.stringify(data);
      }
      for (const spec of [...pending]) {
        if (!spec.servingSecret || !spec.webhookService) {
          if (!spec.binary) throw new Error(`host controller ${spec.name}: neither a webhook nor a binary`);
          launchBinary(spec, spec.binary, "", 0);
          started.push(spec.name);
          pending.delete(spec);
          continue;
        }
        let deployed: string[] = [];
        if (spec.deployedArgs) {
          const [deploymentNamespace, deploymentName] = spec.deployedArgs.deployment.split("/");
          const deployment = await server.request("GET", `/apis/apps/v1/namespaces/${deploymentNamespace}/deployments/${deploymentName}`);
          if (deployment.status !== 200) continue;
          const containers = (deployment.json as { spec: { template: { spec: { containers: { name: string; args?: string[] }[] } } } }).spec.template.spec.containers;
          deployed = containers.find((container) => container.name === spec.deployedArgs?.container)?.args ?? [];
        }
        const [namespace, name] = spec.servingSecret.split("/");
        const answer = await server.request("GET", `/api/v1/namespaces/${namespace}/secrets/${name}`);
        if (answer.status !== 200) continue;
        const data = answer.json.data as Record<string, string>;
        const certDir = path.join(dir, spec.name, "certs");
        mkdirSync(certDir, { recursive: true });
        for (const file of ["tls.crt", "tls.key"]) writeFileSync(path.join(certDir, file), Buffer.from(data[file] ?? "", "base64"));
        const port = await freePort();
        if (spec.binary) {
          launchBinary(spec, spec.binary, certDir, port, deployed);
        } else if (spec.serve) {
          const served = await spec.serve({ certPem: readFileSync(path.join(certDir, "tls.crt"), "utf8"), keyPem: readFileSync(path.join(certDir, "tls.key"), "utf8"), caPem: Buffer.from(data["ca.crt"] ?? "", "base64").toString("utf8"), port });
          inProcess.push(served);
          const reload = served.reload?.bind(served);
          if (reload) reloads.set(spec, reload);
        } else {
          const log = path.join(dir, `${spec.name}.log`);
          const standIn = createServer({ cert: readFileSync(path.join(certDir, "tls.crt")), key: readFileSync(path.join(certDir, "tls.key")) }, (request, response) => {
            let body = "";
            request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
            request.on("end", () => {
              const review = JSON.parse(body || "{}") as { apiVersion?: string; kind?: string; request?: { uid?: string; kind?: { kind?: string }; name?: string } };
              writeFileSync(log, `allowed ${request.url ?? ""} ${review.request?.kind?.kind ?? "?"} ${review.request?.name ?? ""}\n`, { flag: "a" });
              response.writeHead(200, { "Content-Type": "application/json" });
              response.end(JSON.stringify({ apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: review.request?.uid ?? "", allowed: true } }));
            });
          });
          await new Promise<void>((resolve) => standIn.listen(port, "127.0.0.1", resolve));
          standIns.push(standIn);
          reloads.set(spec, (tls) => { standIn.setSecureContext({ cert: tls.certPem, key: tls.keyPem }); });
        }
        egress.route(spec.webhookService, port);
        for (const service of spec.alsoServes ?? []) egress.route(service, port);
        started.push(spec.name);
        pending.delete(spec);
        serving.set(spec, { certDir, data: JSON.stringify(data), reload: reloads.get(spec) });
      }
    }
  }
  return {
    started,
    logs: () =>
      specs
        .map((spec) => {
          let text = "(not started)";
          try {
            text = readFileSync(path.join(dir, `${spec.name}.log`), "utf8").split("\n").slice(-40).join("\n");
          } catch {
            /* not started */
          }
          return `--- ${spec.name} log (tail) ---\n${text}`;
        })
        .join("\n"),
    stop: async () => {
      state.running = false;
      await loop;
      for (const standIn of standIns) standIn.close();
      for (const served of inProcess) await served.stop();
      await halt(children);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
