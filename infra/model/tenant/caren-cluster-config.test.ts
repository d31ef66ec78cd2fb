import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { undeclaredSegment, type Schema } from "../../../tests/support/cluster-class-patches";
import { crdFiles } from "../../../tests/support/cluster-class-topology";
import { carenApiCrdSource, carenChartDir, convertCrdSchema, specSchemaOf } from "../../../tests/support/caren-variables";
import { skipIfDeclared } from "../../../tests/support/unverified";
import { readStackConfig } from "../../../tests/support/stack-files";
import { carenClusterSettings, carenCniConfig, ciliumPreflightValues, ciliumPreflightValuesKey, ciliumValuesConfigMapName, ciliumValuesData, ciliumValuesKey, kubeProxyModeOf, registryCredentialsSecretName } from "./caren-cluster-config";
import { registryCredentialNames } from "../config/secret-reader";
import type { TenantSettings } from "../config/fleet-config";
import { classVariables } from "../platform/hetzner-cluster-class";
import { tenantTopologyVariables } from "./tenant-cluster";
import { parseFleetConfig } from "../stack/validate-fleet-config";

// The clusterConfig fields the program maps from the stack config, against the schema CAREN
// publishes for them: the Docker clusterConfig, rebuilt from CAREN's CRD as CAREN's discovery
// handler does (tests/support/caren-variables.ts; nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// api/v1alpha1/crds/caren.nutanix.com_dockerclusterconfigs.yaml). A field CAREN does not declare
// is dropped by CAPI's variable schema check, a wrong value refused. On a real API server and
// through CAPI: tests/in-the-loop/caren-schema.test.ts, tests/in-the-loop/capi-in-the-loop.test.ts.

let schema: Record<string, unknown> | undefined;
let unavailable = "";

beforeAll(() => {
  const crds = crdFiles(carenApiCrdSource, ["caren.nutanix.com_dockerclusterconfigs.yaml"]);
  if ("unavailable" in crds) unavailable = crds.unavailable;
  else schema = convertCrdSchema(specSchemaOf(crds[0]!));
});

function stackTenants(): TenantSettings[] {
  return ["dev", "prod"].flatMap((stack) => {
    const { values, secretKeys } = readStackConfig(stack);
    return parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true }).tenants;
  });
}

/** The tenant with every CAREN setting (prod's payments), and one variant per way a setting can be partly set. */
function variants(): [string, TenantSettings][] {
  const tenants = stackTenants();
  const full = tenants.find((tenant) => tenant.proxy && tenant.users && tenant.imageRegistries && tenant.globalImageRegistryMirror && tenant.ntp)!;
  const proxy = full.proxy!;
  return [
    ...tenants.map((tenant) => [tenant.name, tenant] as [string, TenantSettings]),
    ["http proxy only", { ...full, proxy: { http: proxy.http } }],
    ["https proxy only", { ...full, proxy: { https: proxy.https ?? proxy.http } }],
    ["registries without credentials", { ...full, imageRegistries: full.imageRegistries!.map(({ url }) => ({ url })), globalImageRegistryMirror: { url: full.globalImageRegistryMirror!.url } }],
    ["a user without sudo", { ...full, users: full.users!.map(({ sudo: _sudo, ...user }) => user) }],
    ["kube-proxy in nftables mode", { ...full, kubeProxy: { mode: "nftables" }, cni: { ...full.cni, kubeProxyReplacement: false, values: undefined } }],
    ["kube-proxy replaced by the legacy flag", { ...full, kubeProxy: undefined, cni: { ...full.cni, kubeProxyReplacement: true } }],
  ];
}

/** The clusterConfig variable the tenant's Cluster carries (tenant-cluster.ts composes it from this module's fields). */
const clusterConfigOf = (tenant: TenantSettings) =>
  tenantTopologyVariables({ ...tenant, namespace: tenant.name }).find((variable) => variable.name === classVariables.clusterConfig)!.value as {
    addons: { cni: unknown; nfd?: unknown };
  };

function leafPointers(value: unknown, pointer: string): string[] {
  if (Array.isArray(value) && value.length > 0) return value.flatMap((item, index) => leafPointers(item, `${pointer}/${index}`));
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, item]) => leafPointers(item, `${pointer}/${key}`));
  }
  return [pointer];
}

describe("the tenant's clusterConfig against CAREN's schema", () => {
  it("is valid, and declares every field it sets, for every stack tenant and every partial setting", (context) => {
    if (!schema) return skipIfDeclared(context, unavailable);
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    const problems = variants().flatMap(([name, tenant]) => {
      const config = clusterConfigOf(tenant);
      const invalid = validate(config) ? [] : (validate.errors ?? []).map((error) => `${name}: ${error.instancePath} ${error.message ?? ""}`);
      const undeclared = leafPointers(config, "").flatMap((pointer) => {
        const segment = undeclaredSegment(schema as Schema, pointer);
        return segment === undefined ? [] : [`${name}: ${pointer}: "${segment}" is not a field of CAREN's clusterConfig`];
      });
      return [...invalid, ...undeclared];
    });
    expect(problems).toEqual([]);
  });

  it("negative control: a misspelt field and a wrong value are caught", (context) => {
    if (!schema) return skipIfDeclared(context, unavailable);
    expect(undeclaredSegment(schema as Schema, "/proxy/additionalNoProxy/0")).toBe("additionalNoProxy");
    expect(new Ajv({ strict: false }).compile(schema)({ kubeProxy: { mode: "ipvs" } })).toBe(false);
  });
});

describe("what CAREN receives", () => {
  it("carries each setting the tenant makes to CAREN's field, and nothing for a tenant that sets none", () => {
    const tenants = stackTenants();
    const bare = tenants.find((tenant) => !tenant.proxy && !tenant.ntp && !tenant.users && !tenant.imageRegistries && !tenant.kubeProxy && !tenant.cni.kubeProxyReplacement)!;
    expect(carenClusterSettings(bare)).toEqual({});
    for (const [name, tenant] of variants()) {
      const settings = carenClusterSettings(tenant) as {
        kubeProxy?: { mode?: string };
        ntp?: { servers: string[] };
        proxy?: { http?: string; https?: string; additionalNo?: string[] };
        imageRegistries?: { url: string; credentials?: { secretRef: { name: string } } }[];
        globalImageRegistryMirror?: { url: string; credentials?: { secretRef: { name: string } } };
        users?: { name: string; sshAuthorizedKeys: string[]; sudo?: string }[];
      };
      expect(settings.kubeProxy?.mode, name).toBe(kubeProxyModeOf(tenant));
      const addons = clusterConfigOf(tenant).addons;
      expect(addons.cni, name).toEqual(carenCniConfig(tenant));
      // The tenant's NFD choice, as CAREN's addons.nfd (absent: CAREN installs no NFD).
      expect(addons.nfd, name).toEqual(tenant.nfd && { strategy: tenant.nfd.strategy });
      expect(settings.ntp?.servers, name).toEqual(tenant.ntp?.servers);
      expect(settings.proxy, name).toEqual(
        tenant.proxy &&
          JSON.parse(JSON.stringify({ http: tenant.proxy.http, https: tenant.proxy.https, additionalNo: [...new Set([...(tenant.proxy.additionalNoProxy ?? []), tenant.network.nodesCidr])] })),
      );
      expect(settings.users, name).toEqual(tenant.users && JSON.parse(JSON.stringify(tenant.users)));
      // Every credentials reference names a Secret the program writes for the tenant (one per name).
      const secrets = new Set(registryCredentialNames(tenant).map((credentials) => registryCredentialsSecretName(tenant.name, credentials)));
      const registries = [...(settings.imageRegistries ?? []), ...(settings.globalImageRegistryMirror ? [settings.globalImageRegistryMirror] : [])];
      expect(registries.map((registry) => registry.url), name).toEqual([...(tenant.imageRegistries ?? []), ...(tenant.globalImageRegistryMirror ? [tenant.globalImageRegistryMirror] : [])].map((registry) => registry.url));
      expect(registries.flatMap((registry) => (registry.credentials ? [registry.credentials.secretRef.name] : [])).sort(), name).toEqual([...secrets].sort());
    }
  });

  it("names each registry credential once, and only those a registry uses", () => {
    const base = stackTenants().find((tenant) => tenant.imageRegistries)!;
    const shared = { ...base, imageRegistries: [{ url: "https://a.example", credentials: "c" }, { url: "https://b.example" }, { url: "https://c.example", credentials: "c" }], globalImageRegistryMirror: { url: "https://m.example", credentials: "m" } };
    expect(registryCredentialNames(shared)).toEqual(["c", "m"]);
    expect(registryCredentialNames({ ...shared, imageRegistries: undefined, globalImageRegistryMirror: undefined })).toEqual([]);
    expect(registryCredentialNames({ ...shared, imageRegistries: [{ url: "https://a.example" }] })).toEqual(["m"]);
  });

  it("disables kube-proxy when Cilium replaces it, in either spelling, and leaves kubeadm's default otherwise", () => {
    const tenant = stackTenants()[0]!;
    expect(kubeProxyModeOf({ ...tenant, cni: { ...tenant.cni, kubeProxyReplacement: true }, kubeProxy: undefined })).toBe("disabled");
    expect(kubeProxyModeOf({ ...tenant, cni: { ...tenant.cni, kubeProxyReplacement: false }, kubeProxy: { mode: "nftables" } })).toBe("nftables");
    expect(kubeProxyModeOf({ ...tenant, cni: { ...tenant.cni, kubeProxyReplacement: false }, kubeProxy: undefined })).toBeUndefined();
  });

  it("points Cilium at the values ConfigMap only when the tenant has values, and the ConfigMap holds them as YAML", () => {
    for (const [name, tenant] of variants()) {
      const cni = carenCniConfig(tenant) as { strategy: string; values?: { sourceRef: { kind: string; name: string } } };
      expect(cni.strategy, name).toBe(tenant.cni.strategy);
      const data = ciliumValuesData(tenant);
      if (tenant.cni.values) {
        expect(cni.values, name).toEqual({ sourceRef: { kind: "ConfigMap", name: ciliumValuesConfigMapName } });
        expect(parse(data![ciliumValuesKey]!), name).toEqual(tenant.cni.values);
      } else {
        expect(cni.values, name).toBeUndefined();
        expect(data, name).toBeUndefined();
      }
    }
  });
});

// Cilium's upgrade preflight (`preflight-values.yaml`) against CAREN's chart default at the
// catalog's release (through the resolver: tests/support/caren-variables.ts `carenChartDir`;
// nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
// charts/cluster-api-runtime-extensions-nutanix/addons/cni/cilium/preflight-values-template.yaml).
describe("Cilium's upgrade preflight values", () => {
  /**
   * A values template as CAREN renders it for a Cluster whose endpoint is https://api.example:6443
   * (pkg/handlers/lifecycle/cni/cilium/template.go, `preflightTemplateValues`: its one condition and
   * the two expressions the templates use), parsed.
   */
  const rendered = (template: string, kubeProxyReplacement: boolean) =>
    parse(
      template
        .replace(/\{\{- if \.EnableKubeProxyReplacement \}\}([\s\S]*?)\{\{- end \}\}/, (_all, block: string) => (kubeProxyReplacement ? block : ""))
        .replaceAll('{{ trimPrefix .ControlPlaneEndpoint.Host "https://" }}', "api.example")
        .replaceAll("{{ .ControlPlaneEndpoint.Port }}", "6443"),
    ) as Record<string, unknown>;
  const chartDefault = (chartDir: string, kubeProxyReplacement: boolean) =>
    rendered(readFileSync(path.join(chartDir, "addons", "cni", "cilium", "preflight-values-template.yaml"), "utf8"), kubeProxyReplacement);
  const ours = (tenant: TenantSettings) => rendered(ciliumValuesData(tenant)![ciliumPreflightValuesKey]!, kubeProxyModeOf(tenant) === "disabled");

  it("are CAREN's chart default for a tenant whose values set no image, with and without kube-proxy", (context) => {
    const chart = carenChartDir();
    if ("unavailable" in chart) return skipIfDeclared(context, chart.unavailable);
    const tenant = stackTenants().find((t) => t.cni.values && kubeProxyModeOf(t) === "disabled")!;
    expect(tenant).toBeDefined();
    expect(ours(tenant)).toEqual(chartDefault(chart.dir, true));
    expect(ours({ ...tenant, kubeProxy: undefined, cni: { ...tenant.cni, kubeProxyReplacement: false } })).toEqual(chartDefault(chart.dir, false));
    // Negative control: the tenant's full values are not preflight values.
    expect(rendered(ciliumValuesData(tenant)![ciliumValuesKey]!, true)).not.toEqual(chartDefault(chart.dir, true));
  });

  it("pre-pull the tenant's own images and keep its preflight settings, and nothing else of its values", () => {
    const tenant = stackTenants().find((t) => t.cni.values)!;
    const values = {
      ...tenant.cni.values,
      image: { repository: "registry.example/cilium/cilium", tag: "v1.19.4" },
      envoy: { image: { repository: "registry.example/cilium/cilium-envoy" } },
      preflight: { tolerations: [{ operator: "Exists" }] },
    };
    const preflight = ciliumPreflightValues({ ...tenant, cni: { ...tenant.cni, values } });
    expect(preflight).toMatchObject({
      agent: false,
      operator: { enabled: false },
      preflight: {
        enabled: true,
        tolerations: [{ operator: "Exists" }],
        image: { useDigest: false, repository: "registry.example/cilium/cilium", tag: "v1.19.4" },
        envoy: { image: { useDigest: false, repository: "registry.example/cilium/cilium-envoy" } },
      },
    });
    // Hubble, IPAM and the tunnel are the real release's, not the preflight's.
    expect(Object.keys(preflight).sort()).toEqual(["agent", "k8sServiceHost", "k8sServicePort", "operator", "preflight"].filter((key) => key in preflight).sort());
    expect(preflight).not.toHaveProperty("hubble");
    // Only mappings are taken over: a string or a list where the chart expects a mapping is not spread.
    const odd = ciliumPreflightValues({ ...tenant, cni: { ...tenant.cni, values: { image: "quay.io/cilium/cilium:v1.19.4", envoy: ["x"], preflight: null } } });
    expect(odd.preflight).toEqual({ enabled: true, image: { useDigest: false }, envoy: { image: { useDigest: false } } });
    // With kube-proxy disabled, the tenant's own API endpoint, else the chart's expressions.
    const disabled = { ...tenant, kubeProxy: { mode: "disabled" as const } };
    expect(ciliumPreflightValues({ ...disabled, cni: { ...tenant.cni, values: { k8sServiceHost: "api.internal", k8sServicePort: 6443 } } })).toMatchObject({ k8sServiceHost: "api.internal", k8sServicePort: 6443 });
    expect(ciliumPreflightValues({ ...disabled, cni: { ...tenant.cni, values: { ipam: { mode: "kubernetes" } } } })).toMatchObject({
      k8sServiceHost: '{{ trimPrefix .ControlPlaneEndpoint.Host "https://" }}',
      k8sServicePort: "{{ .ControlPlaneEndpoint.Port }}",
    });
    expect(ciliumPreflightValues({ ...tenant, kubeProxy: { mode: "iptables" }, cni: { ...tenant.cni, kubeProxyReplacement: false } })).not.toHaveProperty("k8sServiceHost");
    // The ConfigMap carries both keys CAREN reads.
    expect(Object.keys(ciliumValuesData(tenant)!).sort()).toEqual([ciliumPreflightValuesKey, ciliumValuesKey].sort());
    expect(parse(ciliumValuesData(tenant)![ciliumPreflightValuesKey]!)).toEqual(ciliumPreflightValues(tenant));
  });
});
