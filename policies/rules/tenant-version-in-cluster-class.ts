import { stackRule } from "../lib/define";
import { classOf, clustersIn } from "../lib/fleet-resources";

/** CAPI's Cluster webhook only accepts versions its ClusterClass lists. */
export const tenantVersionInClusterClass = stackRule({
  name: "tenant-version-in-cluster-class",
  description: "A tenant Cluster's Kubernetes version is listed in its ClusterClass spec.kubernetesVersions.",
  enforcementLevel: "mandatory",
  remediationSteps: "Pick a version the ClusterClass lists (catalog tenantKubernetesVersions), or add it to the catalog.",
  validate: (resources, _config, report) => {
    for (const { resource, cluster } of clustersIn(resources)) {
      const clusterClass = classOf(resources, cluster);
      const ref = `${cluster.classRef.namespace}/${cluster.classRef.name}`;
      if (!clusterClass) {
        report(`${cluster.description}: its ClusterClass ${ref} is not declared in this stack, so CAPI would refuse the Cluster; declare the class or fix spec.topology.classRef.`, resource.urn);
      } else if (clusterClass.kubernetesVersions.length === 0) {
        report(`${cluster.description}: ClusterClass ${ref} lists no spec.kubernetesVersions, so chained upgrades are off; publish the catalog's tenantKubernetesVersions on the class.`, resource.urn);
      } else if (!clusterClass.kubernetesVersions.includes(cluster.version)) {
        report(
          `${cluster.description}: spec.topology.version ${cluster.version} is not in ClusterClass ${ref} spec.kubernetesVersions (${clusterClass.kubernetesVersions.join(", ")}); ` +
            "set tenants[].kubernetesVersion to a listed version.",
          resource.urn,
        );
      }
    }
  },
});
