import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { carenChartDir } from "../../../tests/support/caren-variables";
import { capiModuleDir, moduleDir } from "../../../tests/support/cluster-class-topology";
import { dirOrThrow } from "../../../tests/support/upstream";
import { catalog, type MinorRange } from "./catalog";
import { compareMinors } from "./kubernetes-version";

// The catalog's claims checked against upstream files read at test time (the Go module proxy, through
// tests/support/upstream.ts). The hcloud CCM and CSI driver are not here: the proxy refuses both modules, so
// their catalog entries cite readings of the source store instead (see their comments).

const versionsMd = "docs/book/src/reference/versions.md";

/**
 * The Kubernetes minors one CAPI release supports, from the core provider table of a
 * versions.md (`### Core provider (cluster-api-controller)`): the column of the release's line
 * ("v1.12" or "v1.12, _Maintenance Mode_"); per row "✓" = management and workload,
 * "✓ (only workload)", and "✓ >= vX.Y.Z" = only from that patch on. An unknown cell throws.
 */
function coreProviderSupport(markdown: string, release: string): { management: string[]; workload: string[] } {
  const section = markdown.split("### Core provider (`cluster-api-controller`)")[1]?.split("\n### ")[0];
  if (section === undefined) throw new Error("no core provider table");
  const rows = section.split("\n").filter((line) => line.startsWith("|"));
  const cellsOf = (row: string) => row.split("|").map((cell) => cell.trim());
  const line = `v${semver.major(release)}.${semver.minor(release)}`;
  const column = cellsOf(rows[0] ?? "").findIndex((cell) => cell === line || cell.startsWith(`${line},`));
  if (column < 0) throw new Error(`the core provider table has no ${line} column`);
  const management: string[] = [];
  const workload: string[] = [];
  for (const row of rows.slice(2)) {
    const cells = cellsOf(row);
    const minor = /^Kubernetes v(\d+\.\d+)$/.exec(cells[1] ?? "")?.[1];
    const cell = cells[column] ?? "";
    if (minor === undefined) throw new Error(`unknown row ${row}`);
    if (cell === "") continue;
    const match = /^✓(?: >= (v\d+\.\d+\.\d+))?( \(only workload\))?$/.exec(cell);
    if (!match) throw new Error(`unknown cell ${JSON.stringify(cell)} in row ${minor}`);
    if (match[1] !== undefined && semver.lt(release, match[1])) continue;
    workload.push(minor);
    if (match[2] === undefined) management.push(minor);
  }
  return { management, workload };
}

/** The minors of a range, in order. */
function minorsOf(range: MinorRange): string[] {
  const [major, min] = range.min.split(".").map(Number) as [number, number];
  const max = Number(range.max.split(".")[1]);
  return Array.from({ length: max - min + 1 }, (_, i) => `${major}.${min + i}`);
}

/** Contiguous minors as a range (a gap would not be one). */
function rangeOf(minors: string[]): MinorRange {
  const sorted = [...minors].sort(compareMinors);
  const range = { min: sorted[0]!, max: sorted.at(-1)! };
  expect(minorsOf(range)).toEqual(sorted);
  return range;
}

describe("Cluster API's Kubernetes support (versions.md, core provider table)", () => {
  const pinned = catalog.clusterApi.version;

  it("the support table of catalog.clusterApi.supportTableRelease gives exactly the catalog's ranges for the pinned patch", () => {
    const source = catalog.clusterApi.supportTableRelease;
    expect(semver.gt(source, pinned), `${source} is newer than the pin ${pinned}`).toBe(true);
    const table = readFileSync(path.join(moduleDir("sigs.k8s.io/cluster-api", source), versionsMd), "utf8");
    const support = coreProviderSupport(table, pinned);
    expect({ management: rangeOf(support.management), workload: rangeOf(support.workload) }).toEqual({
      management: catalog.clusterApi.managementKubernetes,
      workload: catalog.clusterApi.workloadKubernetes,
    });
  }, 11 * 60_000);

  it("the pinned release's own copy predates 1.36: it lists every minor of the catalog's ranges but 1.36", () => {
    // Deliberate difference: release-1.12 never got the "Kubernetes v1.36 | ✓ >= v1.12.8" row that
    // main (and the supportTableRelease tag) carries. If the pinned tree ever lists it, cite that instead.
    const own = coreProviderSupport(readFileSync(path.join(capiModuleDir(), versionsMd), "utf8"), pinned);
    expect(own.management.every((minor) => minorsOf(catalog.clusterApi.managementKubernetes).includes(minor))).toBe(true);
    expect(own.workload.every((minor) => minorsOf(catalog.clusterApi.workloadKubernetes).includes(minor))).toBe(true);
    expect(minorsOf(catalog.clusterApi.managementKubernetes).filter((minor) => !own.management.includes(minor))).toEqual(["1.36"]);
    expect(minorsOf(catalog.clusterApi.workloadKubernetes).filter((minor) => !own.workload.includes(minor))).toEqual(["1.36"]);
  }, 11 * 60_000);

  it("negative controls: a patch below the row's minimum loses 1.36, only-workload rows stay out of management, a wrong claim differs", () => {
    const table = readFileSync(path.join(moduleDir("sigs.k8s.io/cluster-api", catalog.clusterApi.supportTableRelease), versionsMd), "utf8");
    const older = coreProviderSupport(table, "v1.12.7");
    expect(rangeOf(older.management).max).toBe("1.35");
    expect(rangeOf(older.workload).max).toBe("1.35");
    const current = coreProviderSupport(table, pinned);
    expect(current.workload.filter((minor) => !current.management.includes(minor)).length).toBeGreaterThan(0);
    expect(rangeOf(current.management)).not.toEqual({ ...catalog.clusterApi.managementKubernetes, max: "1.37" });
    expect(() => coreProviderSupport(table.replace("✓ >= v1.12.8", "✓ maybe"), pinned)).toThrow(/unknown cell/);
    expect(() => coreProviderSupport(table, "v0.9.0")).toThrow(/no v0\.9 column/);
  }, 11 * 60_000);
});

describe("cert-manager at the catalog's version", () => {
  const { chart, version } = catalog.certManager.chart;

  it("is a release tag the Go module proxy resolves, and its chart is the one the catalog names, with the crds.enabled value the program sets", () => {
    // github.com/cert-manager/cert-manager@<pin>: the proxy resolves the tag (v1.21.2: 2026-09-10).
    const dir = moduleDir("github.com/cert-manager/cert-manager", version);
    expect(path.basename(dir)).toBe(`cert-manager@${version}`);
    const chartDir = path.join(dir, "deploy", "charts", chart);
    const chartYaml = parse(readFileSync(path.join(chartDir, "Chart.yaml"), "utf8")) as { name?: string };
    expect(chartYaml.name).toBe(chart);
    // components/cluster-api sets `crds.enabled: true`; the chart's default is false.
    const values = parse(readFileSync(path.join(chartDir, "values.yaml"), "utf8")) as { crds?: { enabled?: unknown } };
    expect(values.crds?.enabled).toBe(false);
  }, 11 * 60_000);
});

describe("Flux at the catalog's distribution", () => {
  const operatorDir = () => moduleDir("github.com/controlplaneio-fluxcd/flux-operator", `v${catalog.flux.operatorChart.version}`);
  /** A controller's image tag in the manifests the operator installs for a distribution. */
  const bundledTag = (distribution: string, controller: string) => {
    const file = path.join(operatorDir(), "config", "data", "flux", `v${distribution}`, `${controller}.yaml`);
    return new RegExp(`image: fluxcd/${controller}:(v[0-9.]+)\\n`).exec(readFileSync(file, "utf8"))?.[1];
  };

  it("the controllers the tests build are the ones the operator installs for the pinned distribution", () => {
    expect({ sourceController: bundledTag(catalog.flux.distribution, "source-controller"), kustomizeController: bundledTag(catalog.flux.distribution, "kustomize-controller") }).toEqual(
      catalog.flux.controllers,
    );
  });

  it("the operator bundles the pinned distribution, and which newer ones (negative control: the next patch ships other controllers)", () => {
    const bundled = readdirSync(path.join(operatorDir(), "config", "data", "flux")).map((name) => name.replace(/^v/, ""));
    expect(bundled).toContain(catalog.flux.distribution);
    const next = semver.inc(catalog.flux.distribution, "patch")!;
    if (bundled.includes(next)) expect(bundledTag(next, "source-controller")).not.toBe(catalog.flux.controllers.sourceController);
  });
});

/** `NAME ?= value` of a Makefile, with `$(OTHER)` expanded from the same file. */
function makeVariable(makefile: string, name: string): string {
  const value = new RegExp(`^${name} \\?= (.+)$`, "m").exec(makefile)?.[1]?.trim();
  if (value === undefined) throw new Error(`the Makefile sets no ${name}`);
  return value.replace(/\$\((\w+)\)/g, (_, other: string) => makeVariable(makefile, other));
}

describe("the platform's images (what the images mirror moves)", () => {
  it("Cluster API's, CAAPH's and the operator's release images are their Makefiles' production registry and image names", () => {
    const capi = readFileSync(path.join(capiModuleDir(), "Makefile"), "utf8");
    expect(catalog.clusterApi.images).toEqual({
      core: `${makeVariable(capi, "PROD_REGISTRY")}/${makeVariable(capi, "IMAGE_NAME")}`,
      kubeadmBootstrap: `${makeVariable(capi, "PROD_REGISTRY")}/${makeVariable(capi, "KUBEADM_BOOTSTRAP_IMAGE_NAME")}`,
      kubeadmControlPlane: `${makeVariable(capi, "PROD_REGISTRY")}/${makeVariable(capi, "KUBEADM_CONTROL_PLANE_IMAGE_NAME")}`,
    });
    const caaph = readFileSync(path.join(moduleDir("sigs.k8s.io/cluster-api-addon-provider-helm", catalog.caaph.version), "Makefile"), "utf8");
    expect(catalog.caaph.image).toBe(`${makeVariable(caaph, "PROD_REGISTRY")}/${makeVariable(caaph, "IMAGE_NAME")}`);
    const operator = readFileSync(path.join(moduleDir("sigs.k8s.io/cluster-api-operator", `v${catalog.clusterApiOperator.chart.version}`), "Makefile"), "utf8");
    expect(catalog.clusterApiOperator.image).toBe(`${makeVariable(operator, "PROD_REGISTRY")}/${makeVariable(operator, "IMAGE_NAME")}`);
  }, 11 * 60_000);

  it("cert-manager's chart builds its images from imageRegistry, which the program sets to the mirror, and keeps their path", () => {
    const values = parse(readFileSync(path.join(moduleDir("github.com/cert-manager/cert-manager", catalog.certManager.chart.version), "deploy", "charts", "cert-manager", "values.yaml"), "utf8")) as {
      imageRegistry?: string;
      imageNamespace?: string;
      image?: { name?: string };
    };
    // The public image is quay.io/jetstack/cert-manager-controller: <imageRegistry>/<imageNamespace>/<name>.
    expect([values.imageRegistry, values.imageNamespace, values.image?.name]).toEqual(["quay.io", "jetstack", "cert-manager-controller"]);
  }, 11 * 60_000);

  it("CAREN's image is its chart's image.repository", () => {
    const values = parse(readFileSync(path.join(dirOrThrow("CAREN's chart", carenChartDir()), "values.yaml"), "utf8")) as { image?: { repository?: string } };
    expect(values.image?.repository).toBe(catalog.caren.image);
  });

  it("the Flux Operator's default distribution registry is the catalog's", () => {
    const options = readFileSync(path.join(moduleDir("github.com/controlplaneio-fluxcd/flux-operator", `v${catalog.flux.operatorChart.version}`), "internal", "builder", "options.go"), "utf8");
    expect(options).toContain(`Registry:           "${catalog.flux.registry}",`);
  }, 11 * 60_000);
});
