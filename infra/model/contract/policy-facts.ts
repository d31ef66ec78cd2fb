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

/** One child resource as the component declared it: its URN and the inputs the rules read. */
export interface DeclaredResource {
  readonly urn: string;
  readonly props: Readonly<Record<string, unknown>>;
}

