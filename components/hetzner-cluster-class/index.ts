import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CarenExtensionNames } from "../../infra/model/platform/caren-extensions";
import type { Manifest } from "../../infra/model/platform/cluster-api-kinds";
import { awaitedClusterClass, clusterClassName, clusterClassNamespace, hetznerClusterClassManifests } from "../../infra/model/platform/hetzner-cluster-class";
import type { DeclaredResource } from "../../infra/model/contract/policy-facts";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** Arguments of {@link HetznerClusterClass}. */
export interface HetznerClusterClassArgs {
  /** CAREN's handler names for the installed release (`Caren.extensionNames`). */
  carenExtensionNames: CarenExtensionNames;
  /** ClusterClass `spec.kubernetesVersions`; defaults to the catalog's tenant versions. */
  kubernetesVersions?: readonly string[];
  /** How long Pulumi waits for CAPI to accept the class's variables. Default 300. */
  readyTimeoutSeconds?: number;
}

/**
 * The fleet's ClusterClass for Hetzner Cloud (`infra/model/platform/hetzner-cluster-class.ts`) and
 * its templates, in their own namespace. Depend on CAREN's readiness: the class calls its
 * patch handlers. Ready means CAPI has reconciled the variables (`VariablesReady`).
 */
export class HetznerClusterClass extends pulumi.ComponentResource {
  /** The ClusterClass; tenant Clusters depend on it so they are deleted before it. */
  public readonly clusterClass: k8s.apiextensions.CustomResource;
  /** `topology.classRef` for Clusters of this class. */
  public readonly classRef: { name: string; namespace: string };
  /** What it declared for the policy pack (its `declared` output). */
  public readonly declared: pulumi.Output<DeclaredResource[]>;

  constructor(name: string, args: HetznerClusterClassArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.hetznerClusterClass, name, {}, opts);
    const manifests = hetznerClusterClassManifests({
      carenExtensionNames: args.carenExtensionNames,
      ...(args.kubernetesVersions ? { kubernetesVersions: args.kubernetesVersions } : {}),
    });
    const namespace = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      { metadata: { name: clusterClassNamespace } },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
    // Template names carry a content hash, so a changed template is created under its new
    // name before the old one goes (CAPI and CAPH refuse in-place template changes).
    const templates = Object.entries<Manifest>(manifests.templates).map(
      ([role, manifest]) => new k8s.apiextensions.CustomResource(`${name}-${role}`, manifest, { parent: this, dependsOn: [namespace] }),
    );
    const clusterClassInputs = awaitedClusterClass(manifests.clusterClass, args.readyTimeoutSeconds);
    this.clusterClass = new k8s.apiextensions.CustomResource(name, clusterClassInputs, { parent: this, dependsOn: templates });
    this.classRef = { name: clusterClassName, namespace: clusterClassNamespace };
    const facts = new DeclaredFacts();
    facts.add(this.clusterClass, clusterClassInputs);
    this.declared = facts.all();
    this.registerOutputs(facts.outputs());
  }
}
