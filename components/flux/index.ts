import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/versions/catalog";
import { apiVersions } from "../../infra/model/platform/cluster-api-kinds";
import { clusterApiProviders } from "../../infra/model/platform/cluster-api-providers";
import type { GitOpsSettings } from "../../infra/model/config/fleet-config";
import { mirroredChart, mirroredImage, type Mirrors } from "../../infra/model/platform/mirrors";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import { fleetRepositoryName, kustomizationSpec } from "../../infra/model/platform/flux";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { upstreamOf } from "../upstream";

/** Namespace of the operator and of the one FluxInstance. */
export const fluxNamespace = platformNamespaces.flux;
/** The operator reconciles exactly one FluxInstance per cluster, and it must be named `flux`. */
export const fluxInstanceName = "flux";
/** Controllers the fleet uses: sources, Kustomizations, HelmReleases, alerts. */
export const fluxComponents = ["source-controller", "kustomize-controller", "helm-controller", "notification-controller"] as const;
/**
 * Name of the gate: a GitRepository of the same repository that ignores every file, and the
 * Kustomization that applies its (empty) artifact and only health-checks the platform.
 */
export const platformGateName = "platform-ready";

const sourceApiVersion = "source.toolkit.fluxcd.io/v1";
const kustomizeApiVersion = apiVersions.fluxKustomization;

/** Arguments of {@link Flux}. */
export interface FluxArgs {
  /** The repository to sync; without it only the operator and the FluxInstance are installed. */
  gitops?: GitOpsSettings;
  /** Name of CAREN's ExtensionConfig, which the gate health-checks. */
  carenExtensionConfigName: pulumi.Input<string>;
  /** API version of that ExtensionConfig. */
  carenExtensionConfigApiVersion: string;
  /**
   * `management.deletionProtection`: protect the GitRepositories and Kustomizations, so that
   * removing `gitops` or replacing them needs an explicit unprotect first.
   */
  deletionProtection?: boolean;
  /** Where the Flux Operator's chart comes from instead of its public registry (`mirrors`). */
  mirrors?: Mirrors;
  /** How its Helm release is cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * Flux on the management cluster: the Flux Operator chart and a FluxInstance pinned to the
 * catalog's distribution (no `flux bootstrap`: nothing pushes to Git). With GitOps
 * configured it adds the fleet repository and three Kustomizations: `infrastructure`; the
 * gate `platform-ready`, which applies nothing and is Ready only while every Cluster API
 * controller runs and CAPI has discovered CAREN's handlers; and `tenants`, which depends on
 * both, so kustomize-controller applies nothing from the tenants path before they are Ready.
 */
export class Flux extends pulumi.ComponentResource {
  /** The FluxInstance, awaited until Ready; Flux's own CRDs exist once it is. */
  public readonly instance: k8s.apiextensions.CustomResource;
  /** Kustomization names in reconcile order (empty without GitOps). */
  public readonly kustomizations: pulumi.Output<string[]>;

  constructor(name: string, args: FluxArgs, opts?: pulumi.ComponentResourceOptions) {
    // Component args become recorded inputs: never the kubeconfig inside releaseRecovery.
    const { releaseRecovery: _recovery, ...recorded } = args;
    super("capi-fleet:platform:Flux", name, recorded, opts);
    const operator = pinnedRelease(`${name}-operator`, {
        pin: mirroredChart(catalog.flux.operatorChart, args.mirrors),
        namespace: fluxNamespace,
        ...(args.mirrors?.images ? { values: { image: { repository: mirroredImage(catalog.flux.operatorImage, args.mirrors) } } } : {}),
        recovery: args.releaseRecovery,
      }, { parent: this, dependsOn: upstreamOf(opts) });
    this.instance = new k8s.apiextensions.CustomResource(
      `${name}-instance`,
      fluxInstance(args.mirrors),
      { parent: this, dependsOn: [operator] },
    );
    const created: string[] = [];
    if (args.gitops) {
      const gitops = args.gitops;
      // Kustomizations orphan what they applied when deleted (below); protection makes their
      // removal a deliberate two-step change as well.
      const protect = args.deletionProtection ?? false;
      const afterInstance = { parent: this, dependsOn: [this.instance], protect };
      const repository = new k8s.apiextensions.CustomResource(`${name}-repository`, fleetRepository(gitops), afterInstance);
      const gateRepository = new k8s.apiextensions.CustomResource(`${name}-gate-repository`, platformGateRepository(gitops), afterInstance);
      const infrastructure = new k8s.apiextensions.CustomResource(
        `${name}-infrastructure`,
        infrastructureKustomization(gitops),
        { parent: this, dependsOn: [repository], protect },
      );
      const gate = new k8s.apiextensions.CustomResource(
        `${name}-gate`,
        platformGateKustomization(args.carenExtensionConfigName, args.carenExtensionConfigApiVersion),
        { parent: this, dependsOn: [gateRepository], protect },
      );
      new k8s.apiextensions.CustomResource(
        `${name}-tenants`,
        tenantsKustomization(gitops),
        { parent: this, dependsOn: [repository, infrastructure, gate], protect },
      );
      created.push("infrastructure", platformGateName, "tenants");
    }
    this.kustomizations = pulumi.output(created);
    this.registerOutputs({ kustomizations: this.kustomizations });
  }
}

/** The FluxInstance: distribution pinned by the catalog, awaited until Ready. */
export function fluxInstance(mirrors: Mirrors = {}): k8s.apiextensions.CustomResourceArgs {
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
export function fleetRepository(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
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
export function platformGateRepository(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
  return {
    apiVersion: sourceApiVersion,
    kind: "GitRepository",
    metadata: { name: platformGateName, namespace: fluxNamespace },
    spec: { ...repositorySpec(gitops), interval: "10m", ignore: "/*" },
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
export function infrastructureKustomization(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
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
export function platformGateKustomization(
  carenExtensionConfigName: pulumi.Input<string>,
  carenExtensionConfigApiVersion: string,
): k8s.apiextensions.CustomResourceArgs {
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
export function tenantsKustomization(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
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
