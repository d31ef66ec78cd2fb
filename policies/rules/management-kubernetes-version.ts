import { describeConstraints, intersectRanges, managementKubernetesConstraints } from "../../infra/model/versions/compatibility";
import { describeRange, isMinorInRange, parseK3sVersion, parseKubernetesVersion } from "../../infra/model/versions/kubernetes-version";
import { resourceRule } from "../lib/define";
import { resourceTypes } from "../lib/fleet-resources";

/**
 * The management cluster runs a minor the pinned CAPI manages from (and that
 * everything else installed on it supports). Read from the ManagementCluster component's
 * inputs: the validated `management` settings, secrets stripped.
 */
export const managementKubernetesVersion = resourceRule({
  name: "management-kubernetes-version",
  description: "The management cluster's Kubernetes minor lies in the pinned Cluster API's management range (and what cert-manager, Flux and the hcloud CCM support).",
  enforcementLevel: "mandatory",
  remediationSteps: "Set management.k3sVersion (hetzner mode) or management.kubernetesVersion (existing mode) to a supported minor, or upgrade the existing cluster.",
  resourceTypes: [resourceTypes.managementCluster],
  validate: (props, _config, report) => {
    const settings = (props.settings ?? {}) as { mode?: unknown; k3sVersion?: unknown; kubernetesVersion?: unknown };
    const mode = settings.mode === "existing" ? "existing" : "hetzner";
    const key = mode === "hetzner" ? "k3sVersion" : "kubernetesVersion";
    const text = typeof settings[key] === "string" ? settings[key] : "";
    const version = mode === "hetzner" ? parseK3sVersion(text) : parseKubernetesVersion(text);
    const constraints = managementKubernetesConstraints(mode);
    const range = intersectRanges(constraints);
    if (!version) {
      report(`management.${key} ${JSON.stringify(text)} is not a ${mode === "hetzner" ? "k3s release (vX.Y.Z+k3sN)" : "Kubernetes version (vX.Y.Z)"}.`);
    } else if (!range || !isMinorInRange(version, range)) {
      report(
        `management.${key} ${text} is outside ${range ? describeRange(range) : "every range"}, what ${describeConstraints(constraints)} support together; ` +
          `run the management cluster on a minor in that range.`,
      );
    }
  },
});
