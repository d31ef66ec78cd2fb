import { k3sUpgradeProblem } from "../../infra/model/management/k3s-upgrades";
import { stackRule } from "../lib/define";
import { deployedManagementK3sVersion, k3sUpgradeTargets } from "../lib/fleet-resources";

/**
 * The management servers' k3s moves from what runs (the stack's last `managementK3sVersion`
 * output, published by the DeployedState component) one minor at a time and never down: the
 * system-upgrade-controller applies whatever the Plan says (docs.k3s.io/upgrades/manual). The
 * target's own range is management-kubernetes-version's.
 */
export const managementK3sUpgradePath = stackRule({
  name: "management-k3s-upgrade-path",
  description:
    "The management servers' k3s Plan never downgrades the deployed release and never skips a minor (the system-upgrade-controller does not check either).",
  enforcementLevel: "mandatory",
  remediationSteps: "Set management.k3sVersion to the deployed release or to a release of the next minor; repeat one minor per update (docs/operations.md, Upgrade the management cluster).",
  validate: (resources, _config, report) => {
    const deployed = deployedManagementK3sVersion(resources);
    for (const { resource, version } of k3sUpgradeTargets(resources)) {
      const problem = k3sUpgradeProblem(deployed, version);
      if (problem) report(`management.k3sVersion: ${problem}.`, resource.urn);
    }
  },
});
