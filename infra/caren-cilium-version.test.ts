import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { carenCiliumVersionPatch, carenNamespace, carenValues } from "./model/platform/caren";
import { carenCiliumAddonKey, carenHelmAddonsConfigMap } from "./model/platform/caren-helm-addons";
import { catalog } from "./model/versions/catalog";
import { carenChartDir } from "../tests/support/caren-variables";
import { runStack } from "../tests/support/fleet-run";
import { kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../tests/support/kube-apiserver";
import type { Registration } from "../tests/support/pulumi-mocks";
import { skipIfDeclared } from "../tests/support/unverified";

// The fleet's Cilium version reaches CAREN through one key of CAREN's helm-addons ConfigMap
// (infra/model/platform/caren-helm-addons.ts). The program's ConfigMapPatch is applied to a real
// kube-apiserver over a ConfigMap created the way Helm creates the chart's: does server-side
// apply set only that key, and does it need the force the patch asks for?

const patchType = "kubernetes:core/v1:ConfigMapPatch";
const configMapPath = `/api/v1/namespaces/${carenNamespace}/configmaps/${carenHelmAddonsConfigMap}`;
/**
 * A stand-in for the ConfigMap CAREN's chart creates (templates/helm-config.yaml): two entries in
 * CAREN's format with made-up versions, created with Helm's field manager and operation (Helm 3
 * creates and updates objects, it does not apply them).
 */
const chartEntry = (chart: string, version: string) => `ChartName: ${chart}\nChartVersion: ${version}\nRepositoryURL: https://charts.example.test/\n`;
const helmCreated = { cilium: chartEntry("cilium", "0.0.1-chart"), nfd: chartEntry("node-feature-discovery", "0.0.2-chart") };

let server: KubeApiServer | undefined;
let registrations: Registration[] = [];
const S = () => {
  if (!server) throw new Error("no API server (see beforeAll)");
  return server;
};
const patchObject = () => {
  const patch = registrations.find((r) => r.type === patchType && (r.inputs.metadata as { name?: string }).name === carenHelmAddonsConfigMap);
  if (!patch) throw new Error(`the program registers no ${patchType} for ${carenHelmAddonsConfigMap}`);
  return patch;
};
const apply = (body: unknown, force: boolean) =>
  S().request("PATCH", `${configMapPath}?fieldManager=pulumi-kubernetes-patch&fieldValidation=Strict&force=${force}`, body, "application/apply-patch+yaml");

beforeAll(async () => {
  ({ registrations } = await runStack("prod"));
  server = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "caren-cilium-version");
}, 45 * 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("the fleet's Cilium version in CAREN's helm-addons ConfigMap", () => {
  it("re-applies the patch whenever the CAREN release changes (Helm's three-way upgrade restores CAREN's own entry)", () => {
    const annotation = (release?: Parameters<typeof carenCiliumVersionPatch>[0]) => carenCiliumVersionPatch(release).metadata.annotations["capi-fleet.io/caren-release"];
    const registered = (patchObject().inputs.metadata as { annotations: Record<string, string> }).annotations["capi-fleet.io/caren-release"];
    expect(registered).toBe(annotation());
    expect(annotation({ pin: { ...catalog.caren.chart, version: "v0.51.0" }, values: carenValues })).not.toBe(registered);
    expect(annotation({ pin: catalog.caren.chart, values: { ...carenValues, deployDefaultClusterClasses: true } })).not.toBe(registered);
  });

  it("patches the ConfigMap CAREN's chart names by default, after the release and before the readiness gate", (context) => {
    const patch = patchObject();
    const release = registrations.find((r) => r.type === "kubernetes:helm.sh/v3:Release" && r.inputs.chart === catalog.caren.chart.chart)!;
    const gate = registrations.find((r) => r.type.endsWith(":ExtensionConfigPatch"))!;
    expect(patch.dependencies).toContain(release.urn);
    expect(gate.dependencies).toContain(patch.urn);
    expect((release.inputs.values as Record<string, unknown>).helmAddonsConfigMap).toBeUndefined();
    const chart = carenChartDir();
    if ("unavailable" in chart) return skipIfDeclared(context, chart.unavailable);
    // nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: charts/cluster-api-runtime-extensions-nutanix/values.yaml
    expect((parse(readFileSync(path.join(chart.dir, "values.yaml"), "utf8")) as { helmAddonsConfigMap: string }).helmAddonsConfigMap).toBe(carenHelmAddonsConfigMap);
  });

  it("sets only the cilium key, in CAREN's fields, over Helm's ownership, and needs the force it asks for", async () => {
    const namespace = await S().request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: carenNamespace } });
    expect(namespace.status).toBe(201);
    const created = await S().request("POST", `/api/v1/namespaces/${carenNamespace}/configmaps?fieldManager=helm`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: carenHelmAddonsConfigMap },
      data: helmCreated,
    });
    expect(created.status).toBe(201);
    const patch = structuredClone(patchObject().inputs);
    expect((patch.metadata as { annotations: Record<string, string> }).annotations["pulumi.com/patchForce"]).toBe("true");

    // Negative control: without force, Helm's ownership of the key is a conflict.
    const unforced = await apply(patch, false);
    expect(unforced.status).toBe(409);
    expect(JSON.stringify(unforced.json)).toContain(`.data.${carenCiliumAddonKey}`);

    const forced = await apply(patch, true);
    expect(forced.status, JSON.stringify(forced.json)).toBe(200);
    expect(forced.warnings).toEqual([]);
    const data = (await S().request("GET", configMapPath)).json.data as Record<string, string>;
    // What CAREN's HelmChartGetter.For unmarshals (pkg/handlers/lifecycle/config/cm.go, HelmChart's yaml tags).
    expect(parse(data[carenCiliumAddonKey]!)).toEqual({ ChartName: catalog.cilium.chart, ChartVersion: catalog.cilium.version, RepositoryURL: catalog.cilium.repository });
    expect(data.nfd).toBe(helmCreated.nfd);
  });
});
