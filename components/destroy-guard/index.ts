import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { localCommandDir } from "../local-command-dir";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** Arguments of {@link DestroyGuard}. */
export interface DestroyGuardArgs {
  /** Admin kubeconfig of the management cluster (a Pulumi secret). */
  managementKubeconfig: pulumi.Input<string>;
  /** The fleet's ClusterClass. */
  classRef: { name: string; namespace: string };
  /** The Clusters this stack declares, as "namespace/name". */
  declaredClusters: readonly string[];
}

/**
 * Stops `pulumi destroy` of a management stack before it deletes anything while Clusters that the
 * stack does not declare use the fleet's ClusterClass (gitops-created tenants, shard stacks'
 * tenants): a delete-only command that depends on everything else in the cluster, so the engine
 * runs it first (components/destroy-guard/foreign-clusters.mjs says why). Pass every platform
 * component, the class and the tenants in `opts.dependsOn`.
 */
export class DestroyGuard extends pulumi.ComponentResource {
  /** The delete-only command. */
  public readonly command: command.local.Command;

  constructor(name: string, args: DestroyGuardArgs, opts?: pulumi.ComponentResourceOptions) {
    // The kubeconfig never goes in as a recorded input.
    super(componentTypes.destroyGuard, name, { classRef: args.classRef, declaredClusters: args.declaredClusters }, opts);
    this.command = new command.local.Command(
      `${name}-foreign-clusters`,
      {
        delete: `node ${scriptEntryPoints.destroyGuard}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((managementKubeconfig) => ({
            MANAGEMENT_KUBECONFIG: managementKubeconfig,
            CLASS_NAMESPACE: args.classRef.namespace,
            CLASS_NAME: args.classRef.name,
            DECLARED_CLUSTERS: JSON.stringify([...args.declaredClusters].sort()),
          })),
        ),
        logging: command.local.Logging.Stderr,
      },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
    this.registerOutputs({});
  }
}
