import Ajv from "ajv";
import { parse } from "yaml";
import { poolCapacityAnnotations } from "../platform/karpenter";
import { describe, expect, it } from "vitest";
import { crdSchema } from "../../../tests/support/cluster-class-patches";
import { crdFiles } from "../../../tests/support/cluster-class-topology";
import { readStackConfig } from "../../../tests/support/stack-files";
import { crdSources } from "../../../tests/support/upstream-crds";
import { carenExtensionNames } from "../platform/caren-extensions";
import { poolAutoscalerAnnotations } from "../platform/cluster-autoscaler";
import { catalog } from "../versions/catalog";
import { fleetConfigSchema } from "../config/fleet-config";
import { classVariables, hetznerClusterClassManifests } from "../platform/hetzner-cluster-class";
import {
  hcloudCcmProxy,
  hcloudCsiProxy,
  tenantClusterManifest,
  tenantLabels,
  type TenantClusterSettings,
} from "./tenant-cluster";
import { carenPreflightSkipAnnotation, loadBalancerGcAnnotation } from "../facts/caren";

/** The prod stack's tenants, parsed with the program's schema. */
function prodTenants(): TenantClusterSettings[] {
  const raw = JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as unknown;
  return fleetConfigSchema.shape.tenants.parse(raw).map((tenant) => ({ ...tenant, namespace: tenant.namespace ?? tenant.name }));
}

const tenants = prodTenants();
const payments = tenants.find((tenant) => tenant.name === "payments")!;
const classSpec = hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() }).clusterClass.spec as {
  variables: { name: string; required: boolean; schema: { openAPIV3Schema: Record<string, unknown> } }[];
};

type Topology = {
  classRef: Record<string, string>;
  version: string;
  controlPlane: { replicas: number };
  workers: { machineDeployments: { class: string; name: string; variables: { overrides: { name: string; value: unknown }[] } }[] };
  variables: { name: string; value: unknown }[];
};
const topologyOf = (tenant: TenantClusterSettings) => (tenantClusterManifest(tenant).spec as { topology: Topology }).topology;

/**
 * Checks topology variables like CAPI does: declared, required ones present, values valid against
 * the class's schema. `clusterConfig` is declared by CAREN's discovery, not by the class: its
 * value is checked against CAREN's own schema in tests/in-the-loop/caren-schema.test.ts and by CAPI in
 * tests/in-the-loop/capi-in-the-loop.test.ts.
 */
function variableProblems(variables: { name: string; value: unknown }[]): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const problems: string[] = [];
  for (const definition of classSpec.variables) {
    const value = variables.find((variable) => variable.name === definition.name);
    if (!value) {
      if (definition.required) problems.push(`${definition.name}: required but not set`);
      continue;
    }
    const validate = ajv.compile(definition.schema.openAPIV3Schema);
    if (!validate(value.value)) problems.push(`${definition.name}: ${ajv.errorsText(validate.errors)}`);
  }
  for (const variable of variables) {
    const declared = variable.name === classVariables.clusterConfig || classSpec.variables.some((definition) => definition.name === variable.name);
    if (!declared) problems.push(`${variable.name}: not declared by the class`);
  }
  return problems;
}

describe("a tenant Cluster", () => {
  it("is a v1beta2 topology Cluster of the fleet's class at the tenant's target version", () => {
    const manifest = tenantClusterManifest(payments);
    expect(manifest).toMatchObject({
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Cluster",
      metadata: { name: "payments", namespace: "tenant-payments" },
      spec: {
        clusterNetwork: { pods: { cidrBlocks: ["10.64.0.0/16"] }, services: { cidrBlocks: ["10.96.0.0/16"] } },
        topology: { classRef: { name: "hetzner-caren", namespace: "capi-fleet-system" }, version: payments.kubernetesVersion, controlPlane: { replicas: 3 } },
      },
    });
    expect(JSON.stringify(manifest)).not.toMatch(/"class":"hetzner|"classNamespace"|"strategy":\{/);
  });

  it.each(tenants.map((tenant) => [tenant.name, tenant] as const))("%s sets variables the class declares, with valid values", (_name, tenant) => {
    const topology = topologyOf(tenant);
    expect(variableProblems(topology.variables)).toEqual([]);
    for (const deployment of topology.workers.machineDeployments) {
      const merged = [...topology.variables.filter((v) => !deployment.variables.overrides.some((o) => o.name === v.name)), ...deployment.variables.overrides];
      expect(variableProblems(merged), deployment.name).toEqual([]);
    }
  });

  it("would be refused with a region outside the schema (negative control for the schema check)", () => {
    const variables = topologyOf(payments).variables.map((variable) => (variable.name === classVariables.regions ? { ...variable, value: ["xyz1"] } : variable));
    expect(variableProblems(variables).join()).toContain("hcloudRegions: data/0 must be equal to one of the allowed values");
    expect(variableProblems([...variables, { name: "loadBalancerGC", value: false }]).join()).toContain("loadBalancerGC: not declared");
  });

  it("asks CAREN for Cilium with the configured strategy, and for kube-proxy replacement when asked", () => {
    const clusterConfig = (tenant: TenantClusterSettings) => topologyOf(tenant).variables.find((v) => v.name === "clusterConfig")!.value;
    expect(clusterConfig(payments)).toMatchObject({
      addons: { cni: { provider: "Cilium", strategy: "HelmAddon", values: { sourceRef: { kind: "ConfigMap", name: "capi-fleet-cilium-values" } } } },
      kubeProxy: { mode: "disabled" },
    });
    expect(clusterConfig(tenants.find((t) => t.name === "edge")!)).toEqual({ addons: { cni: { provider: "Cilium", strategy: "HelmAddon" } } });
    // The back-compat spelling means the same mode.
    const legacy = { ...payments, kubeProxy: undefined, cni: { ...payments.cni, kubeProxyReplacement: true } };
    expect((clusterConfig(legacy) as { kubeProxy: unknown }).kubeProxy).toEqual({ mode: "disabled" });
  });

  it("maps each CAREN setting to CAREN's field (additionalNoProxy → proxy.additionalNo, credentials → a Secret reference)", () => {
    const clusterConfig = topologyOf(payments).variables.find((v) => v.name === "clusterConfig")!.value as Record<string, unknown>;
    expect(clusterConfig.ntp).toEqual({ servers: payments.ntp!.servers });
    // The nodes' range is added: CAREN's own no-proxy list lacks it.
    expect(clusterConfig.proxy).toEqual({ http: payments.proxy!.http, https: payments.proxy!.https, additionalNo: [...payments.proxy!.additionalNoProxy!, payments.network.nodesCidr] });
    expect(clusterConfig.imageRegistries).toEqual(
      payments.imageRegistries!.map((registry) => ({ url: registry.url, credentials: { secretRef: { name: `registry-credentials.payments.${registry.credentials!}` } } })),
    );
    expect(clusterConfig.globalImageRegistryMirror).toEqual({
      url: payments.globalImageRegistryMirror!.url,
      credentials: { secretRef: { name: `registry-credentials.payments.${payments.globalImageRegistryMirror!.credentials!}` } },
    });
    expect(clusterConfig.users).toEqual(payments.users!.map((user) => ({ name: user.name, sshAuthorizedKeys: user.sshAuthorizedKeys, sudo: user.sudo })));
  });

  it("maps every worker pool to a MachineDeployment with its own machine type, image and placement group", () => {
    expect(topologyOf(payments).workers.machineDeployments.map((md) => [md.class, md.name, md.variables.overrides.map((o) => o.value)])).toEqual([
      ["hcloud-worker", "md-fsn1", ["cpx31", catalog.tenantNodeImage, ""]],
      ["hcloud-worker", "md-nbg1", ["cpx31", catalog.tenantNodeImage, ""]],
    ]);
    const spread = { ...payments, workers: payments.workers.map((pool) => ({ ...pool, placementGroup: true })) };
    const groups = topologyOf(spread).variables.find((v) => v.name === "hcloudPlacementGroups")!.value;
    expect(groups).toEqual([
      { name: "control-plane", type: "spread" },
      { name: "workers-md-fsn1", type: "spread" },
      { name: "workers-md-nbg1", type: "spread" },
    ]);
  });

  it("sizes each pool by its replicas or by the autoscaler's bounds (never both), in its failure domain and with its own image when set", () => {
    type Md = { name: string; replicas?: number; failureDomain: string; metadata?: { annotations?: Record<string, string> }; variables: { overrides: { name: string; value: unknown }[] } };
    for (const tenant of tenants) {
      const deployments = (topologyOf(tenant).workers.machineDeployments as unknown as Md[]).map((md) => ({
        name: md.name,
        replicas: md.replicas,
        failureDomain: md.failureDomain,
        annotations: md.metadata?.annotations,
      }));
      expect(deployments, tenant.name).toEqual(
        tenant.workers.map((pool) => ({
          name: pool.name,
          replicas: pool.replicas,
          failureDomain: pool.failureDomain,
          annotations: pool.autoscaling ? poolAutoscalerAnnotations(pool) : undefined,
        })),
      );
    }
    // prod has an autoscaled pool (analytics md-0), whose topology has no replicas for the topology controller to reset.
    const analytics = topologyOf(tenants.find((t) => t.name === "analytics")!).workers.machineDeployments[0] as unknown as Md;
    expect("replicas" in analytics).toBe(false);
    expect(analytics.metadata?.annotations).toBeDefined();
    const fixedPool = topologyOf(payments).workers.machineDeployments[0] as unknown as Md;
    expect("metadata" in fixedPool).toBe(false);
    // A pool's own image overrides the tenant's.
    const ownImage = { ...payments, workers: payments.workers.map((pool, i) => (i === 0 ? { ...pool, image: "debian-12" } : pool)) };
    expect(topologyOf(ownImage).workers.machineDeployments.map((md) => md.variables.overrides.find((o) => o.name === classVariables.workerImage)!.value)).toEqual([
      "debian-12",
      payments.image,
    ]);
  });

  it("gives a Karpenter pool no replicas, no autoscaler bounds and no member label, only its server's size (CAPI copies topology labels onto every Machine)", () => {
    type Md = { replicas?: number; metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> } };
    const karpenterPool = { ...payments.workers[0]!, replicas: undefined, autoscaling: { provider: "karpenter" as const, cpuLimit: 16, expireAfter: "720h", consolidation: { policy: "WhenEmpty" as const, after: "30s" } } };
    const withKarpenter = { ...payments, workers: [karpenterPool, ...payments.workers.slice(1)] };
    const md = topologyOf(withKarpenter).workers.machineDeployments[0] as unknown as Md;
    expect("replicas" in md).toBe(false);
    expect(md.metadata).toEqual({ annotations: poolCapacityAnnotations(karpenterPool) });
  });

  it("puts the private network in the regions' zone, with the first /24 as subnet by default", () => {
    expect(topologyOf(payments).variables.find((v) => v.name === "hcloudNetwork")!.value).toEqual({
      enabled: true,
      cidrBlock: "10.10.0.0/16",
      subnetCidrBlock: "10.10.0.0/24",
      networkZone: "eu-central",
    });
  });

  it("uses a configured nodes subnet, the tenant's SSH key, and a control-plane placement group when asked", () => {
    const variable = (tenant: TenantClusterSettings, name: string) => topologyOf(tenant).variables.find((v) => v.name === name)!.value;
    const subnet = { ...payments, network: { ...payments.network, nodesSubnetCidr: "10.10.8.0/22" } };
    expect(variable(subnet, classVariables.network)).toMatchObject({ cidrBlock: "10.10.0.0/16", subnetCidrBlock: "10.10.8.0/22" });
    expect(variable({ ...payments, sshKeyName: "ops" }, classVariables.sshKeys)).toEqual([{ name: "ops" }]);
    expect(variable({ ...payments, sshKeyName: undefined }, classVariables.sshKeys)).toEqual([]);
    const spread = { ...payments, controlPlane: { ...payments.controlPlane, placementGroup: true } };
    const groups = variable(spread, classVariables.placementGroups) as { name: string }[];
    expect(groups.map((group) => group.name)).toContain(variable(spread, classVariables.controlPlanePlacementGroup));
    expect(variable({ ...payments, controlPlane: { ...payments.controlPlane, placementGroup: false } }, classVariables.controlPlanePlacementGroup)).toBe("");
    expect(variable({ ...payments, controlPlane: { ...payments.controlPlane, placementGroup: false } }, classVariables.placementGroups)).toEqual([]);
  });

  it("carries CAREN's load-balancer GC opt-out only when the tenant opts out", () => {
    const plain = { ...payments, carenPreflight: undefined };
    expect(tenantClusterManifest(plain).metadata.annotations).toBeUndefined();
    expect(tenantClusterManifest({ ...plain, loadBalancerGarbageCollection: false }).metadata.annotations).toEqual({ [loadBalancerGcAnnotation]: "false" });
  });

  it("carries CAREN's preflight skip only with the checks the tenant names, comma-separated as CAREN splits it", () => {
    expect(payments.carenPreflight).toEqual({ skip: ["Registry"] });
    expect(tenantClusterManifest(payments).metadata.annotations).toEqual({ [carenPreflightSkipAnnotation]: "Registry" });
    expect(tenantClusterManifest({ ...payments, carenPreflight: { skip: ["Registry", "GenericConfiguration"] } }).metadata.annotations).toEqual({
      [carenPreflightSkipAnnotation]: "Registry,GenericConfiguration",
    });
    expect(tenantClusterManifest({ ...payments, carenPreflight: undefined }).metadata.annotations).toBeUndefined();
  });

  it("adds the tenant's own annotations next to the opt-outs", () => {
    const annotations = { "topology.cluster.x-k8s.io/upgrade-concurrency": "2" };
    const plain = { ...payments, carenPreflight: undefined };
    expect(tenantClusterManifest({ ...plain, annotations }).metadata.annotations).toEqual(annotations);
    expect(tenantClusterManifest({ ...payments, annotations, loadBalancerGarbageCollection: false }).metadata.annotations).toEqual({
      ...annotations,
      [loadBalancerGcAnnotation]: "false",
      [carenPreflightSkipAnnotation]: "Registry",
    });
  });
});

describe("the hcloud CCM and CSI HelmChartProxies", () => {
  const selects = (proxy: ReturnType<typeof hcloudCcmProxy>, tenant: TenantClusterSettings) => {
    const selector = (proxy.spec.clusterSelector as { matchLabels: Record<string, string> }).matchLabels;
    const labels = tenantClusterManifest(tenant).metadata.labels ?? {};
    return proxy.metadata.namespace === tenant.namespace && Object.entries(selector).every(([key, value]) => labels[key] === value);
  };

  it.each(tenants.map((tenant) => [tenant.name, tenant] as const))("select the %s Cluster and no other tenant's", (_name, tenant) => {
    for (const proxy of [hcloudCcmProxy(tenant), hcloudCsiProxy(tenant)]) {
      expect(selects(proxy, tenant)).toBe(true);
      for (const other of tenants.filter((t) => t !== tenant)) {
        expect(selects(proxy, { ...other, namespace: tenant.namespace })).toBe(false);
      }
    }
    expect(tenantClusterManifest(tenant).metadata.labels).toMatchObject({ [tenantLabels.hcloudCcm]: "true", [tenantLabels.hcloudCsi]: "true" });
  });

  it("are objects CAAPH's CRD serves and accepts, each with its own name the API server accepts", () => {
    const caaph = crdSources.find((source) => source.module === "sigs.k8s.io/cluster-api-addon-provider-helm")!;
    const crds = crdFiles(caaph, ["addons.cluster.x-k8s.io_helmchartproxies.yaml"]);
    if ("unavailable" in crds) throw new Error(crds.unavailable);
    // k8s.io/apimachinery@v0.34.3: pkg/util/validation/validation.go, IsDNS1123Subdomain (object names).
    const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
    for (const tenant of tenants) {
      const proxies = [hcloudCcmProxy(tenant), hcloudCsiProxy(tenant)];
      for (const proxy of proxies) {
        const schema = crdSchema(crds, proxy.apiVersion, proxy.kind);
        expect(schema, `${proxy.apiVersion} ${proxy.kind}`).toBeDefined();
        const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema!);
        expect(validate(proxy), JSON.stringify(validate.errors)).toBe(true);
        expect(proxy.metadata.name.length).toBeLessThanOrEqual(253);
        expect(proxy.metadata.name).toMatch(dns1123Subdomain);
      }
      expect(new Set(proxies.map((proxy) => proxy.metadata.name)).size).toBe(proxies.length);
    }
  });

  it("install the catalog's charts into kube-system", () => {
    expect(hcloudCcmProxy(payments).spec).toMatchObject({
      repoURL: catalog.hcloudCloudControllerManager.chart.repository,
      chartName: catalog.hcloudCloudControllerManager.chart.chart,
      version: catalog.hcloudCloudControllerManager.chart.version,
      namespace: "kube-system",
    });
    expect(hcloudCsiProxy(payments).spec).toMatchObject({ chartName: catalog.hcloudCsi.chart.chart, version: catalog.hcloudCsi.chart.version });
  });

  it("make Helm wait for the chart's resources, within a timeout CAAPH's webhook can decode", () => {
    // sigs.k8s.io/cluster-api-addon-provider-helm@v0.6.4: api/v1alpha1/helmchartproxy_types.go (HelmOptions:
    // Wait, Timeout *metav1.Duration, which the API server decodes with Go's time.ParseDuration).
    const goDuration = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
    for (const proxy of [hcloudCcmProxy(payments), hcloudCsiProxy(payments)]) {
      const options = proxy.spec.options as { wait?: boolean; timeout?: string };
      expect(options.wait).toBe(true);
      expect(options.timeout).toMatch(goDuration);
    }
  });

  it("give the CCM the network from CAPH's hcloud Secret", () => {
    const values = parse(hcloudCcmProxy(payments).spec.valuesTemplate as string) as { env: Record<string, unknown> };
    expect(values.env.HCLOUD_NETWORK).toEqual({ valueFrom: { secretKeyRef: { name: "hcloud", key: "network" } } });
    expect(values.env.HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP).toEqual({ value: "true" });
  });

  it("make the CSI StorageClass delete volumes by default, and retain them only when configured", () => {
    const storageClasses = (tenant: TenantClusterSettings) =>
      (parse(hcloudCsiProxy(tenant).spec.valuesTemplate as string) as { storageClasses: { reclaimPolicy: string }[] }).storageClasses;
    expect(storageClasses(payments)).toEqual([{ name: "hcloud-volumes", defaultStorageClass: true, reclaimPolicy: "Delete" }]);
    expect(storageClasses({ ...payments, storage: { reclaimPolicy: "Retain" } })[0]!.reclaimPolicy).toBe("Retain");
  });
});
