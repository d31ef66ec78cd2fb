import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { carenClusterConfigSchema } from "../../infra/model/platform/hetzner-cluster-class";
import { carenConfigKind, readCarenSchemas, withoutUniqueItems, type CarenSchemas } from "../support/caren-variables";
import { objectOf } from "../support/capi-in-the-loop";
import { runStack } from "../support/fleet-run";
import { kubeApiServerBinaries, startKubeApiServer, type KubeApiServer, type KubeResponse } from "../support/kube-apiserver";
import { skipIfDeclared } from "../support/unverified";
import type { Crd } from "../support/upstream-crds";

// Every tenant's `clusterConfig`, as the program declares it for the dev and prod stacks, against
// the schema CAREN publishes for the discovery handler the class uses: the `spec` of CAREN's own
// CRD for that provider (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// common/pkg/capi/clustertopology/variables/fromcrdyaml.go takes the CRD's `spec` as the
// variable schema). The executor is a real kube-apiserver: the CRD is installed (with
// `uniqueItems` stripped, which CRD schemas forbid and CAPI variable schemas allow) and each value
// is sent as the `spec` of a server-side dry-run create with strict field validation, so unknown
// fields, enums, patterns and CEL rules are all checked by the API server itself. CAPI's own
// webhook checks the same values against the converted schema in tests/in-the-loop/capi-in-the-loop.test.ts.
// Sources (tests/support/caren-variables.ts): CAREN's api Go module at the catalog's version, else the
// upstream data copy, else the test says the values are unverified.

const stacks = ["dev", "prod"] as const;
const buildTimeoutMs = 30 * 60_000;

let server: KubeApiServer | undefined;
let schemas: CarenSchemas | undefined;
let crd: Crd | undefined;
const report: string[] = [];
const values: { stack: string; tenant: string; clusterConfig: Record<string, unknown> }[] = [];

const message = (response: KubeResponse) => (typeof response.json.message === "string" ? response.json.message : JSON.stringify(response.json).slice(0, 400));

/** A server-side dry-run create of a config object with `spec`, strictly validated. */
async function dryRunCreate(name: string, spec: unknown): Promise<KubeResponse> {
  const group = crd!.spec.group;
  const version = crd!.spec.versions[0]!.name;
  const plural = (crd!.spec.names as { kind: string; plural?: string }).plural ?? "";
  const object = { apiVersion: `${group}/${version}`, kind: crd!.spec.names.kind, metadata: { name, namespace: "default" }, spec };
  return server!.request("POST", `/apis/${group}/${version}/namespaces/default/${plural}?dryRun=All&fieldValidation=Strict`, object);
}

describe(`every tenant's clusterConfig against CAREN's own ${carenConfigKind(carenClusterConfigSchema, "cluster")} schema, on a real kube-apiserver`, () => {
  beforeAll(async () => {
    schemas = readCarenSchemas();
    if ("unavailable" in schemas) {
      report.push(`UNVERIFIED: CAREN's schemas are unavailable (${schemas.unavailable})`);
      return;
    }
    crd = schemas.crds.find((candidate) => candidate.spec.names.kind === carenConfigKind(carenClusterConfigSchema, "cluster"));
    if (!crd) throw new Error(`${schemas.via}: no ${carenConfigKind(carenClusterConfigSchema, "cluster")} CRD`);
    for (const stack of stacks) {
      const { registrations } = await runStack(stack);
      for (const registration of registrations.filter((r) => r.type === "kubernetes:cluster.x-k8s.io/v1beta2:Cluster")) {
        const cluster = objectOf(registration) as { metadata: { name?: string }; spec?: { topology?: { variables?: { name: string; value: unknown }[] } } };
        const clusterConfig = cluster.spec?.topology?.variables?.find((v) => v.name === "clusterConfig")?.value as Record<string, unknown> | undefined;
        if (!clusterConfig) throw new Error(`${stack}: Cluster ${cluster.metadata.name ?? "?"} has no clusterConfig`);
        values.push({ stack, tenant: cluster.metadata.name ?? "?", clusterConfig });
      }
    }
    const started = Date.now();
    server = await startKubeApiServer(await kubeApiServerBinaries(buildTimeoutMs));
    const installed = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", withoutUniqueItems(crd));
    if (installed.status >= 300) throw new Error(`CRD ${crd.metadata.name}: HTTP ${installed.status}: ${message(installed)}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const probe = await dryRunCreate("probe", {});
      if (probe.status < 300) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not served: HTTP ${probe.status}: ${message(probe)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    report.push(`${crd.metadata.name} from ${schemas.via}, installed without uniqueItems into ${server.binaries.kubeApiserverVersion} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, buildTimeoutMs + 5 * 60_000);

  afterAll(async () => {
    await server?.stop();
    if (report.length > 0) console.log(`CAREN schema:\n  ${report.join("\n  ")}`);
  });

  it("accepts every dev and prod tenant's clusterConfig as the spec", async (context) => {
    if (schemas && "unavailable" in schemas) return skipIfDeclared(context, `CAREN's schemas are unavailable: ${schemas.unavailable}`);
    expect(values.length).toBeGreaterThanOrEqual(stacks.length);
    for (const { stack, tenant, clusterConfig } of values) {
      const response = await dryRunCreate(tenant, clusterConfig);
      report.push(`${stack}/${tenant}: HTTP ${response.status}${response.warnings.length > 0 ? `, warnings: ${response.warnings.join(" | ")}` : ""} (${Object.keys(clusterConfig).sort().join(", ")})`);
      expect(response.status, `${stack}/${tenant}: ${message(response)}`).toBeLessThan(300);
      expect(response.warnings, `${stack}/${tenant}`).toEqual([]);
    }
  });

  it("rejects a misspelled field and a wrong value (negative controls)", async (context) => {
    if (schemas && "unavailable" in schemas) return skipIfDeclared(context, `CAREN's schemas are unavailable: ${schemas.unavailable}`);
    const base = values.find((value) => value.clusterConfig.ntp !== undefined) ?? values[0]!;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["a misspelled field (ntpServers)", { ...base.clusterConfig, ntpServers: ["0.pool.ntp.org"] }, /unknown field "spec.ntpServers"/],
      ["ntp.servers with a name that is no host", { ...base.clusterConfig, ntp: { servers: ["not a host!"] } }, /valid IP address, hostname/],
      ["kubeProxy.mode ipvs", { ...base.clusterConfig, kubeProxy: { mode: "ipvs" } }, /spec.kubeProxy.mode/],
    ];
    for (const [what, spec, pattern] of cases) {
      const response = await dryRunCreate(`${base.tenant}-bad`, spec);
      report.push(`rejected ${what}: HTTP ${response.status}: ${message(response).slice(0, 240)}`);
      expect(response.status, what).toBeGreaterThanOrEqual(400);
      expect(message(response), what).toMatch(pattern);
    }
  });
});
