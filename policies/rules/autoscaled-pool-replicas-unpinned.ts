import { autoscalerAnnotations, pinnedAutoscaledPoolProblem, type MachineDeploymentTopologyView } from "../../infra/model/platform/cluster-autoscaler";
import { karpenterCpuLimitAnnotation } from "../../infra/model/platform/karpenter";
import { stackRule } from "../lib/define";
import { clustersIn, record } from "../lib/fleet-resources";

/**
 * An autoscaled pool (the cluster autoscaler's or Karpenter's) must not pin replicas: CAPI's
 * topology controller sets a MachineDeployment's replicas from the topology whenever the topology
 * has them, undoing every scale the autoscaler makes. The config validation refuses both together; this catches a Cluster that bypassed it.
 * A stack rule over what the TenantCluster declared (infra/model/contract/policy-facts.ts).
 */
export const autoscaledPoolReplicasUnpinned = stackRule({
  name: "autoscaled-pool-replicas-unpinned",
  description: `A MachineDeployment topology with the autoscaler's ${autoscalerAnnotations.minSize}/${autoscalerAnnotations.maxSize} annotations, or Karpenter's ${karpenterCpuLimitAnnotation}, sets no replicas.`,
  enforcementLevel: "mandatory",
  remediationSteps: "Give the pool either replicas or autoscaling (tenants[].workers[]), not both; with autoscaling (the cluster autoscaler or Karpenter) the program writes the annotations and leaves replicas out.",
  validate: (resources, _config, report) => {
    for (const { resource, cluster } of clustersIn(resources)) {
      const workers = record(record(record(resource.props.spec).topology).workers);
      const deployments = Array.isArray(workers.machineDeployments) ? (workers.machineDeployments as MachineDeploymentTopologyView[]) : [];
      for (const md of deployments) {
        const problem = pinnedAutoscaledPoolProblem(md);
        if (problem) {
          report(`${cluster.description}: ${problem}; CAPI's topology controller would reset every scale the autoscaler makes. Remove replicas from the pool.`, resource.urn);
        }
      }
    }
  },
});
