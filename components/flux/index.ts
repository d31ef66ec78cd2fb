import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/catalog";
import { apiVersions } from "../../infra/model/cluster-api-kinds";
import { clusterApiProviders } from "../../infra/model/cluster-api-providers";
import type { GitOpsSettings } from "../../infra/model/fleet-config";
import { platformNamespaces } from "../../infra/model/platform-namespaces";
import { pinnedRelease } from "../helm-release";
import { upstreamOf } from "../upstream";

/** Namespace of the operator and of the one FluxInstance. */
export const fluxNamespace = platformNamespaces.flux;
/** The operator reconciles exactly one FluxInstance per cluster, and it must be named `flux`. */
export const fluxInstanceName = "flux";
/** Controllers the fleet uses: sources, Kustomizations, HelmReleases, alerts. */
export const fluxComponents = ["source-controller", "kustomize-controller", "helm-controller", "notification-controller"] as const;
/** Name of the GitRepository both Kustomizations read. */
export const fleetRepositoryName = "fleet";

const sourceApiVersion = "source.toolkit.fluxcd.io/v1";
const kustomizeApiVersion = apiVersions.fluxKustomization;

/** Arguments of {@link Flux}. */
export interface FluxArgs {
  /** The repository to sync; without it only the operator and the FluxInstance are installed. */
  gitops?: GitOpsSettings;
  /** Name of CAREN's ExtensionConfig, which the `tenants` Kustomization health-checks. */
  carenExtensionConfigName: pulumi.Input<string>;
  /** API version of that ExtensionConfig. */
  carenExtensionConfigApiVersion: string;
}

/**
 * Flux on the management cluster: the Flux Operator chart and a FluxInstance pinned to the
 * catalog's distribution (no `flux bootstrap`: nothing pushes to Git). With GitOps
 * configured it adds the fleet repository and two Kustomizations: `infrastructure`, then
 * `tenants`, which waits for it and health-checks Cluster API and CAREN.
 */
export class Flux extends pulumi.ComponentResource {
  /** The FluxInstance, awaited until Ready; Flux's own CRDs exist once it is. */
  public readonly instance: k8s.apiextensions.CustomResource;
  /** Kustomization names in reconcile order (empty without GitOps). */
  public readonly kustomizations: pulumi.Output<string[]>;

  constructor(name: string, args: FluxArgs, opts?: pulumi.ComponentResourceOptions) {
    super("capi-fleet:platform:Flux", name, args, opts);
    const operator = pinnedRelease(`${name}-operator`, { pin: catalog.flux.operatorChart, namespace: fluxNamespace }, { parent: this, dependsOn: upstreamOf(opts) });
    this.instance = new k8s.apiextensions.CustomResource(
      `${name}-instance`,
      fluxInstance(),
      { parent: this, dependsOn: [operator] },
    );
    const created: string[] = [];
    if (args.gitops) {
      const gitops = args.gitops;
      const afterInstance = { parent: this, dependsOn: [this.instance] };
      const repository = new k8s.apiextensions.CustomResource(`${name}-repository`, fleetRepository(gitops), afterInstance);
      const infrastructure = new k8s.apiextensions.CustomResource(
        `${name}-infrastructure`,
        infrastructureKustomization(gitops),
        { parent: this, dependsOn: [repository] },
      );
      new k8s.apiextensions.CustomResource(
        `${name}-tenants`,
        tenantsKustomization(gitops, args.carenExtensionConfigName, args.carenExtensionConfigApiVersion),
        { parent: this, dependsOn: [repository, infrastructure] },
      );
      created.push("infrastructure", "tenants");
    }
    this.kustomizations = pulumi.output(created);
    this.registerOutputs({ kustomizations: this.kustomizations });
  }
}

/** The FluxInstance: distribution pinned by the catalog, awaited until Ready. */
export function fluxInstance(): k8s.apiextensions.CustomResourceArgs {
  return {
    apiVersion: "fluxcd.controlplane.io/v1",
    kind: "FluxInstance",
    metadata: {
      name: fluxInstanceName,
      namespace: fluxNamespace,
      annotations: { "pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "600" },
    },
    spec: {
      distribution: { version: catalog.flux.distribution, registry: "ghcr.io/fluxcd" },
      components: [...fluxComponents],
      cluster: { type: "kubernetes", multitenant: false, networkPolicy: true, domain: "cluster.local" },
    },
  };
}

/** The fleet repository; `secretRef` names the credentials of a private one. */
export function fleetRepository(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
  return {
    apiVersion: sourceApiVersion,
    kind: "GitRepository",
    metadata: { name: fleetRepositoryName, namespace: fluxNamespace },
    spec: {
      interval: "1m",
      url: gitops.url,
      ref: { branch: gitops.branch },
      ...(gitops.secretRef ? { secretRef: { name: gitops.secretRef } } : {}),
    },
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

/** Platform add-ons; Ready only when everything it applied is healthy (`wait`). */
export function infrastructureKustomization(gitops: GitOpsSettings): k8s.apiextensions.CustomResourceArgs {
  return {
    apiVersion: kustomizeApiVersion,
    kind: "Kustomization",
    metadata: { name: "infrastructure", namespace: fluxNamespace },
    spec: { ...kustomizationSpec(gitops.paths.infrastructure), wait: true },
  };
}

/**
 * Tenant workloads: reconciled only after `infrastructure` is Ready, and healthy only while
 * every Cluster API controller runs and CAPI has discovered CAREN's handlers. `wait` stays
 * off because Flux ignores `healthChecks` when it is on.
 */
export function tenantsKustomization(
  gitops: GitOpsSettings,
  carenExtensionConfigName: pulumi.Input<string>,
  carenExtensionConfigApiVersion: string,
): k8s.apiextensions.CustomResourceArgs {
  return {
    apiVersion: kustomizeApiVersion,
    kind: "Kustomization",
    metadata: { name: "tenants", namespace: fluxNamespace },
    spec: {
      ...kustomizationSpec(gitops.paths.tenants),
      dependsOn: [{ name: "infrastructure" }],
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
