import * as command from "@pulumi/command";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { karpenterDeployment, karpenterManagementRbac, karpenterResourceSet, type KarpenterPool, type KarpenterTarget } from "../../infra/model/platform/karpenter";
import { localCommandDir } from "../local-command-dir";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** Arguments of {@link Karpenter}. */
export interface KarpenterArgs {
  /** The tenant Cluster it sizes: name, namespace, CAPI's kubeconfig Secret and the controller image. */
  target: KarpenterTarget;
  /** The tenant's Karpenter pools. */
  pools: readonly KarpenterPool[];
  /** Labels that select the tenant's Cluster (its ClusterResourceSet's selector). */
  clusterSelector: Readonly<Record<string, string>>;
  /** Kubeconfig of the management cluster, for the hand-over command. */
  managementKubeconfig: pulumi.Input<string>;
}

/**
 * EXPERIMENTAL. The Karpenter of one tenant (karpenter-provider-cluster-api), on the management
 * cluster in the tenant's namespace: its ServiceAccount with a ClusterRole on MachineDeployments and
 * Machines, the kubeconfig through which it reaches the management cluster, and its Deployment
 * (the workload cluster through CAPI's kubeconfig Secret); a ClusterResourceSet that puts the
 * pools' NodeClasses and NodePools into the workload cluster; and the command that hands each
 * pool's MachineDeployment to it (member label, zero replicas), once. The caller makes it depend
 * on the command that waits for the Cluster, so the MachineDeployments exist, and Pulumi deletes
 * it before the Cluster. The Deployment is not awaited: it cannot run before the provider's CRDs
 * are in the workload cluster (docs/tenants.md, Karpenter).
 */
export class Karpenter extends pulumi.ComponentResource {
  constructor(name: string, args: KarpenterArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.karpenter, name, { target: args.target }, opts);
    const target = args.target;
    const upstream = upstreamOf(opts);
    const child = (dependsOn: pulumi.Resource[] = []) => ({ parent: this, dependsOn: [...upstream, ...dependsOn] });
    const rbac = karpenterManagementRbac(target);
    const serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-service-account`, rbac.serviceAccount, child());
    const clusterRole = new k8s.rbac.v1.ClusterRole(
      `${name}-cluster-role`,
      { ...rbac.clusterRole, rules: rbac.clusterRole.rules.map((rule) => ({ apiGroups: [...rule.apiGroups], resources: [...rule.resources], verbs: [...rule.verbs] })) },
      child(),
    );
    const binding = new k8s.rbac.v1.ClusterRoleBinding(`${name}-cluster-role-binding`, rbac.clusterRoleBinding, child([clusterRole, serviceAccount]));
    const managementKubeconfig = new k8s.core.v1.ConfigMap(`${name}-management-kubeconfig`, rbac.managementKubeconfig, child());
    const deployment = karpenterDeployment(target);
    new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      { ...deployment, metadata: { ...deployment.metadata, annotations: { "pulumi.com/skipAwait": "true" } } },
      child([binding, managementKubeconfig]),
    );
    const resourceSet = karpenterResourceSet(target.name, target.namespace, args.clusterSelector, args.pools);
    const pools = new k8s.core.v1.ConfigMap(`${name}-nodepools`, resourceSet.configMap, child());
    new k8s.apiextensions.CustomResource(`${name}-resource-set`, resourceSet.clusterResourceSet, child([pools]));
    new command.local.Command(
      `${name}-hand-over`,
      {
        create: `node ${scriptEntryPoints.karpenterHandOver}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((kubeconfig) => ({
            MANAGEMENT_KUBECONFIG: kubeconfig,
            TENANT_NAMESPACE: target.namespace,
            TENANT_CLUSTER: target.name,
            POOLS: args.pools.map((pool) => pool.name).join(","),
          })),
        ),
        logging: command.local.Logging.Stderr,
      },
      child(),
    );
    this.registerOutputs({});
  }
}
