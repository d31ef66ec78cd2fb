import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { byType, one, runStack, waitsFor } from "../tests/support/fleet-run";
import { deletePropagationPolicy } from "../tests/support/pulumi-kubernetes-delete";
import { liveObjects, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../tests/support/stack-files";
import type { FleetOutputs } from "./fleet";
import { clusterClassName } from "./model/platform/hetzner-cluster-class";
import { componentTypes } from "./model/contract/component-types";

// The tenants of the committed stacks under mocks: what each one registers, in which order
// Pulumi will delete it, and that tokens and kubeconfigs stay secret.

const clusterType = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster";
const clusterClassType = "kubernetes:cluster.x-k8s.io/v1beta2:ClusterClass";
const helmChartProxyType = "kubernetes:addons.cluster.x-k8s.io/v1alpha1:HelmChartProxy";
const commandType = "command:local:Command";
const kustomizationType = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization";

const prodTenants = (
  JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as { name: string; namespace: string; imageRegistries?: { credentials?: string }[]; globalImageRegistryMirror?: { credentials?: string } }[]
).map((t) => ({
  name: t.name,
  namespace: t.namespace,
  // The registry credentials the tenant references: one Secret each.
  credentials: [...new Set([...(t.imageRegistries ?? []).map((r) => r.credentials), t.globalImageRegistryMirror?.credentials].filter((c): c is string => c !== undefined))],
}));

describe("the prod tenants", () => {
  let registrations: Registration[];
  let outputs: FleetOutputs;
  const ofTenant = (tenant: string, type: string) => byType(registrations, type).filter((r) => r.urn.includes(`tenant-${tenant}`));

  beforeAll(async () => {
    ({ registrations, outputs } = await runStack("prod"));
  });

  it("registers one ClusterClass with its six templates, after CAREN is ready", () => {
    const clusterClass = one(registrations, clusterClassType);
    expect(clusterClass.inputs.metadata).toMatchObject({ name: clusterClassName, annotations: { "pulumi.com/waitFor": "condition=VariablesReady" } });
    const templates = registrations.filter((r) => r.urn.includes(componentTypes.hetznerClusterClass) && /Template$/.test(r.type));
    expect(templates.map((t) => t.type.split(":").at(-1)).sort()).toEqual([
      "HCloudMachineTemplate",
      "HCloudMachineTemplate",
      "HCloudRemediationTemplate",
      "HetznerClusterTemplate",
      "KubeadmConfigTemplate",
      "KubeadmControlPlaneTemplate",
    ]);
    expect(waitsFor(registrations, clusterClass, one(registrations, "kubernetes:runtime.cluster.x-k8s.io/v1beta2:ExtensionConfigPatch"))).toBe(true);
  });

  it.each(prodTenants)("registers every object of tenant $name", ({ name, namespace, credentials }) => {
    expect(ofTenant(name, "kubernetes:core/v1:Namespace").map((r) => (r.inputs.metadata as { name: string }).name)).toEqual([namespace]);
    const secrets = ofTenant(name, "kubernetes:core/v1:Secret");
    const key = (metadata: unknown) => `${(metadata as { namespace: string }).namespace}/${(metadata as { name: string }).name}`;
    const byKey = (a: unknown, b: unknown) => key(a).localeCompare(key(b));
    expect(secrets.filter((r) => !r.readId).map((r) => r.inputs.metadata).sort(byKey)).toEqual([
      { name: "hcloud", namespace, labels: { "clusterctl.cluster.x-k8s.io/move": "" } },
      // Each credential twice under one name: in the tenant's namespace and in the class's (where CAREN reads it).
      ...credentials.flatMap((credential) => [
        { name: `registry-credentials.${name}.${credential}`, namespace, labels: { "clusterctl.cluster.x-k8s.io/move": "" } },
        { name: `registry-credentials.${name}.${credential}`, namespace: "capi-fleet-system", labels: { "clusterctl.cluster.x-k8s.io/move": "", "capi-fleet.io/tenant": name } },
      ]),
    ].sort(byKey));
    // CAPI's kubeconfig Secret is only read, never managed.
    expect(secrets.filter((r) => r.readId).map((r) => r.readId)).toEqual([`${namespace}/${name}-kubeconfig`]);
    expect(ofTenant(name, helmChartProxyType).map((r) => (r.inputs.metadata as { name: string }).name).sort()).toEqual(["hcloud-ccm", "hcloud-csi"]);
    expect(ofTenant(name, clusterType).map((r) => r.inputs.metadata)).toEqual([
      expect.objectContaining({ name, namespace, annotations: expect.objectContaining({ "pulumi.com/skipAwait": "true" }) }),
    ]);
    expect(ofTenant(name, commandType).map((r) => r.name).sort()).toEqual([`tenant-${name}-kubeconfig`, `tenant-${name}-load-balancer-drain`]);
  });

  it.each(prodTenants)("creates the Cluster of $name after its class, CAREN, Secret and add-ons, so Pulumi deletes it before them", ({ name }) => {
    const cluster = ofTenant(name, clusterType)[0]!;
    const required = [
      one(registrations, clusterClassType),
      one(registrations, "kubernetes:runtime.cluster.x-k8s.io/v1beta2:ExtensionConfigPatch"),
      ...ofTenant(name, "kubernetes:core/v1:Secret").filter((r) => !r.readId),
      ...ofTenant(name, helmChartProxyType),
    ];
    for (const dependency of required) {
      expect(waitsFor(registrations, cluster, dependency), dependency.name).toBe(true);
    }
    // Pulumi waits this long for CAPI's teardown before it deletes what the Cluster depends on.
    expect(cluster.deleteTimeout).toBe("60m");
  });

  it.each(prodTenants)("has pulumi-kubernetes delete the Cluster of $name in the background, so CAPI alone orders the teardown", ({ name }) => {
    // Foreground deletion would let the garbage collector delete the Cluster's MachineDeployments,
    // control plane and infrastructure cluster at once, around CAPI's own order (cluster-api #4085).
    const cluster = ofTenant(name, clusterType)[0]!;
    expect(deletePropagationPolicy((cluster.inputs.metadata as { annotations?: Record<string, string> }).annotations)).toBe("Background");
  });

  it.each(prodTenants)("makes the load-balancer drain of $name depend on the Cluster and its kubeconfig, so it runs first on delete", ({ name }) => {
    const drain = one(registrations, commandType, `tenant-${name}-load-balancer-drain`);
    const cluster = ofTenant(name, clusterType)[0]!;
    const kubeconfig = one(registrations, commandType, `tenant-${name}-kubeconfig`);
    expect(drain.dependencies).toEqual(expect.arrayContaining([cluster.urn, kubeconfig.urn]));
    expect(drain.inputs).toMatchObject({ delete: "node scripts/drain-load-balancers.mjs" });
    // Only a delete runs it: no create, no update, no triggers (the one input that replaces a Command).
    expect(drain.inputs.create).toBeUndefined();
    expect(drain.inputs.update).toBeUndefined();
    expect(drain.inputs.triggers).toBeUndefined();
    expect(drain.secretInputs).toContain("environment");
    expect(waitsFor(registrations, kubeconfig, cluster)).toBe(true);
  });

  it("negative control: the program with a drain that does not name the Cluster fails that check", async () => {
    // As if the tenant component declared the drain without `dependsOn`: Pulumi could then delete
    // the Cluster (and CAPI the load balancer's targets) before the drain runs.
    const { registrations: faulty } = await runStack("prod", undefined, (args) =>
      args.name === "tenant-payments-load-balancer-drain" ? { props: args.props, opts: { ...args.opts, dependsOn: [] } } : undefined,
    );
    const drain = one(faulty, commandType, "tenant-payments-load-balancer-drain");
    const cluster = byType(faulty, clusterType).find((r) => r.urn.includes("tenant-payments"))!;
    expect(drain.dependencies).not.toContain(cluster.urn);
  });

  it("puts the registry credentials into Secrets with CAREN's keys, and the Cilium values into a ConfigMap, all before the Cluster", () => {
    const tenant = prodTenants.find((t) => t.credentials.length > 0)!;
    expect(tenant, "a prod tenant with registry credentials").toBeDefined();
    const cluster = ofTenant(tenant.name, clusterType)[0]!;
    const secrets = ofTenant(tenant.name, "kubernetes:core/v1:Secret").filter((r) => !r.readId && (r.inputs.metadata as { name: string }).name.startsWith(`registry-credentials.${tenant.name}.`));
    expect(secrets).toHaveLength(2 * tenant.credentials.length);
    for (const secret of secrets) {
      const credential = (secret.inputs.metadata as { name: string }).name.replace(`registry-credentials.${tenant.name}.`, "");
      expect(secret.secretInputs).toContain("stringData");
      // The stack file's secure values, as the mocks decrypt them.
      expect(secret.inputs.stringData).toEqual({
        username: fakeHcloudToken(`capi-fleet:tenantRegistryCredentials.${tenant.name}.${credential}.username`),
        password: fakeHcloudToken(`capi-fleet:tenantRegistryCredentials.${tenant.name}.${credential}.password`),
      });
      expect(waitsFor(registrations, cluster, secret), secret.name).toBe(true);
    }
    const configMaps = byType(registrations, "kubernetes:core/v1:ConfigMap").filter((r) => r.urn.includes("-cilium-values"));
    expect(configMaps.length).toBeGreaterThan(0);
    for (const configMap of configMaps) {
      const owner = prodTenants.find((t) => configMap.urn.includes(`tenant-${t.name}`))!;
      expect(configMap.inputs.metadata).toMatchObject({ name: "capi-fleet-cilium-values", namespace: owner.namespace });
      // Cilium's values, and the values of its upgrade preflight (CAREN reads both from this ConfigMap).
      expect(Object.keys(configMap.inputs.data as Record<string, string>).sort()).toEqual(["preflight-values.yaml", "values.yaml"]);
      expect(waitsFor(registrations, ofTenant(owner.name, clusterType)[0]!, configMap)).toBe(true);
    }
  });

  it("keeps every tenant token out of plain inputs", () => {
    const tokens = prodTenants.map(({ name }) => fakeHcloudToken(`capi-fleet:tenantHcloudTokens.${name}`));
    const leaks = registrations.flatMap((registration) =>
      Object.entries(registration.inputs)
        .filter(([key, value]) => !registration.secretInputs.includes(key) && tokens.some((token) => JSON.stringify(value ?? null).includes(token)))
        .map(([key]) => `${registration.type} ${registration.name}.${key}`),
    );
    expect(leaks).toEqual([]);
    const secrets = ofTenant("payments", "kubernetes:core/v1:Secret").find((r) => (r.inputs.metadata as { name?: string } | undefined)?.name === "hcloud")!;
    expect(secrets.secretInputs).toContain("stringData");
    expect(JSON.stringify(secrets.inputs.stringData)).toContain(tokens[0]);
  });

  it("exports the tenants' kubeconfigs as a secret and their versions in the clear", async () => {
    expect(await pulumi.isSecret(outputs.tenantKubeconfigs)).toBe(true);
    expect(Object.keys(await valueOf(outputs.tenantKubeconfigs)).sort()).toEqual(prodTenants.map((t) => t.name).sort());
    expect(await pulumi.isSecret(outputs.tenantVersions)).toBe(false);
    const versions = await valueOf(outputs.tenantVersions);
    expect(Object.keys(versions)).toEqual(prodTenants.map((t) => t.name));
    expect(Object.values(versions).map((v) => v.deployed)).toEqual([null, null, null]);
  });

  it.each(prodTenants)("has the kubeconfig command of $name wait for the Cluster to be Available, bounded", ({ name }) => {
    const kubeconfig = one(registrations, commandType, `tenant-${name}-kubeconfig`);
    expect(kubeconfig.inputs.create).toBe("node scripts/workload-kubeconfig.mjs");
    expect(kubeconfig.inputs.environment).toMatchObject({ WAIT_FOR_READY: "true", WAIT_SECONDS: "1800" });
    expect(kubeconfig.secretInputs).toContain("environment");
  });

  it.each(prodTenants)("reads the kubeconfig of $name from the live Secret, only after the command's wait", ({ name, namespace }) => {
    const read = ofTenant(name, "kubernetes:core/v1:Secret").find((r) => r.readId)!;
    expect(read.readId).toBe(`${namespace}/${name}-kubeconfig`);
    expect(waitsFor(registrations, read, one(registrations, commandType, `tenant-${name}-kubeconfig`))).toBe(true);
  });

  it("adds no apps Kustomization for tenants without apps", () => {
    expect(byType(registrations, kustomizationType).filter((r) => r.urn.includes("capi-fleet:tenants:"))).toEqual([]);
  });
});

describe.each([
  { stack: "prod", protect: true },
  { stack: "dev", protect: false },
])("tenant protection in $stack (management.deletionProtection: $protect)", ({ stack, protect }) => {
  it("protects every resource of every tenant exactly when deletion protection is on", async () => {
    const { registrations } = await runStack(stack);
    const tenantResources = registrations.filter((r) => r.type === componentTypes.tenantCluster || r.urn.includes("capi-fleet:tenants:TenantCluster$"));
    // The Cluster, and everything Pulumi would delete before it (apps, load-balancer drain, kubeconfig
    // command): a removed or renamed tenant must stop at its first delete, before any of them runs.
    expect(tenantResources.filter((r) => r.type === clusterType).length).toBeGreaterThan(0);
    expect(tenantResources.filter((r) => r.type === commandType).length).toBeGreaterThan(0);
    // Reads (the kubeconfig Secret) are never deleted by Pulumi: leaving the program only drops them from the state.
    expect(tenantResources.filter((r) => !r.readId && r.protect !== protect).map((r) => r.name)).toEqual([]);
  });
});

describe("a tenant with apps", () => {
  let registrations: Registration[];

  beforeAll(async () => {
    ({ registrations } = await runStack("prod", (values) => {
      const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[];
      tenants[0]!.apps = { path: "./clusters/prod/apps/payments" };
      values["capi-fleet:tenants"] = JSON.stringify(tenants);
    }));
  });

  it("gets a Flux Kustomization in its namespace that applies the apps with the workload kubeconfig", () => {
    const apps = byType(registrations, kustomizationType).filter((r) => r.urn.includes("capi-fleet:tenants:"));
    expect(apps).toHaveLength(1);
    expect(apps[0]!.inputs).toMatchObject({
      metadata: { name: "payments-apps", namespace: "tenant-payments" },
      spec: {
        path: "./clusters/prod/apps/payments",
        sourceRef: { kind: "GitRepository", name: "fleet", namespace: "flux-system" },
        kubeConfig: { secretRef: { name: "payments-kubeconfig", key: "value" } },
        prune: true,
      },
    });
    expect(waitsFor(registrations, apps[0]!, one(registrations, commandType, "tenant-payments-kubeconfig"))).toBe(true);
    expect(waitsFor(registrations, apps[0]!, one(registrations, "kubernetes:fluxcd.controlplane.io/v1:FluxInstance"))).toBe(true);
  });
});

describe("the tenant kubeconfig output", () => {
  const secretType = "kubernetes:core/v1:Secret";
  const kubeconfigOf = (rotation: string) => `apiVersion: v1\nkind: Config\n# client certificate of rotation ${rotation}\n`;
  const capiSecret = (rotation: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "payments-kubeconfig", namespace: "tenant-payments" },
    type: "cluster.x-k8s.io/secret",
    data: { value: Buffer.from(kubeconfigOf(rotation)).toString("base64") },
  });

  it("follows the live Secret when KCP rotates it, and stays secret", async () => {
    const seen: string[] = [];
    try {
      for (const rotation of ["first", "rotated"]) {
        // Between two runs KCP rewrote the Secret (new client certificate); the command is unchanged.
        liveObjects.set(`${secretType}::tenant-payments/payments-kubeconfig`, capiSecret(rotation));
        const { outputs } = await runStack("prod");
        expect(await pulumi.isSecret(outputs.tenantKubeconfigs)).toBe(true);
        seen.push((await valueOf(outputs.tenantKubeconfigs)).payments!);
      }
    } finally {
      liveObjects.clear();
    }
    expect(seen).toEqual([kubeconfigOf("first"), kubeconfigOf("rotated")]);
  });

  it("opts out of the readiness wait per tenant with waitForReady: false", async () => {
    const { registrations } = await runStack("prod", (values) => {
      const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[];
      tenants[0]!.waitForReady = false;
      values["capi-fleet:tenants"] = JSON.stringify(tenants);
    });
    const environments = byType(registrations, commandType)
      .filter((r) => r.name.endsWith("-kubeconfig"))
      .map((r) => [r.name, (r.inputs.environment as Record<string, string>).WAIT_FOR_READY])
      .sort();
    expect(environments).toEqual(prodTenants.map(({ name }, index) => [`tenant-${name}-kubeconfig`, index === 0 ? "false" : "true"]).sort());
  });
});
