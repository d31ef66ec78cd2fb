import { describe, expect, it } from "vitest";
import type { GitOpsSettings } from "../config/fleet-config";
import { catalog } from "../versions/catalog";
import { apiVersions } from "./cluster-api-kinds";
import { clusterApiProviders } from "./cluster-api-providers";
import {
  fleetRepository,
  fleetRepositoryName,
  fluxComponents,
  fluxInstance,
  fluxInstanceName,
  fluxNamespace,
  fluxOperatorRelease,
  infrastructureKustomization,
  kustomizationSpec,
  platformGateKustomization,
  platformGateName,
  platformGateRepository,
  tenantsKustomization,
} from "./flux";
import { platformNamespaces } from "./platform-namespaces";

// The Flux objects as plain manifests. What Flux's controllers make of them (the gate holds
// `tenants` back until CAPI's controllers run and CAREN is discovered) runs against the real
// controllers in tests/in-the-loop/flux-in-the-loop.test.ts; the component's wiring in infra/platform.test.ts.

const gitops: GitOpsSettings = { url: "https://git.example/fleet.git", branch: "release", paths: { infrastructure: "./infra", tenants: "./clusters" } };
const privateGitops: GitOpsSettings = { ...gitops, secretRef: "fleet-credentials" };
const mirrors = { charts: "oci://mirror.example/charts", images: "mirror.example/images" };
const carenName = "caren-extension-config";
const carenApiVersion = apiVersions.extensionConfig;

type Spec = Record<string, unknown>;
const specOf = (manifest: { spec: Spec }) => manifest.spec;

describe("the Flux Operator's release", () => {
  it("is the catalog's chart with the chart's own image, unless the stack names mirrors", () => {
    expect(fluxOperatorRelease()).toEqual({ pin: catalog.flux.operatorChart, values: {} });
    const mirrored = fluxOperatorRelease(mirrors);
    expect(mirrored.pin).toEqual({ ...catalog.flux.operatorChart, repository: mirrors.charts });
    const repository = (mirrored.values as { image: { repository: string } }).image.repository;
    expect(repository.startsWith(`${mirrors.images}/`)).toBe(true);
    expect(catalog.flux.operatorImage.endsWith(repository.slice(mirrors.images.length))).toBe(true);
    expect(fluxOperatorRelease({ charts: mirrors.charts }).values).toEqual({});
  });
});

describe("the FluxInstance", () => {
  it("is the one instance the operator reconciles, in Flux's namespace, awaited until Ready", () => {
    const instance = fluxInstance();
    // The Flux Operator's API (controlplaneio-fluxcd/flux-operator: api/v1/fluxinstance_types.go).
    expect([instance.apiVersion, instance.kind]).toEqual(["fluxcd.controlplane.io/v1", "FluxInstance"]);
    expect(instance.metadata).toMatchObject({ name: fluxInstanceName, namespace: fluxNamespace });
    expect(fluxNamespace).toBe(platformNamespaces.flux);
    expect(instance.metadata.annotations?.["pulumi.com/waitFor"]).toBe("condition=Ready");
    expect(Number(instance.metadata.annotations?.["pulumi.com/timeoutSeconds"])).toBeGreaterThan(0);
  });

  it("runs the catalog's distribution with the fleet's controllers, from the mirror when there is one", () => {
    const spec = specOf(fluxInstance()) as { distribution: { version: string; registry: string }; components: string[]; cluster: Spec };
    expect(spec.distribution).toEqual({ version: catalog.flux.distribution, registry: catalog.flux.registry });
    expect(spec.components).toEqual([...fluxComponents]);
    expect(spec.cluster).toEqual({ type: "kubernetes", multitenant: false, networkPolicy: true, domain: "cluster.local" });
    const mirrored = specOf(fluxInstance(mirrors)) as { distribution: { registry: string } };
    expect(mirrored.distribution.registry.startsWith(`${mirrors.images}/`)).toBe(true);
    // A fresh array: the manifest does not hand out the constant.
    expect(spec.components).not.toBe(fluxComponents);
  });
});

describe("the fleet repository and the gate's source", () => {
  it("read the configured repository and branch, with credentials only for a private one", () => {
    for (const manifest of [fleetRepository(gitops), platformGateRepository(gitops)]) {
      expect(manifest.kind).toBe("GitRepository");
      expect(manifest.metadata.namespace).toBe(fluxNamespace);
      expect(specOf(manifest)).toMatchObject({ url: gitops.url, ref: { branch: gitops.branch } });
      expect(specOf(manifest)).not.toHaveProperty("secretRef");
    }
    for (const manifest of [fleetRepository(privateGitops), platformGateRepository(privateGitops)]) {
      expect(specOf(manifest).secretRef).toEqual({ name: privateGitops.secretRef });
    }
  });

  it("are two sources: the fleet's, polled every minute, and the gate's, which ignores every file", () => {
    expect(fleetRepository(gitops).metadata.name).toBe(fleetRepositoryName);
    expect(platformGateRepository(gitops).metadata.name).toBe(platformGateName);
    expect(fleetRepositoryName).not.toBe(platformGateName);
    expect(specOf(fleetRepository(gitops))).toMatchObject({ interval: "1m" });
    expect(specOf(fleetRepository(gitops))).not.toHaveProperty("ignore");
    expect(specOf(platformGateRepository(gitops))).toMatchObject({ interval: "10m", ignore: "/*" });
  });
});

describe("the Kustomizations", () => {
  it("read the fleet repository and prune what leaves Git", () => {
    expect(kustomizationSpec("./x")).toMatchObject({ path: "./x", prune: true, sourceRef: { kind: "GitRepository", name: fleetRepositoryName } });
    expect(kustomizationSpec("./x")).toMatchObject({ interval: "10m", retryInterval: "2m", timeout: "5m" });
  });

  it("orphan what they applied when deleted, so removing gitops never deletes tenant Clusters", () => {
    for (const manifest of [infrastructureKustomization(gitops), platformGateKustomization(carenName, carenApiVersion), tenantsKustomization(gitops)]) {
      expect(manifest.apiVersion).toBe(apiVersions.fluxKustomization);
      expect(manifest.kind).toBe("Kustomization");
      expect(manifest.metadata.namespace).toBe(fluxNamespace);
      expect(specOf(manifest).deletionPolicy, manifest.metadata.name).toBe("Orphan");
    }
    // The tenant clusters' own Kustomizations (components/tenant-cluster) keep Flux's default.
    expect(kustomizationSpec("./x")).not.toHaveProperty("deletionPolicy");
  });

  it("apply the configured paths: infrastructure waits for what it applied", () => {
    expect(specOf(infrastructureKustomization(gitops))).toMatchObject({ path: gitops.paths.infrastructure, wait: true });
    expect(specOf(tenantsKustomization(gitops))).toMatchObject({ path: gitops.paths.tenants });
    expect(specOf(tenantsKustomization(gitops))).not.toHaveProperty("wait");
  });

  it("are infrastructure, the gate and tenants, as the docs and runbooks name them", () => {
    const names = [infrastructureKustomization(gitops), platformGateKustomization(carenName, carenApiVersion), tenantsKustomization(gitops)].map((manifest) => manifest.metadata.name);
    expect(names).toEqual(["infrastructure", platformGateName, "tenants"]);
  });

  it("hold tenants back until infrastructure and the gate are Ready", () => {
    const dependsOn = specOf(tenantsKustomization(gitops)).dependsOn;
    expect(dependsOn).toEqual([{ name: infrastructureKustomization(gitops).metadata.name }, { name: platformGateKustomization(carenName, carenApiVersion).metadata.name }]);
  });
});

/** The gate as the program builds it, built inside each test (StrykerJS credits only code a test runs). */
function builtGate() {
  const gate = platformGateKustomization(carenName, carenApiVersion);
  const spec = specOf(gate) as {
    path: string;
    interval: string;
    wait: boolean;
    sourceRef: Spec;
    healthChecks: { apiVersion: string; kind: string; name: string; namespace?: string }[];
    healthCheckExprs: { apiVersion: string; kind: string; current: string; failed: string }[];
  };
  return { gate, spec };
}

describe("the platform gate", () => {
  it("applies the gate's empty source and is checked every minute", () => {
    const { gate, spec } = builtGate();
    expect(gate.metadata.name).toBe(platformGateName);
    expect(spec.sourceRef).toEqual({ kind: "GitRepository", name: platformGateRepository(gitops).metadata.name });
    expect(spec.path).toBe("./");
    expect(spec.interval).toBe("1m");
  });

  it("is Ready only while every Cluster API controller runs and CAPI has discovered CAREN's handlers", () => {
    const { spec } = builtGate();
    // With `wait`, Flux would check only what it applied (nothing) and ignore the health checks.
    expect(spec.wait).toBe(false);
    expect(spec.healthChecks).toEqual([
      ...clusterApiProviders.map((provider) => ({ apiVersion: "apps/v1", kind: "Deployment", name: provider.controllerDeployment, namespace: provider.namespace })),
      { apiVersion: carenApiVersion, kind: "ExtensionConfig", name: carenName },
    ]);
  });

  it("reads CAREN's ExtensionConfig by its Discovered condition: current when True, failed when False", () => {
    const { spec } = builtGate();
    expect(spec.healthCheckExprs).toHaveLength(1);
    const [expression] = spec.healthCheckExprs;
    expect(expression).toMatchObject({ apiVersion: carenApiVersion, kind: "ExtensionConfig" });
    expect(expression?.current).toContain("e.type == 'Discovered' && e.status == 'True'");
    expect(expression?.failed).toContain("e.type == 'Discovered' && e.status == 'False'");
    for (const cel of [expression?.current, expression?.failed]) expect(cel).toMatch(/^has\(status\.conditions\) && status\.conditions\.exists\(e, /);
  });
});
