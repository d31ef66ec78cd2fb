/**
 * The facts the policy pack's stack rules read, published by the fleet's components as their
 * outputs.
 *
 * Why outputs of components: the engine hands stack policies each resource's *outputs*
 * (pulumi/pkg/v3@v3.248.0: resource/deploy/step_generator.go, AnalyzeResources,
 * `Properties: v.Outputs`), while resource policies get inputs. On a fresh stack every
 * Kubernetes object sits behind the management cluster's provider, whose kubeconfig is unknown
 * at preview, so those objects reach stack rules with no properties at all; after `up` they
 * carry the live object instead. A component's outputs are what the program passed to
 * `registerOutputs`: plain values computed from the config, the same at preview of a fresh
 * stack, at preview of an update and at `up`. Read resources (the program's StackReference to
 * its own stack) are not in `news` there and never reach stack rules, so the deployed state
 * is published by a component too.
 */

/** The output of a fleet component that lists what it declared for its children. */
export const declaredOutputName = "declared";

/** One child resource as the component declared it: its URN and the inputs the rules read. */
export interface DeclaredResource {
  readonly urn: string;
  readonly props: Readonly<Record<string, unknown>>;
}

/** The component that publishes what each tenant runs, as read from the stack's last outputs. */
export const deployedStateType = "capi-fleet:fleet:DeployedState";

/** Its output: tenant name → the Kubernetes version its Cluster runs (absent for new tenants). */
export const deployedVersionsOutputName = "tenantVersions";

/** Its output: the k3s release the management servers' Plan was set to by the last update (absent before the first, and in `existing` mode). */
export const deployedManagementK3sVersionOutputName = "managementK3sVersion";

/** The component that upgrades the management servers' k3s (`hetzner` mode); its output {@link k3sTargetOutputName} is the target release. */
export const k3sUpgradesType = "capi-fleet:management:K3sUpgrades";

/** Its output: the k3s release the servers' Plan asks for (`management.k3sVersion`). */
export const k3sTargetOutputName = "k3sVersion";

/** Type tokens of the fleet's own components start with this (the project's package name). */
export const fleetComponentPrefix = "capi-fleet:";
