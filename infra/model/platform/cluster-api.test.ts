import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import { apiVersions } from "./cluster-api-kinds";
import {
  admissionRequest,
  certManagerNamespace,
  certManagerRelease,
  clusterApiOperatorRelease,
  defaultProviderReadyTimeoutSeconds,
  operatorNamespace,
  providerConfigSecretPlans,
  providerManifest,
  providersInOrder,
  providerSpec,
} from "./cluster-api";
import { clusterApiOperatorValues, clusterApiProviders, featureGatesSecretName, githubTokenSecretName, providerConfigSecret, providerManagerContainer } from "./cluster-api-providers";
import { providerFetchConfig } from "./mirrors";
import { platformNamespaces } from "./platform-namespaces";

// The ClusterApi component's charts, provider resources and config Secrets as plain data. The
// feature gates and the token reach the managers as cluster-api-providers.test.ts reads the upstream
// manifests; the component under mocks: infra/platform.test.ts, infra/github-token.test.ts; the
// admission wait against a real API server: components/cluster-api/wait-for-admission.test.ts.

const mirrors = { charts: "oci://mirror.example/charts", providers: "mirror.example/providers", images: "mirror.example/images" };
const [core, ...others] = clusterApiProviders;
const gated = clusterApiProviders.filter((provider) => provider.featureGates.length > 0);
const ungated = clusterApiProviders.filter((provider) => provider.featureGates.length === 0);

describe("the charts", () => {
  it("install cert-manager with its CRDs and the operator with its values, in their own namespaces", () => {
    expect(certManagerRelease()).toEqual({ pin: catalog.certManager.chart, values: { crds: { enabled: true } } });
    expect(clusterApiOperatorRelease()).toEqual({ pin: catalog.clusterApiOperator.chart, values: clusterApiOperatorValues });
    expect([certManagerNamespace, operatorNamespace]).toEqual([platformNamespaces.certManager, platformNamespaces.clusterApiOperator]);
  });

  it("come from the mirrors when the stack names them, images included", () => {
    const certManager = certManagerRelease(mirrors);
    expect(certManager.pin).toEqual({ ...catalog.certManager.chart, repository: mirrors.charts });
    expect(certManager.values).toEqual({ crds: { enabled: true }, imageRegistry: mirrors.images });
    const operator = clusterApiOperatorRelease(mirrors);
    expect(operator.pin).toEqual({ ...catalog.clusterApiOperator.chart, repository: mirrors.charts });
    const repository = (operator.values as { image: { manager: { repository: string } } }).image.manager.repository;
    expect(operator.values).toMatchObject(clusterApiOperatorValues);
    expect(repository.startsWith(`${mirrors.images}/`)).toBe(true);
    expect(catalog.clusterApiOperator.image.endsWith(repository.slice(mirrors.images.length))).toBe(true);
    // A chart mirror alone moves no image.
    expect(certManagerRelease({ charts: mirrors.charts }).values).toEqual({ crds: { enabled: true } });
    expect(clusterApiOperatorRelease({ charts: mirrors.charts }).values).toEqual(clusterApiOperatorValues);
  });
});

describe("providerSpec", () => {
  it("pins the catalog's version and turns each provider's gates on, twice: configSecret and manager flags", () => {
    for (const provider of clusterApiProviders) {
      const spec = providerSpec(provider);
      expect(spec.version).toBe(provider.version);
      if (provider.featureGates.length > 0) {
        expect(spec.configSecret).toEqual({ name: featureGatesSecretName, namespace: provider.namespace });
        expect(spec.manager).toEqual({ featureGates: Object.fromEntries(provider.featureGates.map((gate) => [gate, true])) });
      } else {
        expect(spec).not.toHaveProperty("configSecret");
        expect(spec).not.toHaveProperty("manager");
      }
    }
  });

  it("names a token Secret for every provider without gates when there is a token", () => {
    for (const provider of ungated) {
      expect(providerSpec(provider, { githubToken: true }).configSecret).toEqual({ name: githubTokenSecretName, namespace: provider.namespace });
    }
    expect(ungated.length).toBeGreaterThan(0);
  });

  it("fetches from the public releases and runs the public images unless the stack names mirrors", () => {
    for (const provider of clusterApiProviders) {
      const spec = providerSpec(provider, { githubToken: false });
      expect(spec).not.toHaveProperty("fetchConfig");
      expect(spec).not.toHaveProperty("deployment");
      const mirrored = providerSpec(provider, { githubToken: false, mirrors });
      expect(mirrored.fetchConfig).toEqual(providerFetchConfig(provider, mirrors));
      const container = (mirrored.deployment as { containers: { name: string; imageUrl: string }[] }).containers;
      expect(container).toHaveLength(1);
      expect(container[0]?.name).toBe(providerManagerContainer);
      expect(container[0]?.imageUrl.startsWith(`${mirrors.images}/`)).toBe(true);
      expect(container[0]?.imageUrl.endsWith(`:${provider.version}`)).toBe(true);
      // A provider mirror alone moves no image.
      expect(providerSpec(provider, { githubToken: false, mirrors: { providers: mirrors.providers } })).not.toHaveProperty("deployment");
    }
  });
});

describe("the provider resources", () => {
  it("are the operator's provider kinds, awaited until the operator reports them Ready", () => {
    for (const provider of clusterApiProviders) {
      const manifest = providerManifest(provider, { githubToken: false });
      expect(manifest).toMatchObject({ apiVersion: apiVersions.clusterApiOperatorProvider, kind: provider.kind, metadata: { name: provider.name, namespace: provider.namespace } });
      expect(manifest.metadata.annotations).toEqual({ "pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": String(defaultProviderReadyTimeoutSeconds) });
      expect(manifest.spec).toEqual(providerSpec(provider, { githubToken: false }));
    }
    expect(defaultProviderReadyTimeoutSeconds).toBe(900);
    expect(providerManifest(clusterApiProviders[0]!, { githubToken: true, mirrors }, 60)).toMatchObject({
      metadata: { annotations: { "pulumi.com/timeoutSeconds": "60" } },
      spec: providerSpec(clusterApiProviders[0]!, { githubToken: true, mirrors }),
    });
  });

  it("are dry-run first as the same object, in their collection, without the wait annotations", () => {
    const [group, version] = apiVersions.clusterApiOperatorProvider.split("/");
    for (const provider of clusterApiProviders) {
      const options = { githubToken: true, mirrors };
      const request = admissionRequest(provider, options);
      expect(request.path).toBe(`/apis/${group}/${version}/namespaces/${provider.namespace}/${provider.kind.toLowerCase()}s`);
      const manifest = providerManifest(provider, options);
      expect(request.body).toEqual({ ...manifest, metadata: { name: manifest.metadata.name, namespace: manifest.metadata.namespace } });
    }
    // The operator's plural resource names (config/crd/bases: coreproviders, infrastructureproviders, ...).
    expect(admissionRequest(core!, { githubToken: false }).path.endsWith("/coreproviders")).toBe(true);
  });
});

describe("providersInOrder", () => {
  it("puts the core provider first, which the operator needs before the others", () => {
    expect(providersInOrder()).toEqual({ core, others });
    expect(core?.kind).toBe("CoreProvider");
  });

  it("refuses a list that does not start with the core provider", () => {
    expect(() => providersInOrder(others)).toThrow("ClusterApi: the provider list must start with the CoreProvider");
    expect(() => providersInOrder([])).toThrow("must start with the CoreProvider");
  });
});

describe("providerConfigSecretPlans", () => {
  it("without a token: a gates Secret for each provider with gates, none for the others", () => {
    const plans = providerConfigSecretPlans({ githubToken: false });
    expect(plans.map((plan) => plan.provider)).toEqual(gated);
    for (const plan of plans) expect(plan).toMatchObject({ name: featureGatesSecretName, gated: true });
  });

  it("with a token: every provider names one, each in the provider's own namespace, as the provider resource does", () => {
    const plans = providerConfigSecretPlans({ githubToken: true });
    expect(plans.map((plan) => plan.provider)).toEqual(clusterApiProviders);
    for (const plan of plans) {
      expect(plan.namespace).toBe(plan.provider.namespace);
      expect(providerConfigSecret(plan.provider, { githubToken: true })).toEqual({ name: plan.name, namespace: plan.namespace });
      expect(plan.gated).toBe(plan.provider.featureGates.length > 0);
      expect(plan.name).toBe(plan.gated ? featureGatesSecretName : githubTokenSecretName);
    }
  });

  it("keeps the core's gates Secret at the resource name it had as the only one; the others are told apart by namespace", () => {
    const suffixes = providerConfigSecretPlans({ githubToken: true }).map((plan) => [plan.provider.kind, plan.resourceSuffix]);
    expect(suffixes[0]).toEqual(["CoreProvider", "feature-gates"]);
    for (const [kind, suffix] of suffixes.slice(1)) {
      const provider = clusterApiProviders.find((candidate) => candidate.kind === kind)!;
      expect(suffix).toBe(`${provider.namespace}-${provider.featureGates.length > 0 ? "feature-gates" : "github-token"}`);
    }
    expect(new Set(suffixes.map(([, suffix]) => suffix)).size).toBe(suffixes.length);
  });
});
