import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import type * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { carenChartDir } from "../tests/support/caren-variables";
import { capiModuleDir } from "../tests/support/cluster-class-topology";
import { byType, one, runStack, useExistingCluster, waitsFor } from "../tests/support/fleet-run";
import { controllerConfiguration, renderedEnvironment, resolvedEnvironment, variablesTheControllerReads } from "../tests/support/hcloud-ccm-config";
import { chartEnvironment, loadBalancerPlacement } from "../tests/support/hcloud-ccm-load-balancer";
import { valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { coalesceValues } from "../tests/support/helm-values";
import { fakeHcloudToken } from "../tests/support/stack-files";
import { skipIfDeclared } from "../tests/support/unverified";
import type { FleetOutputs } from "./fleet";
import { carenExtensionNames } from "./model/platform/caren-extensions";
import { catalog, type HelmChartPin } from "./model/versions/catalog";
import { clusterApiOperatorValues, clusterApiProviders } from "./model/platform/cluster-api-providers";
import { reservedNamespaces } from "./model/platform/platform-namespaces";
import { componentTypes } from "./model/contract/component-types";

const releaseType = "kubernetes:helm.sh/v3:Release";
const providerType = (kind: string) => `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${kind}`;
const extensionConfigPatchType = "kubernetes:runtime.cluster.x-k8s.io/v1beta2:ExtensionConfigPatch";
const fluxInstanceType = "kubernetes:fluxcd.controlplane.io/v1:FluxInstance";
const gitRepositoryType = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository";
const kustomizationType = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization";

type Spec = Record<string, unknown>;
type Values = Record<string, unknown>;
const specOf = (registration: Registration) => registration.inputs.spec as Spec;
const annotationsOf = (registration: Registration) =>
  ((registration.inputs.metadata as { annotations?: Record<string, string> }).annotations ?? {});

/** Registrations not on the management cluster's Kubernetes provider (only in-cluster ones). */
function offManagementProvider(registrations: readonly Registration[]): string[] {
  const kubernetesProvider = one(registrations, "pulumi:providers:kubernetes");
  return registrations.filter((r) => r.type.startsWith("kubernetes:") && !r.provider.startsWith(`${kubernetesProvider.urn}::`)).map((r) => r.name);
}

/**
 * CAREN's chart values and their schema at the catalog's release (charts/cluster-api-runtime-extensions-nutanix/
 * values.yaml and values.schema.json at nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0),
 * through the resolver (tests/support/caren-variables.ts `carenChartDir`), or why they are unavailable.
 */
function carenChart(): { defaults: Values; schema: object } | { unavailable: string } {
  const chart = carenChartDir();
  if ("unavailable" in chart) return chart;
  return {
    defaults: parse(readFileSync(path.join(chart.dir, "values.yaml"), "utf8")) as Values,
    schema: JSON.parse(readFileSync(path.join(chart.dir, "values.schema.json"), "utf8")) as object,
  };
}

/** Leaf paths of a values tree (dotted). */
const leafPaths = (values: Values, prefix = ""): string[] =>
  Object.entries(values).flatMap(([key, value]) =>
    value && typeof value === "object" && !Array.isArray(value) ? leafPaths(value as Values, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
const at = (values: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Values)[key] : undefined), values);


/**
 * What a CAREN release's values change in the chart, as Helm sees them: the merged values must
 * pass the chart's schema, and every value set must be one the chart defines (a misspelt key is a
 * silent no-op: the schema allows unknown keys) and must differ from the chart's default.
 */
function carenValueProblems(values: Values, chart: { defaults: Values; schema: object }): string[] {
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(chart.schema);
  const merged = coalesceValues(chart.defaults, values);
  const problems = validate(merged) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ""}`);
  for (const leaf of leafPaths(values)) {
    const fallback = at(chart.defaults, leaf);
    if (fallback === undefined) problems.push(`${leaf}: not a value of the chart`);
    else if (JSON.stringify(fallback) === JSON.stringify(at(values, leaf))) problems.push(`${leaf}: the chart's default already`);
  }
  return problems;
}

/** The program with one fault: each named resource's options or inputs changed by `change`. */
const withFault =
  (change: Record<string, (args: pulumi.ResourceTransformationArgs) => pulumi.ResourceTransformationResult>): pulumi.ResourceTransformation =>
  (args) =>
    change[args.name]?.(args);

/** Every chart release the platform installs, by resource name, with its catalog pin. */
const releases: { name: string; pin: HelmChartPin; namespace: string; hetznerOnly?: boolean }[] = [
  { name: "management-hcloud-ccm-release", pin: catalog.hcloudCloudControllerManager.chart, namespace: "kube-system", hetznerOnly: true },
  { name: "cluster-api-cert-manager", pin: catalog.certManager.chart, namespace: "cert-manager" },
  { name: "cluster-api-operator", pin: catalog.clusterApiOperator.chart, namespace: "capi-operator-system" },
  { name: "caren-release", pin: catalog.caren.chart, namespace: "caren-system" },
  { name: "flux-operator", pin: catalog.flux.operatorChart, namespace: "flux-system" },
];

describe.each([
  { stack: "dev", gitops: false, deletionProtection: false },
  { stack: "prod", gitops: true, deletionProtection: true },
])("the $stack platform", ({ stack, gitops, deletionProtection }) => {
  let registrations: Registration[];
  let outputs: FleetOutputs;
  const release = (name: string) => one(registrations, releaseType, name);
  const provider = (kind: string) => one(registrations, providerType(kind));

  beforeAll(async () => {
    ({ registrations, outputs } = await runStack(stack));
  });

  it("installs every chart at the catalog's name, repository and version", () => {
    // Tenants' releases (the cluster autoscaler) belong to their TenantCluster, not the platform.
    expect(byType(registrations, releaseType).filter((r) => !r.urn.includes(componentTypes.clusterAutoscaler)).map((r) => r.name).sort()).toEqual(releases.map((r) => r.name).sort());
    for (const { name, pin, namespace } of releases) {
      const inputs = release(name).inputs;
      const oci = pin.repository.startsWith("oci://");
      expect(inputs, name).toMatchObject({
        name: pin.chart,
        chart: oci ? `${pin.repository}/${pin.chart}` : pin.chart,
        version: pin.version,
        namespace,
        skipAwait: false,
      });
      expect(inputs.repositoryOpts, name).toEqual(oci ? undefined : { repo: pin.repository });
    }
  });

  it("binds to every Helm release, tenants' too, the hooks that clear an interrupted run before a create or update", () => {
    const releasesOfStack = byType(registrations, releaseType);
    expect(releasesOfStack.length).toBeGreaterThan(releases.length - 1);
    for (const registration of releasesOfStack) {
      expect(registration.hooks.beforeCreate, registration.name).toHaveLength(1);
      expect(registration.hooks.beforeUpdate, registration.name).toHaveLength(1);
    }
  });

  it("installs only into namespaces that config validation refuses for tenants", () => {
    const reserved = reservedNamespaces();
    const platform = registrations.filter((r) => r.type.startsWith("kubernetes:") && !/capi-fleet:tenants:(TenantCluster|ClusterAutoscaler)\b/.test(r.urn));
    const namespaces = new Set(
      platform.flatMap((r) => [r.inputs.namespace, (r.inputs.metadata as { namespace?: unknown } | undefined)?.namespace, (r.inputs.spec as Spec | undefined)?.targetNamespace]).filter((ns): ns is string => typeof ns === "string"),
    );
    expect(namespaces.size).toBeGreaterThan(5);
    expect([...namespaces].filter((namespace) => !reserved.has(namespace))).toEqual([]);
  });

  it("registers the platform in order: CCM, cert-manager, operator, core, other providers, CAREN, Flux", () => {
    const waitForApi = one(registrations, "command:local:Command", "management-wait-for-api");
    const chain = [
      waitForApi,
      release("management-hcloud-ccm-release"),
      release("cluster-api-cert-manager"),
      release("cluster-api-operator"),
      provider("CoreProvider"),
      provider("ControlPlaneProvider"),
      release("caren-release"),
      one(registrations, extensionConfigPatchType),
      release("flux-operator"),
      one(registrations, fluxInstanceType),
    ];
    for (let index = 1; index < chain.length; index += 1) {
      expect(waitsFor(registrations, chain[index]!, chain[index - 1]!), `${chain[index]!.name} waits for ${chain[index - 1]!.name}`).toBe(true);
      expect(registrations.indexOf(chain[index]!)).toBeGreaterThan(registrations.indexOf(chain[index - 1]!));
    }
    for (const { kind } of clusterApiProviders.slice(1)) {
      expect(waitsFor(registrations, provider(kind), provider("CoreProvider")), kind).toBe(true);
      expect(waitsFor(registrations, release("caren-release"), provider(kind)), `CAREN waits for ${kind}`).toBe(true);
    }
    // Negative control: the relation is directed, so the check can fail.
    expect(waitsFor(registrations, release("cluster-api-cert-manager"), one(registrations, fluxInstanceType))).toBe(false);
  });

  it("uses the management cluster's one Kubernetes provider for charts and custom resources", () => {
    const kubernetesProvider = one(registrations, "pulumi:providers:kubernetes");
    const inCluster = registrations.filter((r) => r.type.startsWith("kubernetes:"));
    expect(inCluster.length).toBeGreaterThan(15);
    const managementProvider = new RegExp(`^${kubernetesProvider.urn.replace(/[$.*+?^()|[\]\\{}]/g, "\\$&")}::`);
    for (const registration of inCluster) {
      expect(registration.provider, registration.name).toMatch(managementProvider);
    }
    expect(offManagementProvider(registrations)).toEqual([]);
  });

  it("negative control: the program with CAPI's component off the provider and CAREN's release not waiting for CAPI fails those checks", async () => {
    const { registrations: faulty } = await runStack(stack, undefined, withFault({
      // As if createPlatform forgot `providers` for CAPI (its charts would use the ambient kubeconfig)
      // and CAREN's release forgot its `dependsOn`.
      "cluster-api": ({ props, opts }) => ({ props, opts: { ...opts, providers: undefined } }),
      "caren-release": ({ props, opts }) => ({ props, opts: { ...opts, dependsOn: [] } }),
    }));
    expect(offManagementProvider(faulty)).toContain("cluster-api-cert-manager");
    const faultyProvider = (kind: string) => one(faulty, providerType(kind));
    expect(waitsFor(faulty, one(faulty, releaseType, "caren-release"), faultyProvider("ControlPlaneProvider"))).toBe(false);
  });

  it("declares each CAPI provider at its catalog version, awaited until Ready", () => {
    for (const spec of clusterApiProviders) {
      const resource = provider(spec.kind);
      expect(resource.inputs.metadata).toMatchObject({ name: spec.name, namespace: spec.namespace });
      expect(specOf(resource).version).toBe(spec.version);
      expect(annotationsOf(resource)["pulumi.com/waitFor"]).toBe("condition=Ready");
    }
    expect(specOf(provider("CoreProvider")).version).toBe(catalog.clusterApi.version);
    expect(specOf(provider("InfrastructureProvider")).version).toBe(catalog.caph.version);
    expect(specOf(provider("AddonProvider")).version).toBe(catalog.caaph.version);
  });

  it("turns ClusterTopology on in core and KCP, RuntimeSDK in core only", () => {
    expect(specOf(provider("CoreProvider"))).toMatchObject({
      manager: { featureGates: { ClusterTopology: true, RuntimeSDK: true } },
      configSecret: { name: "capi-feature-gates", namespace: "capi-system" },
    });
    expect(specOf(provider("ControlPlaneProvider")).manager).toEqual({ featureGates: { ClusterTopology: true } });
    expect(specOf(provider("ControlPlaneProvider")).configSecret).toEqual({ name: "capi-feature-gates", namespace: "capi-kubeadm-control-plane-system" });
    for (const kind of ["BootstrapProvider", "InfrastructureProvider", "AddonProvider"]) {
      expect(specOf(provider(kind)), kind).toEqual({ version: expect.any(String) });
    }
    // Each gated provider reads its own Secret, in its own namespace, with the same gates; created before it.
    for (const [kind, name] of [
      ["CoreProvider", "cluster-api-feature-gates"],
      ["ControlPlaneProvider", "cluster-api-capi-kubeadm-control-plane-system-feature-gates"],
    ] as const) {
      const gates = one(registrations, "kubernetes:core/v1:Secret", name);
      expect(gates.inputs.metadata, kind).toMatchObject(specOf(provider(kind)).configSecret as Spec);
      expect(gates.inputs.stringData, kind).toEqual({ CLUSTER_TOPOLOGY: "true", EXP_RUNTIME_SDK: "true" });
      expect(waitsFor(registrations, provider(kind), gates), kind).toBe(true);
    }
  });

  it("installs the operator with the values that make it watch config Secrets", () => {
    expect(release("cluster-api-operator").inputs.values).toEqual(clusterApiOperatorValues);
    expect(clusterApiOperatorValues).toMatchObject({ watchConfigSecret: true });
  });

  // A reading of the chart's values and schema (Helm validates against values.schema.json;
  // ajv stands in for its validator), not an execution: the chart is not installed here.
  it("installs CAREN with values its chart defines, each changing a default", (context) => {
    const chart = carenChart();
    if ("unavailable" in chart) return skipIfDeclared(context, chart.unavailable);
    const values = release("caren-release").inputs.values as Values;
    expect(leafPaths(values).length).toBeGreaterThan(0);
    expect(carenValueProblems(values, chart)).toEqual([]);
    // Negative controls on the program's own values: a misspelt key, a default restated, a wrong type.
    expect(carenValueProblems({ ...values, deployDefaultClusterClass: false }, chart)).toEqual(["deployDefaultClusterClass: not a value of the chart"]);
    expect(carenValueProblems({ ...values, helmRepository: { enabled: true } }, chart)).toEqual(["helmRepository.enabled: the chart's default already"]);
    expect(carenValueProblems({ ...values, deployDefaultClusterClasses: "false" }, chart)).toEqual(["/deployDefaultClusterClasses must be boolean"]);
  });

  it("waits, after the CAREN release, until CAPI reports CAREN's ExtensionConfig discovered", () => {
    const patch = one(registrations, extensionConfigPatchType);
    expect(patch.inputs.metadata).toMatchObject({ name: catalog.caren.chart.chart });
    expect(waitsFor(registrations, patch, release("caren-release"))).toBe(true);
    // The condition CAPI's runtime extension controller sets once discovery succeeded
    // (sigs.k8s.io/cluster-api@v1.12.10: api/runtime/v1beta2/extensionconfig_types.go).
    const types = readFileSync(path.join(capiModuleDir(), "api", "runtime", "v1beta2", "extensionconfig_types.go"), "utf8");
    const discovered = /\bExtensionConfigDiscoveredCondition = "([^"]+)"/.exec(types)?.[1];
    expect(discovered).toBeDefined();
    expect(annotationsOf(patch)["pulumi.com/waitFor"]).toBe(`condition=${discovered}`);
  });

  it("exports the CAREN handler names of the catalog's release", async () => {
    const names = carenExtensionNames();
    expect(await valueOf(outputs.carenExtensionNames)).toEqual({
      clusterConfigVariables: names.clusterConfigVariables("generic"),
      clusterPatches: names.clusterPatches("generic"),
      workerPatches: names.workerPatches("generic"),
    });
    expect(outputs.platform.caren.extensionNames.clusterPatches("generic")).toBe(
      "genericclusterv6configpatch-gp.cluster-api-runtime-extensions-nutanix",
    );
  });

  // A reading of the controller's chart and config code (tests/support/hcloud-ccm-config.ts), not an execution.
  it("starts the hcloud CCM with the stack's token and the servers' network from a secret, hcloud routes off", () => {
    const secret = one(registrations, "kubernetes:core/v1:Secret", "management-hcloud-ccm-token");
    const ccm = release("management-hcloud-ccm-release");
    expect(secret.secretInputs).toContain("stringData");
    expect(waitsFor(registrations, ccm, secret)).toBe(true);
    const started = (values: Values) => {
      // The pod reads Secrets of its own namespace: the release's.
      const { name, namespace } = secret.inputs.metadata as { name: string; namespace: string };
      const data = secret.inputs.stringData as Record<string, string>;
      return resolvedEnvironment(renderedEnvironment(values), (ref, key) => (ref === name && namespace === ccm.inputs.namespace ? data[key] : undefined));
    };
    const values = ccm.inputs.values as Values & { env: Values };
    const { env, errors } = started(values);
    expect(errors).toEqual([]);
    expect([...env.keys()].filter((name) => name !== "NODE_NAME" && !variablesTheControllerReads.has(name))).toEqual([]);
    const subnet = one(registrations, "hcloud:index/networkSubnet:NetworkSubnet");
    expect(controllerConfiguration(env)).toMatchObject({
      token: fakeHcloudToken("hcloud:token"),
      network: String(subnet.inputs.networkId),
      routesEnabled: false,
      loadBalancersEnabled: true,
    });
    // Negative controls on the program's own values: routes left at the default, a misspelt variable.
    const { HCLOUD_NETWORK_ROUTES_ENABLED: routes, ...withoutRoutes } = values.env;
    expect(routes).toBeDefined();
    expect(controllerConfiguration(started({ ...values, env: withoutRoutes }).env).routesEnabled).toBe(true);
    const misspelt = started({ ...values, env: { ...withoutRoutes, HCLOUD_NETWORK_ROUTE_ENABLED: routes } }).env;
    expect([...misspelt.keys()].filter((name) => name !== "NODE_NAME" && !variablesTheControllerReads.has(name))).toEqual(["HCLOUD_NETWORK_ROUTE_ENABLED"]);
  });

  it("lets the hcloud CCM create load balancers for LoadBalancer Services, in the zone of the servers' subnet", () => {
    const values = release("management-hcloud-ccm-release").inputs.values as { env?: Record<string, unknown> };
    const subnet = one(registrations, "hcloud:index/networkSubnet:NetworkSubnet");
    expect(loadBalancerPlacement(chartEnvironment(values))).toEqual({ networkZone: subnet.inputs.networkZone });
  });

  it("pins the FluxInstance to the catalog's distribution and waits for it", () => {
    const instance = one(registrations, fluxInstanceType);
    expect(instance.inputs.metadata).toMatchObject({ name: "flux", namespace: "flux-system" });
    expect(specOf(instance).distribution).toEqual({ version: catalog.flux.distribution, registry: "ghcr.io/fluxcd" });
    expect(annotationsOf(instance)["pulumi.com/waitFor"]).toBe("condition=Ready");
  });

  // What these Kustomizations do when Flux runs them is shown by Flux's own controllers in
  // tests/in-the-loop/flux-in-the-loop.test.ts; here, the wiring: names, sources, order and protection.
  it(gitops ? "syncs the fleet repository through infrastructure and the platform gate, then tenants" : "declares no Flux sync objects without GitOps", async () => {
    const repositories = byType(registrations, gitRepositoryType);
    const kustomizations = byType(registrations, kustomizationType);
    expect(await valueOf(outputs.platform.flux.kustomizations)).toEqual(gitops ? ["infrastructure", "platform-ready", "tenants"] : []);
    if (!gitops) {
      expect([...repositories, ...kustomizations]).toEqual([]);
      return;
    }
    const [repository, gateRepository] = ["flux-repository", "flux-gate-repository"].map((name) => one(registrations, gitRepositoryType, name));
    const source = { url: "https://git.example.com/platform/fleet.git", ref: { branch: "main" }, secretRef: { name: "fleet-repo-credentials" } };
    expect(specOf(repository!)).toMatchObject(source);
    expect(specOf(gateRepository!)).toMatchObject({ ...source, ignore: "/*" });
    const [infrastructure, gate, tenants] = ["flux-infrastructure", "flux-gate", "flux-tenants"].map((name) => one(registrations, kustomizationType, name));
    expect(specOf(infrastructure!)).toMatchObject({ path: "./clusters/prod/infrastructure", wait: true, prune: true });
    expect(specOf(gate!)).toMatchObject({ sourceRef: { kind: "GitRepository", name: "platform-ready" }, wait: false });
    expect(specOf(gate!).healthChecks).toContainEqual({ apiVersion: "runtime.cluster.x-k8s.io/v1beta2", kind: "ExtensionConfig", name: catalog.caren.chart.chart });
    expect(specOf(tenants!)).toMatchObject({ path: "./clusters/prod/tenants", dependsOn: [{ name: "infrastructure" }, { name: "platform-ready" }] });
    expect(specOf(tenants!).healthChecks).toBeUndefined();
    for (const kustomization of [infrastructure!, gate!, tenants!]) expect(specOf(kustomization).deletionPolicy).toBe("Orphan");
    expect(waitsFor(registrations, tenants!, infrastructure!)).toBe(true);
    expect(waitsFor(registrations, tenants!, gate!)).toBe(true);
    expect(waitsFor(registrations, repository!, one(registrations, fluxInstanceType))).toBe(true);
  });

  it(gitops ? "protects the Flux sync objects exactly when deletion protection is on" : "has no Flux sync objects to protect", () => {
    const sync = [...byType(registrations, gitRepositoryType), ...byType(registrations, kustomizationType)].filter((r) => !r.urn.includes("capi-fleet:tenants:"));
    expect(sync.length).toBe(gitops ? 5 : 0);
    for (const resource of sync) expect([resource.name, resource.protect]).toEqual([resource.name, deletionProtection]);
  });
});

describe("the platform on an existing cluster", () => {
  let registrations: Registration[];

  beforeAll(async () => {
    ({ registrations } = await runStack("dev", useExistingCluster("v1.35.0")));
  });

  it("installs no hcloud CCM (the cluster has its own cloud integration) but the rest of the platform", () => {
    const names = byType(registrations, releaseType).map((r) => r.name).sort();
    expect(names).toEqual(releases.filter((r) => !r.hetznerOnly).map((r) => r.name).sort());
    const certManager = one(registrations, releaseType, "cluster-api-cert-manager");
    expect(waitsFor(registrations, certManager, one(registrations, "pulumi:providers:kubernetes"))).toBe(true);
    const platformSecrets = byType(registrations, "kubernetes:core/v1:Secret").filter((r) => !r.urn.includes("capi-fleet:tenants:"));
    expect(platformSecrets.map((r) => r.name)).toEqual(["cluster-api-feature-gates", "cluster-api-capi-kubeadm-control-plane-system-feature-gates"]);
  });

  it("keeps the kubeconfig out of every in-cluster resource's inputs", () => {
    const inCluster = registrations.filter((r) => r.type.startsWith("kubernetes:"));
    expect(inCluster.length).toBeGreaterThan(10);
    for (const registration of inCluster) {
      expect(JSON.stringify(registration.inputs)).not.toContain("mgmt.example.com");
    }
  });
});
