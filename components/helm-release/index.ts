import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ReleaseStep } from "../../infra/model/platform/helm-history";
import { pinnedReleaseArgs } from "../../infra/model/platform/helm-release";
import type { HelmChartPin } from "../../infra/model/versions/catalog";
import { clearInterruptedRelease } from "./interrupted-release";


/**
 * What the resource hooks that clear an interrupted `up`'s Helm records need. Give it only when
 * the engine runs resource hooks (resourceHooksAvailable).
 */
export interface ReleaseRecovery {
  /** Admin kubeconfig of the cluster the release goes to (secret; held in memory, never logged). */
  kubeconfig: pulumi.Input<string>;
}

/** Where and how one pinned chart is installed. */
export interface PinnedReleaseArgs {
  /** Chart, repository and version, always from the catalog. */
  pin: HelmChartPin;
  /** Namespace of the release; created when missing. */
  namespace: string;
  /** How to clear what an interrupted `up` left of the release; without it, nothing is. */
  recovery?: ReleaseRecovery;
  /** Chart values. */
  values?: pulumi.Input<Record<string, unknown>>;
  /** How long Helm may wait for the release's workloads to become ready. */
  timeoutSeconds?: number;
}

/**
 * Installs a catalog-pinned chart as a Helm release (`helm.v3.Release`). Releases, not
 * `helm.v4.Chart`, because these charts rely on hooks (cert-manager's startup check,
 * CAPIO's and CAREN's certificates) that Chart v4 drops, and because Helm's own wait gives
 * "every workload of the chart is ready" before dependents start. The release is named
 * after the chart, so it matches what `helm install <chart>` would create.
 *
 * An `up` cut off during Helm's install or upgrade leaves a pending or failed revision that makes
 * Helm refuse the retry; with `recovery`, a resource hook clears it before each create and update
 * (clearInterruptedRelease). Hooks run in `up` only, never in a preview.
 */
export function pinnedRelease(name: string, args: PinnedReleaseArgs, opts: pulumi.CustomResourceOptions): k8s.helm.v3.Release {
  const { pin } = args;
  const hooks = args.recovery ? recoveryHooks(args.recovery, args.namespace, pin.chart) : undefined;
  return new k8s.helm.v3.Release(
    name,
    { ...pinnedReleaseArgs(pin, args.namespace, args.timeoutSeconds), values: args.values ?? {} },
    hooks ? { ...opts, hooks } : opts,
  );
}

function recoveryHooks(recovery: ReleaseRecovery, namespace: string, release: string): pulumi.ResourceHookBinding {
  // Resolved before the engine creates or updates the release: its provider needs it first.
  const kubeconfig = new Promise<string>((resolve) => pulumi.output(recovery.kubeconfig).apply(resolve));
  const clear = (step: ReleaseStep) => async () => clearInterruptedRelease({ kubeconfig: await kubeconfig, namespace, release, chart: release }, step);
  return { beforeCreate: [clear("create")], beforeUpdate: [clear("update")] };
}
