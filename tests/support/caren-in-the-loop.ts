import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml, parseAllDocuments } from "yaml";
import { carenValues } from "../../infra/model/platform/caren";
import { catalog } from "../../infra/model/versions/catalog";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import type { ExtensionContext, KubeObject, LoopExtension } from "./capi-in-the-loop";
import { carenChartDir } from "./caren-variables";
import { coalesceValues } from "./helm-values";
import { freePort } from "./kube-apiserver";
import { localServerCertificate } from "./script-harness";
import { downloadModule } from "./upstream";

// The real CAREN manager in CAREN's place in CAPI in the loop (tests/support/capi-in-the-loop.ts), wired
// the way its chart wires it (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// charts/cluster-api-runtime-extensions-nutanix/, read through the resolver, `carenChartDir`):
// - the manager's arguments: templates/deployment.yaml rendered with values.yaml and the fleet's
//   own chart values (components/caren `carenValues`); `$(POD_NAMESPACE)` as the kubelet expands it;
// - its admission webhooks: templates/webhooks.yaml, with `clientConfig.service` replaced by
//   `clientConfig.url` https://127.0.0.1:<port><path> and a test CA (cert-manager injects the CA there);
// - its ConfigMaps: the helm-addons one (templates/helm-config.yaml) and the default values
//   templates of the add-ons the fleet uses (templates/cni/cilium/…, templates/nfd/…, with the
//   chart's addons/ files), in CAREN's namespace.
// Only what the chart's templates use is rendered (`.Values…`, `index`, `default`, `include
// "chart.name"`, `range` over a map, `.Files.Get … | nindent`, `if`); anything else throws.
//
// Differences from a cluster, each on purpose: CAREN runs as a process with the loop's
// cluster-admin kubeconfig (not its ServiceAccount); its health probes on loopback, metrics off;
// its webhook and runtime-hooks server (one listener: common/pkg/server/server.go) listens on a
// random port of every interface, because CAREN's server takes no host (CAPI's managers are built
// with a loopback overlay; CAREN is run as built from its tag); the API server and CAPI reach it on
// 127.0.0.1. No CAAPH controller and no workload cluster run: a HelmChartProxy CAREN creates stays
// unready (CAREN's waiter then fails the hook after 30 s: pkg/handlers/lifecycle/addons/helmaddon.go,
// `waitToBeReady`), which is what a test sees and says.

/** The module whose release tag the binary is built from. */
export const carenModule = "github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix";

/** The environment variable that hands the test a CAREN manager binary built from the catalog's release tag. */
export const carenBinaryEnv = "CAPI_FLEET_CAREN_BIN";

/** The CAREN binary to run, or why there is none (the proxy's answer). Throws when the proxy serves CAREN: then it must be built from there. */
export function carenBinary(env: NodeJS.ProcessEnv = process.env): { path: string } | { unavailable: string } {
  const given = env[carenBinaryEnv];
  if (given) {
    if (!existsSync(given)) throw new Error(`${carenBinaryEnv}=${given}: no such file`);
    return { path: given };
  }
  const answer = downloadModule(carenModule, catalog.caren.chart.version, env);
  if ("refused" in answer) {
    return { unavailable: `${answer.refused}; ${carenBinaryEnv} (a CAREN manager built from the ${catalog.caren.chart.version} tag) runs it` };
  }
  throw new Error(
    `${carenModule}@${catalog.caren.chart.version} is served by the Go module proxy here (${answer.dir}), but this test does not build it: set ${carenBinaryEnv} to a manager built from it (CGO_ENABLED=0 go build ./cmd), or teach the test to build it`,
  );
}

type Values = Record<string, unknown>;


/** The chart, read through the resolver, with the few template functions its used templates need. */
export interface CarenChart {
  dir: string;
  via: string;
  name: string;
  namespace: string;
  values: Values;
  /** Evaluates one template expression (the text between `{{` and `}}`). */
  evaluate(expression: string, locals?: Record<string, unknown>): unknown;
  /** A template file with every action evaluated (throws on an action it does not know). */
  render(relative: string): string;
}

export function readCarenChart(namespace: string = platformNamespaces.caren): CarenChart | { unavailable: string } {
  const chart = carenChartDir();
  if ("unavailable" in chart) return chart;
  const chartYaml = parseYaml(readFileSync(path.join(chart.dir, "Chart.yaml"), "utf8")) as { name: string };
  const values = coalesceValues(parseYaml(readFileSync(path.join(chart.dir, "values.yaml"), "utf8")) as Values, { ...carenValues });
  const name = typeof values.nameOverride === "string" && values.nameOverride ? values.nameOverride : chartYaml.name;
  const lookup = (root: unknown, dotted: string): unknown =>
    dotted
      .split(".")
      .filter((key) => key !== "")
      .reduce<unknown>((node, key) => (node === undefined || node === null ? undefined : (node as Values)[key]), root);
  const evaluate = (raw: string, locals: Record<string, unknown> = {}): unknown => {
    const expression = raw.trim();
    let match: RegExpExecArray | null;
    if ((match = /^(?:include|template) "chart\.name" \.$/.exec(expression))) return name;
    if (expression === ".Release.Namespace") return namespace;
    if ((match = /^\.Values((?:\.[A-Za-z0-9_-]+)+)$/.exec(expression))) return lookup(values, match[1]!);
    if ((match = /^\(index \.Values((?:\.[A-Za-z0-9_-]+)+) "([^"]+)"\)((?:\.[A-Za-z0-9_-]+)+)$/.exec(expression))) {
      return lookup((lookup(values, match[1]!) as Values | undefined)?.[match[2]!], match[3]!);
    }
    if ((match = /^default (\S+) (\S+)$/.exec(expression))) {
      const value = evaluate(match[2]!, locals);
      return value === undefined || value === null || value === "" ? evaluate(match[1]!, locals) : value;
    }
    if ((match = /^\$(\w+)$/.exec(expression)) && match[1]! in locals) return locals[match[1]!];
    throw new Error(`CAREN chart: a template action this test does not render: {{ ${expression} }}`);
  };
  const text = (value: unknown): string => {
    if (value === undefined || value === null) return "";
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return `${value}`;
    return JSON.stringify(value);
  };
  const render = (relative: string): string => {
    let source = readFileSync(path.join(chart.dir, relative), "utf8");
    // `.Files.Get "<file>" | nindent N`, after a `{{-` that trims the line break before it. The
    // file goes in verbatim (Helm does not render it; CAREN renders it later), so after the actions.
    const files: string[] = [];
    source = source.replace(/\s*\{\{- \.Files\.Get "([^"]+)" \| nindent (\d+) \}\}/g, (_all, file: string, width: string) => {
      const content = readFileSync(path.join(chart.dir, file), "utf8").replace(/\n$/, "");
      files.push(`\n${content.split("\n").map((line) => `${" ".repeat(Number(width))}${line}`).join("\n")}`);
      return `@@CAREN-CHART-FILE-${files.length - 1}@@`;
    });
    const withFiles = (rendered: string) => rendered.replace(/@@CAREN-CHART-FILE-(\d+)@@/g, (_all, index: string) => files[Number(index)]!);
    // `{{ if .Values.x }}A{{ else }}B{{ end }}` inline.
    source = source.replace(/\{\{ if ([^}]+?) \}\}(.*?)\{\{ else \}\}(.*?)\{\{ end \}\}/g, (_all, condition: string, yes: string, no: string) => (evaluate(condition) ? yes : no));
    // A whole-file `{{- if … }} … {{- end -}}`: the file renders to nothing when false.
    const guard = /^\s*\{\{- if ([^}]+?) \}\}\s*$/m.exec(source);
    if (guard) {
      if (!evaluate(guard[1]!)) return withFiles("");
      source = source.replace(guard[0], "").replace(/\{\{- end -?\}\}\s*$/, "\n");
    }
    // `{{- range $k, $v := <map> }} … {{- end }}`: Helm iterates a map in key order.
    source = source.replace(/\n\s*\{\{- range \$(\w+), \$(\w+) := ([^}]+?) \}\}\n([\s\S]*?)\n\s*\{\{- end \}\}/g, (_all, key: string, value: string, over: string, body: string) => {
      const map = (evaluate(over) ?? {}) as Values;
      return Object.keys(map)
        .sort()
        .map((k) => `\n${body.replace(/\{\{ ([^}]+?) \}\}/g, (_a, inner: string) => text(evaluate(inner, { [key]: k, [value]: map[k] })))}`)
        .join("");
    });
    return withFiles(source.replace(/\{\{-? ([^}]+?) -?\}\}/g, (_all, inner: string) => text(evaluate(inner))));
  };
  return { dir: chart.dir, via: chart.via, name, namespace, values, evaluate, render };
}

/** The manager's arguments from templates/deployment.yaml (the container's `args`), `$(POD_NAMESPACE)` expanded. */
export function carenManagerArgs(chart: CarenChart): string[] {
  const source = readFileSync(path.join(chart.dir, "templates", "deployment.yaml"), "utf8");
  const start = source.indexOf("        args:\n");
  const end = source.indexOf("{{- if .Values.env }}", start);
  if (start === -1 || end === -1) throw new Error("CAREN chart: templates/deployment.yaml has no container args where this test expects them");
  const block = source.slice(start, end);
  // Render only the args block (the rest of the file uses helpers this test does not need).
  const rendered = (() => {
    let text = block.replace(/\n\s*\{\{- range \$(\w+), \$(\w+) := ([^}]+?) \}\}\n([\s\S]*?)\n\s*\{\{- end \}\}/g, (_all, key: string, value: string, over: string, body: string) => {
      const map = (chart.evaluate(over) ?? {}) as Values;
      return Object.keys(map)
        .sort()
        .map((k) => `\n${body.replace(/\{\{ ([^}]+?) \}\}/g, (_a, inner: string) => String(chart.evaluate(inner, { [key]: k, [value]: map[k] })))}`)
        .join("");
    });
    text = text.replace(/\{\{ ([^}]+?) \}\}/g, (_all, inner: string) => String(chart.evaluate(inner)));
    return text;
  })();
  const args = (parseYaml(rendered) as { args: string[] }).args;
  return args.map((arg) => arg.replaceAll("$(POD_NAMESPACE)", chart.namespace));
}

/** The chart's admission webhooks, pointed at `baseUrl` with `caPem`. */
export function carenWebhookConfigurations(chart: CarenChart, baseUrl: string, caPem: string): KubeObject[] {
  const configurations: KubeObject[] = [];
  for (const document of parseAllDocuments(chart.render("templates/webhooks.yaml"))) {
    const configuration = document.toJS() as (KubeObject & { webhooks?: { clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }[] }) | null;
    if (!configuration?.kind.endsWith("WebhookConfiguration")) continue;
    // cert-manager's CA injection is what the test CA replaces.
    delete configuration.metadata.annotations;
    for (const webhook of configuration.webhooks ?? []) {
      webhook.clientConfig = { url: `${baseUrl}${webhook.clientConfig.service?.path ?? "/"}`, caBundle: Buffer.from(caPem).toString("base64") };
    }
    configurations.push(configuration);
  }
  return configurations;
}

/** The chart's ConfigMaps CAREN reads at hook time: helm-addons, and the default values of Cilium and NFD (the add-ons the fleet uses). */
export function carenConfigMaps(chart: CarenChart): KubeObject[] {
  const files = ["templates/helm-config.yaml", "templates/cni/cilium/manifests/helm-addon-installation.yaml", "templates/nfd/manifests/helm-addon-installation.yaml"];
  return files.flatMap((file) => {
    const text = chart.render(file);
    if (text.trim() === "") return [];
    const object = parseYaml(text) as KubeObject;
    return [{ ...object, metadata: { ...object.metadata, namespace: chart.namespace } }];
  });
}

/** The real CAREN, started for the loop (see the file's comment). */
export interface RealCaren extends LoopExtension {
  logs(): string;
  args: string[];
  log: string;
  /** The whole log so far. */
  logText(): string;
  chart: CarenChart;
  child: ChildProcess;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A starter for `startCapiWithExtension`: runs `binary` as CAREN's chart would, registers its webhooks and ConfigMaps. */
export function startRealCaren(binary: string, chart: CarenChart): (context: ExtensionContext) => Promise<RealCaren> {
  return async ({ api, kubeconfig, work, progress }) => {
    const must = async (what: string, response: Promise<{ status: number; json: Record<string, unknown> }>, allowed: number[] = []) => {
      const got = await response;
      if (got.status >= 300 && !allowed.includes(got.status)) throw new Error(`${what}: HTTP ${got.status}: ${JSON.stringify(got.json).slice(0, 600)}`);
    };
    await must("namespace", api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: chart.namespace } }), [409]);
    for (const configMap of carenConfigMaps(chart)) {
      await must(`ConfigMap ${configMap.metadata.name ?? ""}`, api.request("POST", `/api/v1/namespaces/${chart.namespace}/configmaps`, configMap));
    }
    const tls = localServerCertificate("caren-webhooks");
    const certDir = path.join(work, "caren-certs");
    mkdirSync(certDir, { recursive: true });
    cpSync(path.join(tls.dir, "server.crt"), path.join(certDir, "tls.crt"));
    cpSync(path.join(tls.dir, "server.key"), path.join(certDir, "tls.key"));
    rmSync(tls.dir, { recursive: true, force: true });
    const port = await freePort();
    const health = await freePort();
    const chartArgs = carenManagerArgs(chart);
    const args = [
      ...chartArgs.map((arg) => (arg.startsWith("--webhook-cert-dir=") ? `--webhook-cert-dir=${certDir}` : arg)),
      `--webhook-port=${port}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      "--metrics-bind-address=0",
      "--v=2",
    ];
    const log = path.join(work, "caren.log");
    const fd = openSync(log, "a");
    const child = spawn("timeout", ["--kill-after=10", "3600", binary, ...args], {
      cwd: work,
      stdio: ["ignore", fd, fd],
      env: { ...process.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: chart.namespace },
    });
    closeSync(fd);
    const logText = () => {
      try {
        return readFileSync(log, "utf8");
      } catch {
        return "";
      }
    };
    const logs = () => `--- CAREN log (tail) ---\n${logText().trimEnd().split("\n").slice(-40).join("\n")}`;
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await new Promise<void>((resolve) => {
          child.once("exit", () => {
            resolve();
          });
        });
        clearTimeout(killer);
      }
    };
    process.once("exit", () => {
      child.kill("SIGKILL");
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`CAREN exited (${child.exitCode ?? child.signalCode}) before it was ready\n${logs()}`);
      const ready = await fetch(`http://127.0.0.1:${health}/readyz`).then(
        (response) => response.status,
        () => 0,
      );
      if (ready === 200) break;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`CAREN not ready within 120 s\n${logs()}`);
      }
      await sleep(250);
    }
    const url = `https://127.0.0.1:${port}`;
    for (const configuration of carenWebhookConfigurations(chart, url, tls.caPem)) {
      await must(`${configuration.kind} ${configuration.metadata.name ?? ""}`, api.request("POST", `/apis/admissionregistration.k8s.io/v1/${configuration.kind.toLowerCase()}s`, configuration));
    }
    progress(`CAREN ready on ${url} (${chart.via})`);
    return { url, caPem: tls.caPem, stop, logs, args, log, logText, chart, child };
  };
}
