import { resourceRule } from "../lib/define";
import { resourceTypes } from "../lib/fleet-resources";

/** A prod management server or API load balancer must not be deletable by one mistaken call. */
export const managementDeletionProtection = resourceRule({
  name: "management-deletion-protection",
  description: "Management servers and the API load balancer have Hetzner deletion protection on (prod; disabled in policies/config/dev.json).",
  enforcementLevel: "mandatory",
  remediationSteps: "Set management.deletionProtection: true in the stack config.",
  resourceTypes: [resourceTypes.hcloudServer, resourceTypes.hcloudLoadBalancer],
  validate: (props, _config, report, type) => {
    if (props.deleteProtection !== true) {
      const kind = type === resourceTypes.hcloudServer ? "server" : "API load balancer";
      report(`Management ${kind} ${JSON.stringify(props.name ?? "")} has no deletion protection (deleteProtection is ${String(props.deleteProtection)}); set management.deletionProtection: true.`);
    }
  },
});
