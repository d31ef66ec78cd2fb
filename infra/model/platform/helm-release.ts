import { gunzipSync } from "node:zlib";
import type { HelmChartPin } from "../versions/catalog";
import type { HelmRevision } from "./helm-history";

/**
 * What the Helm release helper (components/helm-release) builds as plain data: the arguments of a
 * catalog-pinned release, and the revisions it reads back from Helm's storage after an
 * interrupted `up` (which of them go: helm-history.ts).
 */

/** How long Helm waits for a release's workloads by default, in seconds. */
export const defaultReleaseTimeoutSeconds = 600;

/**
 * The arguments of a `helm.v3.Release` of a pinned chart, values aside (they may be a Pulumi
 * input). The release is named after the chart, as `helm install <chart>` would name it; an
 * OCI chart is addressed by its full reference, any other through its repository. Helm waits
 * for the workloads (`skipAwait: false`), cleans up a failed install and keeps ten revisions.
 */
export function pinnedReleaseArgs(pin: HelmChartPin, namespace: string, timeoutSeconds: number = defaultReleaseTimeoutSeconds) {
  const oci = pin.repository.startsWith("oci://");
  return {
    name: pin.chart,
    chart: oci ? `${pin.repository}/${pin.chart}` : pin.chart,
    version: pin.version,
    ...(oci ? {} : { repositoryOpts: { repo: pin.repository } }),
    namespace,
    createNamespace: true,
    skipAwait: false,
    timeout: timeoutSeconds,
    cleanupOnFail: true,
    maxHistory: 10,
  };
}

/** A Secret in which Helm stores one revision of a release, as the API returns it. */
export interface HelmStorageSecret {
  metadata: { name: string; labels?: Record<string, string> };
  data?: { release?: string };
}

/**
 * One revision from the Secret Helm stores it in (helm.sh/helm/v3@v3.18.6: pkg/storage/driver/
 * secrets.go; the `release` key holds base64 of gzipped JSON, pkg/storage/driver/util.go
 * `decodeRelease`, which also reads it uncompressed). The Secret's labels stand in for what the
 * record lacks.
 */
export function revisionOf(secret: HelmStorageSecret): HelmRevision & { secret: string } {
  const encoded = Buffer.from(secret.data?.release ?? "", "base64").toString("utf8");
  const bytes = Buffer.from(encoded, "base64");
  const json = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
  const release = JSON.parse(json.toString("utf8")) as { version?: number; info?: { status?: string }; chart?: { metadata?: { name?: string } } };
  return {
    secret: secret.metadata.name,
    revision: release.version ?? Number(secret.metadata.labels?.version ?? 0),
    status: release.info?.status ?? secret.metadata.labels?.status ?? "unknown",
    chart: release.chart?.metadata?.name ?? "",
  };
}
