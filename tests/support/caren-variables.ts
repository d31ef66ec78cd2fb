import { catalog } from "../../infra/model/versions/catalog";
import { upstreamDir, type Upstream } from "./upstream";
import { readSource, type Crd, type CrdSource } from "./upstream-crds";
import { CarenSchemaProvider, carenSchemaProviders } from "../../infra/model/facts/caren";

// The variable schemas CAREN publishes through its DiscoverVariables handlers, rebuilt at test
// time from CAREN's own CRDs (never copied into the repository):
// - nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: pkg/handlers/<provider>/
//   clusterconfig/variables.go and workerconfig/variables.go: variable `clusterConfig` /
//   `workerConfig`, `Required: true`, schema `<Provider>ClusterConfig{}.VariableSchema()` (the
//   generic provider has no worker schema);
// - api/v1alpha1/clusterconfig_types.go and nodeconfig_types.go: `VariableSchema()` is
//   `MustSchemaFromCRDYAML` of the embedded CRD (`//go:embed crds/...`);
// - common/pkg/capi/clustertopology/variables/fromcrdyaml.go: the schema is the CRD's `spec`,
//   converted field by field by `ConvertAPIExtensionsToJSONSchemaProps` (what it does not copy,
//   e.g. `allOf` or `x-kubernetes-int-or-string`, is gone; `uniqueItems` stays, which CAPI's
//   variable schemas allow and CRDs forbid).

/**
 * Where the CRDs come from, in order: CAREN's api module (a separate Go module from the root one,
 * tagged api/<version>) at the catalog's version; the project's upstream data copy next to the
 * checkout (the proxy refuses the module); else unavailable, and the caller skips only if
 * tests/unverified.json declares it (tests/support/unverified.ts).
 */
export const carenApiCrdSource: CrdSource = {
  name: "CAREN variable schemas",
  module: "github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix/api",
  version: catalog.caren.chart.version,
  dirs: ["v1alpha1/crds"],
  groups: ["caren.nutanix.com"],
  knownRefusal: "the Go module proxy here answers 403 (This module version is not available)",
  shared: `caren-${catalog.caren.chart.version}/crds`,
};

/** A ClusterClass variable as a DiscoverVariables response carries it (v1beta1 ClusterClassVariable). */
export interface DiscoveredVariable {
  name: string;
  required: boolean;
  schema: { openAPIV3Schema: Record<string, unknown> };
}

/** The CRD schemas CAREN publishes, or why they are unavailable. */
export type CarenSchemas =
  | { crds: Crd[]; via: string }
  | { unavailable: string };

export function readCarenSchemas(): CarenSchemas {
  const result = readSource(carenApiCrdSource);
  if ("unavailable" in result) return { unavailable: result.unavailable };
  return { crds: result.crds, via: result.via ?? `${carenApiCrdSource.module}@${carenApiCrdSource.version}` };
}

type Props = Record<string, unknown>;

/** The keys `ConvertAPIExtensionsToJSONSchemaProps` copies as they are (JSON names). */
const copied = [
  "type",
  "required",
  "maxItems",
  "minItems",
  "uniqueItems",
  "format",
  "maxLength",
  "minLength",
  "pattern",
  "maximum",
  "minimum",
  "exclusiveMaximum",
  "exclusiveMinimum",
  "x-kubernetes-preserve-unknown-fields",
  "default",
  "enum",
  "example",
  "description",
  "maxProperties",
  "minProperties",
];

/** fromcrdyaml.go `ConvertAPIExtensionsToJSONSchemaProps`, on the CRD's JSON form. */
export function convertCrdSchema(schema: Props): Props {
  const out: Props = {};
  for (const key of copied) if (schema[key] !== undefined) out[key] = schema[key];
  for (const key of ["maximum", "minimum"]) {
    if (typeof out[key] === "number" && !Number.isInteger(out[key])) throw new Error(`ClusterClass variables only support a whole number for ${key}`);
  }
  const additional = schema.additionalProperties;
  if (additional && typeof additional === "object") out.additionalProperties = convertCrdSchema(additional as Props);
  const properties = schema.properties as Record<string, Props> | undefined;
  if (properties && Object.keys(properties).length > 0) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, convertCrdSchema(value)]));
  }
  if (schema.items && typeof schema.items === "object") out.items = convertCrdSchema(schema.items as Props);
  const rules = schema["x-kubernetes-validations"] as Props[] | undefined;
  if (rules) {
    out["x-kubernetes-validations"] = rules.map((rule) =>
      Object.fromEntries(["rule", "message", "messageExpression", "reason", "fieldPath"].filter((key) => rule[key] !== undefined).map((key) => [key, rule[key]])),
    );
  }
  return out;
}

/** The `spec` schema of a CRD's only version, as in the CRD. */
export function specSchemaOf(crd: Crd): Props {
  const versions = (crd.spec as { versions: { schema?: { openAPIV3Schema?: { properties?: Record<string, Props> } } }[] }).versions;
  if (versions.length !== 1) throw new Error(`${crd.metadata.name}: expected exactly one version, got ${versions.length}`);
  const spec = versions[0]!.schema?.openAPIV3Schema?.properties?.spec;
  if (!spec) throw new Error(`${crd.metadata.name}: missing spec`);
  return spec;
}

/** The kind of the CRD behind a provider's cluster or worker schema (api/v1alpha1 type names). */
export function carenConfigKind(provider: CarenSchemaProvider, role: "cluster" | "worker"): string {
  const title = provider === "eks" || provider === "aws" ? provider.toUpperCase() : provider.charAt(0).toUpperCase() + provider.slice(1);
  return role === "cluster" ? `${title}ClusterConfig` : `${title}WorkerNodeConfig`;
}

/**
 * What CAREN's `<provider>clusterconfigvars-dv` / `<provider>workerconfigvars-dv` answer, by
 * handler name (without the ExtensionConfig suffix), for every provider whose CRD is there.
 */
export function carenDiscoveredVariables(crds: readonly Crd[]): Map<string, DiscoveredVariable[]> {
  const byKind = new Map(crds.map((crd) => [crd.spec.names.kind, crd]));
  const answers = new Map<string, DiscoveredVariable[]>();
  for (const provider of carenSchemaProviders) {
    for (const role of ["cluster", "worker"] as const) {
      const crd = byKind.get(carenConfigKind(provider, role));
      if (!crd) continue;
      const name = role === "cluster" ? "clusterConfig" : "workerConfig";
      answers.set(`${provider}${role}configvars-dv`, [{ name, required: true, schema: { openAPIV3Schema: convertCrdSchema(specSchemaOf(crd)) } }]);
    }
  }
  return answers;
}

/** A copy of a schema without `uniqueItems` anywhere: what a CRD may carry. */
export function withoutUniqueItems<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutUniqueItems) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([key]) => key !== "uniqueItems")
        .map(([key, inner]) => [key, withoutUniqueItems(inner)]),
    ) as T;
  }
  return value;
}

/**
 * CAREN's chart at the catalog's release, through the resolver (tests/support/upstream.ts): the root module
 * nutanix-cloud-native/cluster-api-runtime-extensions-nutanix at the tag, whose
 * charts/cluster-api-runtime-extensions-nutanix is the chart; the proxy here refuses it, so the
 * project's unmodified data copy of that folder next to the checkout; else unavailable.
 */
export function carenChartDir(): Upstream {
  return upstreamDir({
    module: "github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix",
    version: catalog.caren.chart.version,
    path: `charts/${catalog.caren.chart.chart}`,
    shared: `caren-${catalog.caren.chart.version}/chart`,
  });
}
