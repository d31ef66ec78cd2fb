import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { catalog, type HelmChartPin } from "../../infra/model/versions/catalog";
import { carenChartDir } from "./caren-variables";
import { dirOrThrow, upstreamDir, type Upstream } from "./upstream";

/**
 * A classic Helm chart repository on loopback, `mirrors.charts` for a real `up`: an index.yaml and
 * one archive per chart, packaged from the unmodified chart sources at the catalog's versions the
 * way each project's release packages them (version and appVersion set, the operator's generated
 * template added). Sources, through the resolver (tests/support/upstream.ts):
 * - cert-manager: github.com/cert-manager/cert-manager@<version> deploy/charts/cert-manager
 *   (make/manifests.mk: `.version = .appVersion = $(VERSION)`, `helm package`);
 * - cluster-api-operator: sigs.k8s.io/cluster-api-operator@v<version> hack/charts/cluster-api-operator
 *   plus templates/operator-components.yaml = `kustomize build ./config/chart` (Makefile,
 *   release-chart; built here with the toolchain kubectl's kustomize, `kubectl kustomize`),
 *   version and appVersion = the tag without its v;
 * - CAREN: its charts/cluster-api-runtime-extensions-nutanix (the data copy where the proxy refuses
 *   it), version and appVersion = the tag.
 * - flux-operator: a STAND-IN chart (fluxOperatorChartSource): its chart lives in another repository
 *   that no module carries.
 */

export interface ChartMirror {
  url: string;
  /** Chart name → the archive's file name, for the test's own checks. */
  archives: Record<string, string>;
  /** Every path the repository was asked for (without the leading /), in order. */
  requests: string[];
  stop(): Promise<void>;
}

interface ChartSource {
  pin: HelmChartPin;
  dir: string;
  /** Files generated into the chart the way its release does, relative to the chart. */
  generated?: Record<string, string>;
  chartVersion: string;
}

const need = (what: string, answer: Upstream) => dirOrThrow(`the chart mirror cannot build ${what}`, answer);

/** The chart sources of the platform's management releases. */
export function managementChartSources(kubectl: string): ChartSource[] {
  const certManager = catalog.certManager.chart;
  const operator = catalog.clusterApiOperator.chart;
  const caren = catalog.caren.chart;
  const operatorRoot = need("cluster-api-operator", upstreamDir({ module: "sigs.k8s.io/cluster-api-operator", version: `v${operator.version}`, path: "" }));
  return [
    { pin: certManager, chartVersion: certManager.version, dir: need("cert-manager", upstreamDir({ module: "github.com/cert-manager/cert-manager", version: certManager.version, path: "deploy/charts/cert-manager" })) },
    {
      pin: operator,
      chartVersion: operator.version,
      dir: path.join(operatorRoot, "hack", "charts", "cluster-api-operator"),
      generated: { "templates/operator-components.yaml": execFileSync(kubectl, ["kustomize", path.join(operatorRoot, "config", "chart")], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }) },
    },
    { pin: caren, chartVersion: caren.version, dir: need("CAREN", carenChartDir()) },
  ];
}

/**
 * A STAND-IN for the Flux Operator's chart (published from controlplaneio-fluxcd/charts, which no
 * module the proxy serves carries): one template, the operator's own install manifests at the
 * catalog's version (`kubectl kustomize config/default` of github.com/controlplaneio-fluxcd/flux-operator,
 * its CRDs, RBAC, Service and Deployment), without their Namespace, which Helm creates for the
 * release (`createNamespace`). Written into `scratch`.
 */
export function fluxOperatorChartSource(kubectl: string, operatorModuleDir: string, scratch: string): ChartSource {
  const pin = catalog.flux.operatorChart;
  const dir = path.join(scratch, "flux-operator-chart");
  const manifests = execFileSync(kubectl, ["kustomize", path.join(operatorModuleDir, "config", "default")], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (manifests.includes("{{")) throw new Error("the Flux Operator's manifests hold Helm template braces; the stand-in chart would render them");
  const objects = parseAllDocuments(manifests)
    .map((document) => document.toJS() as { kind?: string } | null)
    .filter((object): object is { kind?: string } => object !== null && object.kind !== "Namespace");
  mkdirSync(path.join(dir, "templates"), { recursive: true });
  writeFileSync(path.join(dir, "Chart.yaml"), stringify({ apiVersion: "v2", name: pin.chart, description: "STAND-IN for the Flux Operator chart (tests/support/chart-mirror.ts)", version: pin.version }));
  writeFileSync(path.join(dir, "templates", "flux-operator.yaml"), objects.map((object) => stringify(object)).join("---\n"));
  return { pin, chartVersion: pin.version, dir };
}

/** Packages each chart into `dir` and writes the repository's index.yaml. */
export function buildChartRepository(sources: readonly ChartSource[], dir: string): Record<string, string> {
  const entries: Record<string, unknown[]> = {};
  const archives: Record<string, string> = {};
  const work = mkdtempSync(path.join(tmpdir(), "chart-mirror-"));
  try {
    for (const source of sources) {
      const name = source.pin.chart;
      const staged = path.join(work, name);
      cpSync(source.dir, staged, { recursive: true });
      for (const [file, text] of Object.entries(source.generated ?? {})) writeFileSync(path.join(staged, file), text);
      const chart = parse(readFileSync(path.join(staged, "Chart.yaml"), "utf8")) as Record<string, unknown>;
      chart.version = source.chartVersion;
      chart.appVersion = source.chartVersion;
      writeFileSync(path.join(staged, "Chart.yaml"), stringify(chart));
      const archive = `${name}-${source.chartVersion}.tgz`;
      execFileSync("tar", ["-czf", path.join(dir, archive), "-C", work, "--owner=0", "--group=0", name]);
      const digest = createHash("sha256").update(readFileSync(path.join(dir, archive))).digest("hex");
      (entries[name] ??= []).push({ ...chart, urls: [archive], digest, created: new Date(0).toISOString() });
      archives[name] = archive;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(path.join(dir, "index.yaml"), stringify({ apiVersion: "v1", entries, generated: new Date(0).toISOString() }));
  return archives;
}

/** Builds the repository in a temp dir and serves it over HTTP on loopback. */
export async function startChartMirror(sources: readonly ChartSource[]): Promise<ChartMirror> {
  const dir = mkdtempSync(path.join(tmpdir(), "chart-repository-"));
  const archives = buildChartRepository(sources, dir);
  const files = new Set(readdirSync(dir));
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    // By file name under any path, so one repository answers at several URLs (a mirror that moved).
    const requested = decodeURIComponent(new URL(request.url ?? "/", "http://mirror").pathname).replace(/^\/+/, "");
    const file = path.posix.basename(requested);
    requests.push(requested);
    if (!files.has(file)) {
      response.writeHead(404).end(`no ${file} in this mirror\n`);
      return;
    }
    response.writeHead(200, { "Content-Type": file.endsWith(".yaml") ? "application/x-yaml" : "application/gzip" }).end(readFileSync(path.join(dir, file)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the chart mirror did not get a port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    archives,
    requests,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

