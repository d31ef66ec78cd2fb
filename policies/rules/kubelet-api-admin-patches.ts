import { catalog } from "../../infra/model/versions/catalog";
import { clusterApiCreatesKubeletApiAdmin, needsKubeletApiAdmin } from "../../infra/model/versions/compatibility";
import { parseKubernetesVersion } from "../../infra/model/versions/kubernetes-version";
import { stackRule } from "../lib/define";
import { clustersIn, clusterClassView, installedVersions, isImported, ofType, resourceTypes } from "../lib/fleet-resources";

const minimums = Object.entries(catalog.kubeletApiAdminRule.minimumClusterApi).map(([line, version]) => `${version} (${line} line)`).join(", ");
const lastPatches = Object.entries(catalog.kubeletApiAdminRule.lastPatchWithout).map(([minor, patch]) => `${minor}.${patch}`).join(" / ");

/**
 * Kubernetes patches above 1.33.11 / 1.34.7 / 1.35.4 / 1.36.0 need the ClusterRole
 * `system:kubelet-api-admin`, which only recent CAPI releases create (CAPH compatibility notes).
 */
export const kubeletApiAdminPatches = stackRule({
  name: "kubelet-api-admin-patches",
  description: `Kubernetes patches above ${lastPatches} (on tenants or in a ClusterClass list) need Cluster API ≥ ${minimums}.`,
  enforcementLevel: "mandatory",
  remediationSteps: "Upgrade Cluster API in the catalog first, or stay on an older patch.",
  validate: (resources, _config, report) => {
    const clusterApi = installedVersions(resources).clusterApi;
    if (clusterApi === undefined || clusterApiCreatesKubeletApiAdmin(clusterApi)) return;
    const needing = (version: string) => {
      const parsed = parseKubernetesVersion(version);
      return parsed !== undefined && needsKubeletApiAdmin(parsed);
    };
    for (const { resource, cluster } of clustersIn(resources)) {
      if (needing(cluster.version)) {
        report(`${cluster.description}: Kubernetes ${cluster.version} needs the ClusterRole system:kubelet-api-admin, which Cluster API ${clusterApi} does not create; needs ≥ ${minimums}.`, resource.urn);
      }
    }
    // A shard stack's imported ClusterClass is judged by the management stack that declares it.
    for (const resource of ofType(resources, resourceTypes.clusterClass).filter((candidate) => !isImported(candidate))) {
      const clusterClass = clusterClassView(resource.props);
      const listed = clusterClass.kubernetesVersions.filter(needing);
      if (listed.length > 0) {
        report(`ClusterClass ${clusterClass.namespace}/${clusterClass.name}: spec.kubernetesVersions ${listed.join(", ")} need Cluster API ≥ ${minimums}, found ${clusterApi}.`, resource.urn);
      }
    }
  },
});
