import { beforeAll, describe, expect, it } from "vitest";
import { byType, one, runStack, useExistingCluster, waitsFor } from "../tests/fleet-run";
import { chartEnvironment, loadBalancerPlacement } from "../tests/hcloud-ccm-load-balancer";
import { valueOf, type Registration } from "../tests/pulumi-mocks";
import { fakeHcloudToken } from "../tests/stack-files";
import type { FleetOutputs } from "./fleet";
import { carenExtensionNames } from "./model/caren-extensions";
import { catalog, type HelmChartPin } from "./model/catalog";
import { clusterApiProviders } from "./model/cluster-api-providers";
import { reservedNamespaces } from "./model/platform-namespaces";

const releaseType = "kubernetes:helm.sh/v3:Release";
const providerType = (kind: string) => `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${kind}`;
const extensionConfigPatchType = "kubernetes:runtime.cluster.x-k8s.io/v1beta2:ExtensionConfigPatch";
const fluxInstanceType = "kubernetes:fluxcd.controlplane.io/v1:FluxInstance";
const gitRepositoryType = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository";
const kustomizationType = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization";

type Spec = Record<string, unknown>;
const specOf = (registration: Registration) => registration.inputs.spec as Spec;
const annotationsOf = (registration: Registration) =>
  ((registration.inputs.metadata as { annotations?: Record<string, string> }).annotations ?? {});

/** Every chart release the platform installs, by resource name, with its catalog pin. */
const releases: { name: string; pin: HelmChartPin; namespace: string; hetznerOnly?: boolean }[] = [
  { name: "management-hcloud-ccm-release", pin: catalog.hcloudCloudControllerManager.chart, namespace: "kube-system", hetznerOnly: true },
  { name: "cluster-api-cert-manager", pin: catalog.certManager.chart, namespace: "cert-manager" },
  { name: "cluster-api-operator", pin: catalog.clusterApiOperator.chart, namespace: "capi-operator-system" },
  { name: "caren-release", pin: catalog.caren.chart, namespace: "caren-system" },
  { name: "flux-operator", pin: catalog.flux.operatorChart, namespace: "flux-system" },
];

describe.each([
  { stack: "dev", gitops: false },
  { stack: "prod", gitops: true },
])("the $stack platform", ({ stack, gitops }) => {
  let registrations: Registration[];
  let outputs: FleetOutputs;
  const release = (name: string) => one(registrations, releaseType, name);
  const provider = (kind: string) => one(registrations, providerType(kind));

  beforeAll(async () => {
    ({ registrations, outputs } = await runStack(stack));
  });

  it("installs every chart at the catalog's name, repository and version", () => {
    expect(byType(registrations, releaseType).map((r) => r.name).sort()).toEqual(releases.map((r) => r.name).sort());
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

  it("installs only into namespaces that config validation refuses for tenants", () => {
    const reserved = reservedNamespaces();
    const platform = registrations.filter((r) => r.type.startsWith("kubernetes:") && !r.urn.includes("capi-fleet:tenants:TenantCluster"));
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
    // Negative control: a resource on the default provider (ambient kubeconfig) would fail.
    expect("").not.toMatch(managementProvider);
    expect("urn:pulumi:dev::capi-fleet::pulumi:providers:kubernetes::default_4_32_0::id").not.toMatch(managementProvider);
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
    expect(specOf(provider("ControlPlaneProvider")).configSecret).toEqual({ name: "capi-feature-gates", namespace: "capi-system" });
    for (const kind of ["BootstrapProvider", "InfrastructureProvider", "AddonProvider"]) {
      expect(specOf(provider(kind)), kind).toEqual({ version: expect.any(String) });
    }
    const gates = one(registrations, "kubernetes:core/v1:Secret", "cluster-api-feature-gates");
    expect(gates.inputs.stringData).toEqual({ CLUSTER_TOPOLOGY: "true", EXP_RUNTIME_SDK: "true" });
    expect(waitsFor(registrations, provider("CoreProvider"), gates)).toBe(true);
  });

  it("installs CAREN without default classes, mirror or name override, and waits for discovery", () => {
    const values = release("caren-release").inputs.values as Record<string, unknown>;
    expect(values).toEqual({ deployDefaultClusterClasses: false, helmRepository: { enabled: false } });
    const patch = one(registrations, extensionConfigPatchType);
    expect(patch.inputs.metadata).toMatchObject({ name: catalog.caren.chart.chart });
    expect(annotationsOf(patch)["pulumi.com/waitFor"]).toBe("condition=Discovered");
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

  it("gives the hcloud CCM its token and network as a secret, with hcloud routes off", () => {
    const secret = one(registrations, "kubernetes:core/v1:Secret", "management-hcloud-ccm-token");
    expect(secret.inputs.metadata).toEqual({ name: "hcloud", namespace: "kube-system" });
    expect(secret.secretInputs).toContain("stringData");
    expect(secret.inputs.stringData).toEqual({ token: fakeHcloudToken("hcloud:token"), network: expect.stringMatching(/^\d+$/) });
    expect(release("management-hcloud-ccm-release").inputs.values).toEqual({
      networking: { enabled: false },
      env: {
        HCLOUD_NETWORK: { valueFrom: { secretKeyRef: { name: "hcloud", key: "network" } } },
        HCLOUD_NETWORK_ROUTES_ENABLED: { value: "false" },
        HCLOUD_LOAD_BALANCERS_NETWORK_ZONE: expect.anything(),
      },
    });
    expect(waitsFor(registrations, release("management-hcloud-ccm-release"), secret)).toBe(true);
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

  it(gitops ? "syncs the fleet repository through infrastructure, then tenants" : "declares no Flux sync objects without GitOps", async () => {
    const repositories = byType(registrations, gitRepositoryType);
    const kustomizations = byType(registrations, kustomizationType);
    expect(await valueOf(outputs.platform.flux.kustomizations)).toEqual(gitops ? ["infrastructure", "tenants"] : []);
    if (!gitops) {
      expect([...repositories, ...kustomizations]).toEqual([]);
      return;
    }
    const repository = one(registrations, gitRepositoryType);
    expect(specOf(repository)).toMatchObject({
      url: "https://git.example.com/platform/fleet.git",
      ref: { branch: "main" },
      secretRef: { name: "fleet-repo-credentials" },
    });
    const [infrastructure, tenants] = ["flux-infrastructure", "flux-tenants"].map((name) => one(registrations, kustomizationType, name));
    expect(specOf(infrastructure!)).toMatchObject({ path: "./clusters/prod/infrastructure", wait: true, prune: true });
    const tenantsSpec = specOf(tenants!);
    expect(tenantsSpec).toMatchObject({ path: "./clusters/prod/tenants", dependsOn: [{ name: "infrastructure" }], wait: false });
    expect(tenantsSpec.healthChecks).toContainEqual({
      apiVersion: "runtime.cluster.x-k8s.io/v1beta2",
      kind: "ExtensionConfig",
      name: catalog.caren.chart.chart,
    });
    expect(tenantsSpec.healthChecks).toContainEqual(expect.objectContaining({ kind: "Deployment", name: "capi-controller-manager" }));
    expect(waitsFor(registrations, tenants!, infrastructure!)).toBe(true);
    expect(waitsFor(registrations, repository, one(registrations, fluxInstanceType))).toBe(true);
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
    expect(platformSecrets.map((r) => r.name)).toEqual(["cluster-api-feature-gates"]);
  });

  it("keeps the kubeconfig out of every in-cluster resource's inputs", () => {
    const inCluster = registrations.filter((r) => r.type.startsWith("kubernetes:"));
    expect(inCluster.length).toBeGreaterThan(10);
    for (const registration of inCluster) {
      expect(JSON.stringify(registration.inputs)).not.toContain("mgmt.example.com");
    }
  });
});
