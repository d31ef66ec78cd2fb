import { carenExtensionNames } from "../../infra/model/platform/caren-extensions";
import { stackRule } from "../lib/define";
import { clustersIn, dependsOnTransitively, ofType, resourceTypes } from "../lib/fleet-resources";

/**
 * CAREN's webhooks and hooks must answer before a topology Cluster is created
 * (failurePolicy Fail; missed BeforeClusterCreate means no CNI and no LB GC). The program's
 * readiness gate is the ExtensionConfig patch awaited until CAPI discovered the handlers.
 */
export const clusterWaitsForCaren = stackRule({
  name: "cluster-waits-for-caren",
  description: "Every tenant Cluster depends (directly or transitively) on CAREN's readiness gate: its ExtensionConfig awaited until Discovered.",
  enforcementLevel: "mandatory",
  remediationSteps: "Pass Caren.ready to the TenantCluster (carenReady) so the Cluster waits for it.",
  validate: (resources, _config, report) => {
    // Only CAREN's own ExtensionConfig counts: another extension's readiness says nothing about CAREN.
    const carenExtensionConfig = carenExtensionNames().extensionConfig;
    const gates = ofType(resources, resourceTypes.extensionConfigPatch).filter(
      (gate) => (gate.props.metadata as { name?: unknown } | undefined)?.name === carenExtensionConfig,
    );
    for (const { resource, cluster } of clustersIn(resources)) {
      if (!gates.some((gate) => dependsOnTransitively(resource, gate))) {
        report(
          gates.length === 0
            ? `${cluster.description}: the stack has no CAREN readiness gate (${resourceTypes.extensionConfigPatch} ${carenExtensionConfig}); install CAREN through the Caren component.`
            : `${cluster.description} does not wait for CAREN's readiness gate, so it could be created before CAREN's hooks answer; pass Caren.ready as carenReady.`,
          resource.urn,
        );
      }
    }
  },
});
