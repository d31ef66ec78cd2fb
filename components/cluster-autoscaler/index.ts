import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/versions/catalog";
import { clusterAutoscalerRbac, clusterAutoscalerValues, type ClusterAutoscalerTarget } from "../../infra/model/platform/cluster-autoscaler";
import { mirroredChart, type Mirrors } from "../../infra/model/platform/mirrors";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** Arguments of {@link ClusterAutoscaler}. */
export interface ClusterAutoscalerArgs {
  /** The tenant Cluster it sizes: name, namespace, Kubernetes version and CAPI's kubeconfig Secret. */
  target: ClusterAutoscalerTarget;
  /** Where the chart comes from instead of its public repository (`mirrors`). */
  mirrors?: Mirrors;
  /** How its Helm release is cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * The cluster autoscaler of one tenant, on the management cluster in the tenant's namespace: its
 * ServiceAccount, a Role limited to that namespace with its RoleBinding (clusterAutoscalerRbac),
 * and the upstream chart (catalog.clusterAutoscaler) in clusterapi `kubeconfig-incluster` mode
 * with the chart's own RBAC turned off. The caller makes it depend on the command that waits for
 * the Cluster's kubeconfig Secret (the pod mounts it), so Pulumi also deletes it before the Cluster.
 */
export class ClusterAutoscaler extends pulumi.ComponentResource {
  /** The Helm release. */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: ClusterAutoscalerArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.clusterAutoscaler, name, { target: args.target }, opts);
    const rbac = clusterAutoscalerRbac(args.target.namespace);
    // Pulumi does not pass the component's dependsOn (the kubeconfig Secret) to children.
    const upstream = upstreamOf(opts);
    const serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-service-account`, rbac.serviceAccount, { parent: this, dependsOn: upstream });
    const role = new k8s.rbac.v1.Role(
      `${name}-role`,
      { ...rbac.role, rules: rbac.role.rules.map((rule) => ({ apiGroups: [...rule.apiGroups], resources: [...rule.resources], verbs: [...rule.verbs] })) },
      { parent: this, dependsOn: upstream },
    );
    const binding = new k8s.rbac.v1.RoleBinding(`${name}-role-binding`, rbac.roleBinding, { parent: this, dependsOn: [...upstream, role, serviceAccount] });
    this.release = pinnedRelease(
      `${name}-release`,
      { pin: mirroredChart(catalog.clusterAutoscaler.chart, args.mirrors), namespace: args.target.namespace, values: clusterAutoscalerValues(args.target, args.mirrors), recovery: args.releaseRecovery },
      { parent: this, dependsOn: [...upstream, binding] },
    );
    this.registerOutputs({});
  }
}
