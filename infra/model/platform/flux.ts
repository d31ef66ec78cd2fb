import type { GitOpsSettings } from "../config/fleet-config";
import { catalog, type HelmChartPin } from "../versions/catalog";
import { apiVersions, type Manifest } from "./cluster-api-kinds";
import { clusterApiProviders } from "./cluster-api-providers";
import { mirroredChart, mirroredImage, type Mirrors } from "./mirrors";
import { platformNamespaces } from "./platform-namespaces";

/**
 * What the Flux component (components/flux) installs, as plain manifests: the Flux Operator's
 * release, the FluxInstance pinned to the catalog's distribution and, with GitOps, the fleet
 * repository, the gate's repository and the three Kustomizations (`infrastructure`, the gate
 * `platform-ready`, and `tenants`, which depends on both).
 */

/** Namespace of the operator and of the one FluxInstance. */
export const fluxNamespace = platformNamespaces.flux;
/** The operator reconciles exactly one FluxInstance per cluster, and it must be named `flux`. */
export const fluxInstanceName = "flux";
/** Controllers the fleet uses: sources, Kustomizations, HelmReleases, alerts. */
export const fluxComponents = ["source-controller", "kustomize-controller", "helm-controller", "notification-controller"] as const;
/** Name of the GitRepository the fleet's Kustomizations read. */
export const fleetRepositoryName = "fleet";
/**
 * Name of the gate: a GitRepository of the same repository that ignores every file, and the
 * Kustomization that applies its (empty) artifact and only health-checks the platform.
 */
export const platformGateName = "platform-ready";

const sourceApiVersion = "source.toolkit.fluxcd.io/v1";
const kustomizeApiVersion = apiVersions.fluxKustomization;

/** The Flux Operator's chart and values: from the mirrors when the stack names them. */
export function fluxOperatorRelease(mirrors: Mirrors = {}): { pin: HelmChartPin; values: Record<string, unknown> } {
  return {
    pin: mirroredChart(catalog.flux.operatorChart, mirrors),
    values: mirrors.images ? { image: { repository: mirroredImage(catalog.flux.operatorImage, mirrors) } } : {},
  };
}

/** The FluxInstance: distribution pinned by the catalog, awaited until Ready. */
export function fluxInstance(mirrors: Mirrors = {}): Manifest {
  return {
    apiVersion: "fluxcd.controlplane.io/v1",
    kind: "FluxInstance",
    metadata: {
      name: fluxInstanceName,
      namespace: fluxNamespace,
      annotations: { "pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "600" },
    },
    spec: {
      distribution: { version: catalog.flux.distribution, registry: mirroredImage(catalog.flux.registry, mirrors) },
      components: [...fluxComponents],
      cluster: { type: "kubernetes", multitenant: false, networkPolicy: true, domain: "cluster.local" },
    },
  };
}

/** The fleet repository's source spec; `secretRef` names the credentials of a private one. */
function repositorySpec(gitops: GitOpsSettings): Record<string, unknown> {
  return {
    interval: "1m",
    url: gitops.url,
    ref: { branch: gitops.branch },
    ...(gitops.secretRef ? { secretRef: { name: gitops.secretRef } } : {}),
  };
}

/** The fleet repository. */
export function fleetRepository(gitops: GitOpsSettings): Manifest {
  return {
    apiVersion: sourceApiVersion,
    kind: "GitRepository",
    metadata: { name: fleetRepositoryName, namespace: fluxNamespace },
    spec: repositorySpec(gitops),
  };
}

/**
 * The gate's source: the fleet repository with every file ignored (`ignore` is gitignore
 * syntax), so its artifact is empty and the gate has nothing to apply, with no path the
 * repository must hold for it.
 */
export function platformGateRepository(gitops: GitOpsSettings): Manifest {
  return {
    apiVersion: sourceApiVersion,
    kind: "GitRepository",
    metadata: { name: platformGateName, namespace: fluxNamespace },
    spec: { ...repositorySpec(gitops), interval: "10m", ignore: "/*" },
  };
}

/** Shared Kustomization settings: prune what leaves Git, retry soon after a failure. */
export function kustomizationSpec(path: string): Record<string, unknown> {
  return {
    interval: "10m",
    retryInterval: "2m",
    timeout: "5m",
    prune: true,
    sourceRef: { kind: "GitRepository", name: fleetRepositoryName },
    path,
  };
}

/**
 * The management cluster's Kustomizations: deleting one orphans what it applied. The default,
 * `MirrorPrune`, deletes all of it (fluxcd/kustomize-controller@v1.9.4:
 * api/v1/kustomization_types.go, GetDeletionPolicy; internal/controller/kustomization_controller.go,
 * finalize), so removing `gitops` or replacing a Kustomization would delete tenant Clusters.
 */
function managementKustomizationSpec(path: string): Record<string, unknown> {
  return { ...kustomizationSpec(path), deletionPolicy: "Orphan" };
}

/** Platform add-ons; Ready only when everything it applied is healthy (`wait`). */
export function infrastructureKustomization(gitops: GitOpsSettings): Manifest {
  return {
    apiVersion: kustomizeApiVersion,
    kind: "Kustomization",
    metadata: { name: "infrastructure", namespace: fluxNamespace },
    spec: { ...managementKustomizationSpec(gitops.paths.infrastructure), wait: true },
  };
}

/**
 * The gate: applies the empty artifact of {@link platformGateRepository} and is Ready only
 * when every Cluster API controller's Deployment is available and CAPI has discovered CAREN's
 * handlers. Health checks run after apply (fluxcd/kustomize-controller@v1.9.4:
 * internal/controller/kustomization_controller.go, reconcile: apply, prune, then checkHealth),
 * so on `tenants` itself they would gate nothing; a dependency's `Ready` does
 * (checkDependencies). `wait` stays off because with it Flux checks only what it applied and
 * ignores `healthChecks` (checkHealth).
 */
export function platformGateKustomization(carenExtensionConfigName: string, carenExtensionConfigApiVersion: string): Manifest {
  return {
    apiVersion: kustomizeApiVersion,
    kind: "Kustomization",
    metadata: { name: platformGateName, namespace: fluxNamespace },
    spec: {
      ...managementKustomizationSpec("./"),
      // Re-checked often: `tenants` waits for it (dependency retries every 30 s upstream).
      interval: "1m",
      sourceRef: { kind: "GitRepository", name: platformGateName },
      wait: false,
      healthChecks: [
        ...clusterApiProviders.map((provider) => ({
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: provider.controllerDeployment,
          namespace: provider.namespace,
        })),
        { apiVersion: carenExtensionConfigApiVersion, kind: "ExtensionConfig", name: carenExtensionConfigName },
      ],
      // kstatus knows nothing about ExtensionConfig; `Discovered` is its readiness condition
      // (sigs.k8s.io/cluster-api@v1.12.10: api/runtime/v1beta2/extensionconfig_types.go).
      healthCheckExprs: [
        {
          apiVersion: carenExtensionConfigApiVersion,
          kind: "ExtensionConfig",
          current: "has(status.conditions) && status.conditions.exists(e, e.type == 'Discovered' && e.status == 'True')",
          failed: "has(status.conditions) && status.conditions.exists(e, e.type == 'Discovered' && e.status == 'False')",
        },
      ],
    },
  };
}

/** Tenant objects on the management cluster: applied only once `infrastructure` and the gate are Ready. */
export function tenantsKustomization(gitops: GitOpsSettings): Manifest {
  return {
    apiVersion: kustomizeApiVersion,
    kind: "Kustomization",
    metadata: { name: "tenants", namespace: fluxNamespace },
    spec: {
      ...managementKustomizationSpec(gitops.paths.tenants),
      dependsOn: [{ name: "infrastructure" }, { name: platformGateName }],
    },
  };
}
