import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { HelmChartPin } from "../infra/model/versions/catalog";

/** Where and how one pinned chart is installed. */
export interface PinnedReleaseArgs {
  /** Chart, repository and version, always from the catalog. */
  pin: HelmChartPin;
  /** Namespace of the release; created when missing. */
  namespace: string;
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
 */
export function pinnedRelease(name: string, args: PinnedReleaseArgs, opts: pulumi.CustomResourceOptions): k8s.helm.v3.Release {
  const { pin } = args;
  const oci = pin.repository.startsWith("oci://");
  return new k8s.helm.v3.Release(
    name,
    {
      name: pin.chart,
      chart: oci ? `${pin.repository}/${pin.chart}` : pin.chart,
      version: pin.version,
      ...(oci ? {} : { repositoryOpts: { repo: pin.repository } }),
      namespace: args.namespace,
      createNamespace: true,
      values: args.values ?? {},
      skipAwait: false,
      timeout: args.timeoutSeconds ?? 600,
      cleanupOnFail: true,
      maxHistory: 10,
    },
    opts,
  );
}
