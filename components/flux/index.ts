import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { GitOpsSettings } from "../../infra/model/config/fleet-config";
import {
  fleetRepository,
  fluxInstance,
  fluxNamespace,
  fluxOperatorRelease,
  infrastructureKustomization,
  platformGateKustomization,
  platformGateRepository,
  tenantsKustomization,
} from "../../infra/model/platform/flux";
import type { Mirrors } from "../../infra/model/platform/mirrors";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

// What components/tenant-cluster and the tests take from here; the model defines them.

/** Arguments of {@link Flux}. */
export interface FluxArgs {
  /** The repository to sync; without it only the operator and the FluxInstance are installed. */
  gitops?: GitOpsSettings;
  /** Name of CAREN's ExtensionConfig, which the gate health-checks. */
  carenExtensionConfigName: string;
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
    super(componentTypes.flux, name, recorded, opts);
    const operator = pinnedRelease(
      `${name}-operator`,
      { ...fluxOperatorRelease(args.mirrors), namespace: fluxNamespace, recovery: args.releaseRecovery },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
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
      const kustomizations = {
        infrastructure: infrastructureKustomization(gitops),
        gate: platformGateKustomization(args.carenExtensionConfigName, args.carenExtensionConfigApiVersion),
        tenants: tenantsKustomization(gitops),
      };
      const infrastructure = new k8s.apiextensions.CustomResource(`${name}-infrastructure`, kustomizations.infrastructure, { parent: this, dependsOn: [repository], protect });
      const gate = new k8s.apiextensions.CustomResource(`${name}-gate`, kustomizations.gate, { parent: this, dependsOn: [gateRepository], protect });
      new k8s.apiextensions.CustomResource(`${name}-tenants`, kustomizations.tenants, { parent: this, dependsOn: [repository, infrastructure, gate], protect });
      created.push(...Object.values(kustomizations).map((kustomization) => kustomization.metadata.name));
    }
    this.kustomizations = pulumi.output(created);
    this.registerOutputs({ kustomizations: this.kustomizations });
  }
}
