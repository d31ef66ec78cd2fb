// The tenant's whole desired state (tenant-cluster-plan.ts), checked by its relations: what waits
// for what, which namespace each object is in, that what CAPH, CAREN, CAAPH and the commands read
// is there under the name they read, and that secrets stay references.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deletePropagationPolicy } from "../../../tests/support/pulumi-kubernetes-delete";
import { readStackConfig, repoRoot } from "../../../tests/support/stack-files";
import { fleetConfigSchema } from "../config/fleet-config";
import { tenant as rawTenant } from "../../../tests/support/fleet-config-fixtures";
import { carenExtensionNames } from "../platform/caren-extensions";
import { apiVersions } from "../platform/cluster-api-kinds";
import { fleetRepositoryName } from "../platform/flux";
import { classVariables, clusterctlMoveLabels, hetznerClusterClassManifests, hetznerClusterClassTemplates, hetznerClusterNameOf } from "../platform/hetzner-cluster-class";
import { mirroredChart } from "../platform/mirrors";
import { platformNamespaces } from "../platform/platform-namespaces";
import { catalog } from "../versions/catalog";
import { ciliumValuesKey, registryCredentialsKeys } from "./caren-cluster-config";
import { registryCredentialNames } from "../config/secret-reader";
import { tenantLabels, workloadKubeconfigSecret, type TenantClusterSettings } from "./tenant-cluster";
import { tenantClusterPlan, type PlannedCommand, type PlannedPart, type SecretRef, type TenantClusterPlan, type TenantClusterPlanInput, type TenantPlanStep } from "./tenant-cluster-plan";
import { caphServerOwnershipLabel } from "./tenant-firewall";
import { scriptEntryPoints } from "../contract/script-entry-points";

/** Tenants as the program hands them over: parsed with the stack file's schema, namespace defaulted. */
function parsed(raw: readonly unknown[]): TenantClusterSettings[] {
  return fleetConfigSchema.shape.tenants.parse(raw).map((tenant) => ({ ...tenant, namespace: tenant.namespace ?? tenant.name }));
}
const prod = parsed(JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as unknown[]);
const one = (name: string, overrides: Record<string, unknown> = {}) => parsed([rawTenant(name, overrides)])[0]!;

const pool = (name: string, sizing: Record<string, unknown>) => ({ name, machineType: "cx33", failureDomain: "fsn1", ...sizing });
const karpenterImage = "registry.example.com/karpenter-clusterapi-controller:v0.2.0";
const karpenterSizing = { autoscaling: { provider: "karpenter", cpuLimit: 16 } };
const autoscalerSizing = { autoscaling: { minSize: 1, maxSize: 3 } };

/** The registry credentials a tenant references, as the component would hold them. */
const credentialsOf = (tenant: TenantClusterSettings, caCrt = false) => Object.fromEntries(registryCredentialNames(tenant).map((name) => [name, { caCrt }]));

/** The tenants of the table: the prod stack's and one per shape a tenant can take. */
const cases: { what: string; input: TenantClusterPlanInput }[] = [
  ...prod.map((tenant) => ({ what: `prod ${tenant.name}`, input: { name: `tenant-${tenant.name}`, tenant, registryCredentials: credentialsOf(tenant) } })),
  { what: "fixed pools only", input: { name: "tenant-fixed", tenant: one("fixed") } },
  { what: "fixed pools and a Karpenter image", input: { name: "tenant-idle", tenant: one("idle", { karpenter: { image: karpenterImage } }) } },
  { what: "a cluster-autoscaler pool", input: { name: "tenant-scaled", tenant: one("scaled", { workers: [pool("md-0", autoscalerSizing)] }) } },
  { what: "a Karpenter pool", input: { name: "tenant-karp", tenant: one("karp", { workers: [pool("md-0", karpenterSizing)], karpenter: { image: karpenterImage } }) } },
  {
    what: "fixed, autoscaled and Karpenter pools",
    input: {
      name: "tenant-mixed",
      tenant: one("mixed", { workers: [pool("md-0", { replicas: 1 }), pool("md-1", autoscalerSizing), pool("md-2", karpenterSizing)], karpenter: { image: karpenterImage } }),
    },
  },
  {
    what: "registries with a CA, mirrors, apps and an SSH key",
    input: {
      name: "tenant-full",
      tenant: one("full", {
        namespace: "team-full",
        workers: [pool("md-0", autoscalerSizing)],
        imageRegistries: [{ url: "https://registry.example.com", credentials: "harbor" }],
        globalImageRegistryMirror: { url: "https://mirror.example.com", credentials: "cache" },
        cni: { provider: "cilium", strategy: "HelmAddon", values: { ipam: { mode: "kubernetes" } } },
        apps: { path: "./clusters/full/apps" },
        sshKeyName: "ops",
        annotations: { "example.com/owner": "team-full" },
      }),
      registryCredentials: { harbor: { caCrt: true }, cache: { caCrt: false } },
      adminCidrs: ["198.51.100.0/24"],
      mirrors: { charts: "oci://mirror.example.com/charts", images: "mirror.example.com" },
    },
  },
];

/** The steps the component itself provides. */
const componentInputs: readonly TenantPlanStep[] = ["upstream", "clusterClass", "carenReady", "fluxInstance"];

/** Every part of a plan, with the plan key it sits under and what kind of resource it becomes. */
function partsOf(plan: TenantClusterPlan): { key: keyof TenantClusterPlan; kind: string; part: PlannedPart }[] {
  const kinds: Record<keyof TenantClusterPlan, string> = {
    namespace: "Namespace",
    hcloudSecret: "Secret",
    hcloudProject: "hcloud:Provider",
    firewall: "hcloud:Firewall",
    registryCredentials: "Secret",
    ciliumValues: "ConfigMap",
    addons: "HelmChartProxy",
    remediationTemplate: "HCloudRemediationTemplate",
    cluster: "Cluster",
    kubeconfigCommand: "Command",
    kubeconfigRead: "Secret (read)",
    clusterAutoscaler: "ClusterAutoscaler",
    karpenter: "Karpenter",
    loadBalancerDrain: "Command",
    apps: "Kustomization",
  };
  return (Object.entries(plan) as [keyof TenantClusterPlan, PlannedPart | readonly PlannedPart[]][]).flatMap(([key, value]) =>
    (Array.isArray(value) ? (value as readonly PlannedPart[]) : [value as PlannedPart]).map((part) => ({ key, kind: kinds[key], part })),
  );
}

type ClusterView = {
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { topology: { classRef: { namespace: string }; version: string; variables: { name: string; value: unknown }[] } };
};
const clusterOf = (plan: TenantClusterPlan) => plan.cluster.manifest as unknown as ClusterView;
const variableOf = (plan: TenantClusterPlan, name: string) => clusterOf(plan).spec.topology.variables.find((variable) => variable.name === name)?.value;

/** The names of the Secrets the Cluster's clusterConfig tells CAREN to read. */
function secretsCarenReads(plan: TenantClusterPlan): string[] {
  const config = variableOf(plan, classVariables.clusterConfig) as {
    imageRegistries?: { credentials?: { secretRef: { name: string } } }[];
    globalImageRegistryMirror?: { credentials?: { secretRef: { name: string } } };
  };
  const references = [...(config.imageRegistries ?? []).map((registry) => registry.credentials), config.globalImageRegistryMirror?.credentials];
  return references.flatMap((reference) => (reference ? [reference.secretRef.name] : []));
}

/** The secret references in a command's environment, and whether everything else is a plain string. */
const secretsOf = (command: PlannedCommand) => Object.values(command.environment).filter((value): value is SecretRef => typeof value !== "string");

describe.each(cases)("the plan of a tenant with $what", ({ input }) => {
  // Computed in each test, not while the file loads: StrykerJS activates a mutant per test.
  const planned = () => {
    const plan = tenantClusterPlan(input);
    return { plan, cluster: clusterOf(plan), namespace: plan.namespace.metadata.name };
  };

  it("names every resource after the component, each name once per kind", () => {
    const { plan } = planned();
    const parts = partsOf(plan);
    expect(parts.filter(({ part }) => !part.resourceName.startsWith(input.name)).map(({ key }) => key)).toEqual([]);
    const names = parts.map(({ kind, part }) => `${kind} ${part.resourceName}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it("lists each part after everything it waits for", () => {
    const { plan } = planned();
    const registered = new Set<string>(componentInputs);
    for (const { key, part } of partsOf(plan)) {
      expect(part.dependsOn.filter((step) => !registered.has(step)), key).toEqual([]);
      registered.add(key);
    }
  });

  it("puts the tenant's objects into its namespace, each waiting for it, and the Cluster there", () => {
    const { plan, cluster, namespace } = planned();
    expect(namespace).toBe(input.tenant.namespace);
    expect(cluster.metadata).toMatchObject({ name: input.tenant.name, namespace });
    const inNamespace = [plan.hcloudSecret, ...plan.registryCredentials.filter((secret) => secret.metadata.namespace === namespace), ...(plan.ciliumValues ? [plan.ciliumValues] : [])];
    for (const part of inNamespace) {
      expect(part.metadata.namespace, part.resourceName).toBe(namespace);
      expect(part.dependsOn, part.resourceName).toContain("namespace");
    }
    for (const part of [...plan.addons, plan.remediationTemplate]) {
      expect(part.manifest.metadata.namespace, part.resourceName).toBe(namespace);
      expect(part.dependsOn, part.resourceName).toContain("namespace");
    }
    // The namespace waits for what the component was told to wait for, and is deleted last.
    expect(plan.namespace.dependsOn).toEqual(["upstream"]);
  });

  it("has the Cluster wait for everything registered before it, for the class and for CAREN", () => {
    const { plan } = planned();
    const before = partsOf(plan)
      .slice(0, partsOf(plan).findIndex(({ key }) => key === "cluster"))
      .map(({ key }) => key)
      .filter((key) => key !== "hcloudProject");
    expect([...plan.cluster.dependsOn].sort()).toEqual([...new Set(before), "clusterClass", "carenReady"].sort());
    // Pulumi gives CAPI at least an hour for the teardown before it deletes what the Cluster waited for.
    expect(Number(/^(\d+)m$/.exec(plan.cluster.deleteTimeout)?.[1])).toBeGreaterThanOrEqual(60);
  });

  it("leaves the Cluster to the kubeconfig command's wait and to CAPI's teardown order", () => {
    const { cluster } = planned();
    // pulumi-kubernetes' skipAwait annotation: the command below is the bounded wait instead.
    expect(cluster.metadata.annotations["pulumi.com/skipAwait"]).toBe("true");
    expect(deletePropagationPolicy(cluster.metadata.annotations)).toBe("Background");
    for (const [key, value] of Object.entries(input.tenant.annotations)) {
      expect(cluster.metadata.annotations[key]).toBe(value);
    }
  });

  it("writes the hcloud Secret CAPH reads, with the tenant's token under the key it reads", () => {
    const { plan } = planned();
    const reference = (hetznerClusterClassTemplates().infrastructureCluster.spec as { template: { spec: { hetznerSecretRef: { name: string; key: { hcloudToken: string } } } } })
      .template.spec.hetznerSecretRef;
    expect(plan.hcloudSecret.metadata.name).toBe(reference.name);
    expect(plan.hcloudSecret.stringData).toEqual({ [reference.key.hcloudToken]: { secret: "hcloud-token" } });
    expect(plan.hcloudProject.token).toEqual({ secret: "hcloud-token" });
  });

  it("writes every Secret CAREN reads into the tenant's namespace and the class's, with CAREN's keys", () => {
    const { plan, cluster, namespace } = planned();
    const classNamespace = cluster.spec.topology.classRef.namespace;
    const names = secretsCarenReads(plan);
    expect(plan.registryCredentials).toHaveLength(2 * names.length);
    for (const name of names) {
      const copies = plan.registryCredentials.filter((secret) => secret.metadata.name === name);
      expect(copies.map((secret) => secret.metadata.namespace)).toEqual([namespace, classNamespace]);
      const [tenantCopy, classCopy] = copies;
      // In the shared namespace, the tenant's label tells one tenant's copies from another's.
      expect(classCopy!.metadata.labels).toMatchObject({ [tenantLabels.tenant]: input.tenant.name });
      expect(Object.keys(tenantCopy!.metadata.labels)).toEqual(Object.keys(clusterctlMoveLabels));
      // The class's namespace exists once the class does.
      expect(classCopy!.dependsOn).toContain("clusterClass");
      for (const secret of copies) {
        const credentials = Object.entries(input.registryCredentials ?? {}).find(([candidate]) => name.endsWith(`.${candidate}`))!;
        const fields = ["username", "password", ...(credentials[1].caCrt ? ["caCrt" as const] : [])] as const;
        expect(secret.stringData).toEqual(Object.fromEntries(fields.map((field) => [registryCredentialsKeys[field], { secret: "registry-credential", credentials: credentials[0], field }])));
      }
    }
  });

  it("labels every Secret and ConfigMap for clusterctl move, which no ownerReference leads to", () => {
    const { plan } = planned();
    for (const part of [plan.hcloudSecret, ...plan.registryCredentials, ...(plan.ciliumValues ? [plan.ciliumValues] : [])]) {
      expect(part.metadata.labels, part.resourceName).toMatchObject(clusterctlMoveLabels);
    }
  });

  it("puts the Cilium values where CAREN's sourceRef points, only when the tenant sets some", () => {
    const { plan, namespace } = planned();
    const cni = (variableOf(plan, classVariables.clusterConfig) as { addons: { cni: { values?: { sourceRef: { name: string } } } } }).addons.cni;
    expect(plan.ciliumValues !== undefined).toBe(input.tenant.cni.values !== undefined);
    if (plan.ciliumValues) {
      expect(plan.ciliumValues.metadata).toMatchObject({ name: cni.values!.sourceRef.name, namespace });
      expect(Object.keys(plan.ciliumValues.data)).toContain(ciliumValuesKey);
    }
  });

  it("has Hetzner apply the firewall to exactly the servers CAPH creates for the Cluster", () => {
    const { plan, cluster } = planned();
    const label = caphServerOwnershipLabel(hetznerClusterNameOf(cluster.metadata.name));
    expect(plan.firewall.applyTos).toEqual([{ labelSelector: `${label.key}=${label.value}` }]);
    expect(plan.firewall.name).toContain(input.tenant.name);
    // Labelled as the tenant's, as its Cluster is.
    expect(plan.firewall.labels).toEqual({ [tenantLabels.tenant]: input.tenant.name });
    expect(cluster.metadata.labels).toMatchObject(plan.firewall.labels);
    // Node to node over the Cluster's private network; SSH only from the admin networks the component was given.
    const network = (variableOf(plan, classVariables.network) as { cidrBlock: string }).cidrBlock;
    expect(plan.firewall.rules.filter((rule) => rule.sourceIps.includes(network)).map((rule) => rule.protocol).sort()).toEqual(["icmp", "tcp", "udp"]);
    const outside = plan.firewall.rules.filter((rule) => !rule.sourceIps.includes(network));
    expect(outside.flatMap((rule) => rule.sourceIps)).toEqual(input.tenant.sshKeyName ? [...(input.adminCidrs ?? [])] : []);
  });

  it("installs the hcloud CCM and CSI driver into this Cluster, from the mirror when there is one", () => {
    const { plan, cluster } = planned();
    expect(plan.addons).toHaveLength(2);
    for (const addon of plan.addons) {
      const spec = addon.manifest.spec as { clusterSelector: { matchLabels: Record<string, string> }; repoURL: string };
      expect(cluster.metadata.labels).toMatchObject(spec.clusterSelector.matchLabels);
      expect(spec.repoURL === input.mirrors?.charts).toBe(input.mirrors?.charts !== undefined);
    }
    expect(plan.addons.map((addon) => (addon.manifest.spec as { chartName: string }).chartName).sort()).toEqual(
      [catalog.hcloudCloudControllerManager.chart, catalog.hcloudCsi.chart].map((pin) => mirroredChart(pin, input.mirrors).chart).sort(),
    );
  });

  it("puts the remediation template the class's health checks name into the tenant's namespace", () => {
    const { plan, namespace } = planned();
    const classSpec = hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() }).clusterClass.spec as {
      controlPlane: { healthCheck: { remediation: { templateRef: { kind: string; name: string } } } };
    };
    const reference = classSpec.controlPlane.healthCheck.remediation.templateRef;
    expect(plan.remediationTemplate.manifest).toMatchObject({ kind: reference.kind, metadata: { name: reference.name, namespace } });
  });

  it("waits for the Cluster with a command, then reads the kubeconfig Secret CAPI writes", () => {
    const { plan, cluster, namespace } = planned();
    const command = plan.kubeconfigCommand;
    const secret = workloadKubeconfigSecret(cluster.metadata.name);
    expect(command.create).toContain(scriptEntryPoints.workloadKubeconfig);
    expect(existsSync(path.join(repoRoot, scriptEntryPoints.workloadKubeconfig))).toBe(true);
    expect(command.delete).toBeUndefined();
    expect(command.dependsOn).toEqual(["cluster"]);
    expect(command.environment).toMatchObject({ TENANT_NAMESPACE: namespace, TENANT_CLUSTER: cluster.metadata.name, WAIT_FOR_READY: String(input.tenant.waitForReady) });
    expect(Number(command.environment.WAIT_SECONDS)).toBeGreaterThan(0);
    expect(secretsOf(command)).toEqual([{ secret: "management-kubeconfig" }]);
    expect(plan.kubeconfigRead).toMatchObject({ id: `${namespace}/${secret.name}`, key: secret.key, dependsOn: ["kubeconfigCommand"] });
  });

  it("drains the load balancers on delete only, before the Cluster and its kubeconfig are gone", () => {
    const { plan, cluster, namespace } = planned();
    const drain = plan.loadBalancerDrain;
    expect(drain.delete).toContain(scriptEntryPoints.drainLoadBalancers);
    expect(existsSync(path.join(repoRoot, scriptEntryPoints.drainLoadBalancers))).toBe(true);
    expect(drain.create).toBeUndefined();
    expect([...drain.dependsOn].sort()).toEqual(["cluster", "kubeconfigCommand"]);
    expect(drain.environment).toMatchObject({ TENANT_NAMESPACE: namespace, TENANT_CLUSTER: cluster.metadata.name });
    expect(Number(drain.environment.DRAIN_WAIT_SECONDS)).toBeGreaterThan(0);
    expect(secretsOf(drain)).toEqual([{ secret: "management-kubeconfig" }, { secret: "workload-kubeconfig" }, { secret: "hcloud-token" }]);
  });

  it("runs the cluster autoscaler exactly for autoscaled pools, against this Cluster's kubeconfig Secret", () => {
    const { plan, cluster, namespace } = planned();
    const autoscaled = input.tenant.workers.some((worker) => worker.autoscaling !== undefined && worker.autoscaling.provider !== "karpenter");
    expect(plan.clusterAutoscaler !== undefined).toBe(autoscaled);
    if (plan.clusterAutoscaler) {
      expect(plan.clusterAutoscaler.target).toEqual({
        name: cluster.metadata.name,
        namespace,
        kubernetesVersion: cluster.spec.topology.version,
        kubeconfigSecret: { name: plan.kubeconfigRead.id.split("/")[1], key: plan.kubeconfigRead.key },
      });
      expect(plan.clusterAutoscaler.mirrors).toEqual(input.mirrors);
      expect(plan.clusterAutoscaler.dependsOn).toEqual(["kubeconfigCommand"]);
    }
  });

  it("runs Karpenter exactly for the Karpenter pools, selecting this Cluster", () => {
    const { plan, cluster, namespace } = planned();
    const pools = input.tenant.workers.filter((worker) => worker.autoscaling?.provider === "karpenter").map((worker) => worker.name);
    expect(plan.karpenter !== undefined).toBe(pools.length > 0);
    if (plan.karpenter) {
      expect(plan.karpenter.pools.map((karpenterPool) => karpenterPool.name)).toEqual(pools);
      expect(plan.karpenter.target).toEqual({
        name: cluster.metadata.name,
        namespace,
        kubeconfigSecret: { name: plan.kubeconfigRead.id.split("/")[1], key: plan.kubeconfigRead.key },
        image: input.tenant.karpenter!.image,
      });
      expect(cluster.metadata.labels).toMatchObject(plan.karpenter.clusterSelector);
      expect(Object.keys(plan.karpenter.clusterSelector)).not.toEqual([]);
      expect(plan.karpenter.managementKubeconfig).toEqual({ secret: "management-kubeconfig" });
      expect(plan.karpenter.dependsOn).toEqual(["kubeconfigCommand"]);
    }
  });

  it("applies the tenant's apps from the fleet repository with this Cluster's kubeconfig, only when it has some", () => {
    const { plan, namespace } = planned();
    expect(plan.apps !== undefined).toBe(input.tenant.apps !== undefined);
    if (plan.apps) {
      // Flux's Kustomization, the kind kustomize-controller reconciles.
      expect(plan.apps.manifest).toMatchObject({ apiVersion: apiVersions.fluxKustomization, kind: "Kustomization" });
      expect(plan.apps.manifest.spec).toMatchObject({
        path: input.tenant.apps!.path,
        sourceRef: { kind: "GitRepository", name: fleetRepositoryName, namespace: platformNamespaces.flux },
        kubeConfig: { secretRef: { name: plan.kubeconfigRead.id.split("/")[1], key: plan.kubeconfigRead.key } },
      });
      expect(plan.apps.manifest.metadata).toMatchObject({ name: expect.stringContaining(input.tenant.name) as string, namespace });
      expect([...plan.apps.dependsOn].sort()).toEqual(["fluxInstance", "kubeconfigCommand"]);
    }
  });
});

describe("the plan's settings", () => {
  const tenant = one("settings");

  it("passes the component's waits and timeout on", () => {
    const plan = tenantClusterPlan({ name: "t", tenant, kubeconfigWaitSeconds: 900, drainWaitSeconds: 120, deleteTimeoutMinutes: 90 });
    expect(plan.kubeconfigCommand.environment.WAIT_SECONDS).toBe("900");
    expect(plan.loadBalancerDrain.environment.DRAIN_WAIT_SECONDS).toBe("120");
    expect(plan.cluster.deleteTimeout).toBe("90m");
  });

  it("tells the kubeconfig command not to wait for Available with waitForReady: false", () => {
    expect(tenantClusterPlan({ name: "t", tenant: { ...tenant, waitForReady: false } }).kubeconfigCommand.environment.WAIT_FOR_READY).toBe("false");
  });

  it("keeps SSH closed without admin networks (existing mode), even with an SSH key", () => {
    const plan = tenantClusterPlan({ name: "t", tenant: { ...tenant, sshKeyName: "ops" } });
    const network = tenant.network.nodesCidr;
    expect(plan.firewall.rules.flatMap((rule) => rule.sourceIps).filter((source) => source !== network)).toEqual([]);
  });

  it("plans no Karpenter for Karpenter pools without the provider's image (validation refuses that config)", () => {
    const withoutImage = one("karp", { workers: [pool("md-0", karpenterSizing)] });
    expect(tenantClusterPlan({ name: "t", tenant: withoutImage }).karpenter).toBeUndefined();
  });

});
