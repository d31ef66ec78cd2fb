import semver from "semver";
import { catalog, type MinorRange } from "./catalog";
import { compareMinors, describeRange, minorOf, type KubernetesVersion } from "./kubernetes-version";

/** A Kubernetes range one pinned component supports, named for messages. */
export interface KubernetesConstraint {
  /** e.g. "Cluster API v1.12.10". */
  readonly component: string;
  readonly range: MinorRange;
}

/**
 * What limits the management cluster's Kubernetes minor: everything the platform installs
 * on it. The hcloud CCM only runs there in `hetzner` mode.
 */
export function managementKubernetesConstraints(mode: "hetzner" | "existing"): KubernetesConstraint[] {
  return [
    { component: `Cluster API ${catalog.clusterApi.version}`, range: catalog.clusterApi.managementKubernetes },
    { component: `cert-manager ${catalog.certManager.chart.version}`, range: catalog.certManager.kubernetes },
    { component: `Flux ${catalog.flux.distribution}`, range: catalog.flux.kubernetes },
    ...(mode === "hetzner"
      ? [{ component: `hcloud-cloud-controller-manager ${catalog.hcloudCloudControllerManager.chart.version}`, range: catalog.hcloudCloudControllerManager.kubernetes }]
      : []),
  ];
}

/** The minors every constraint allows, or undefined when they do not overlap. */
export function intersectRanges(constraints: readonly KubernetesConstraint[]): MinorRange | undefined {
  if (constraints.length === 0) {
    return undefined;
  }
  // Stryker disable next-line EqualityOperator: equivalent, on a tie either bound names the same minor
  const min = constraints.map((c) => c.range.min).reduce((a, b) => (compareMinors(a, b) >= 0 ? a : b));
  // Stryker disable next-line EqualityOperator: equivalent, on a tie either bound names the same minor
  const max = constraints.map((c) => c.range.max).reduce((a, b) => (compareMinors(a, b) <= 0 ? a : b));
  return compareMinors(min, max) <= 0 ? { min, max } : undefined;
}

/** "Cluster API v1.12.10 1.31–1.36, cert-manager v1.21.2 1.33–1.36" for messages. */
export function describeConstraints(constraints: readonly KubernetesConstraint[]): string {
  return constraints.map((c) => `${c.component} ${describeRange(c.range)}`).join(", ");
}

/**
 * True when a Kubernetes patch is new enough to need the ClusterRole
 * `system:kubelet-api-admin`, which only recent CAPI releases create.
 */
export function needsKubeletApiAdmin(version: KubernetesVersion): boolean {
  const lastPatchWithout = catalog.kubeletApiAdminRule.lastPatchWithout[minorOf(version)];
  return lastPatchWithout !== undefined && version.patch > lastPatchWithout;
}

/**
 * True when a CAPI release creates `system:kubelet-api-admin`: at least the listed patch of
 * its line; lines newer than the table always do, older ones never.
 */
export function clusterApiCreatesKubeletApiAdmin(
  clusterApiVersion: string,
  table: Readonly<Record<string, string>> = catalog.kubeletApiAdminRule.minimumClusterApi,
): boolean {
  const parsed = semver.coerce(clusterApiVersion);
  if (!parsed) {
    return false;
  }
  const minimum = table[`${parsed.major}.${parsed.minor}`];
  if (minimum !== undefined) {
    return semver.gte(parsed, minimum);
  }
  // Stryker disable next-line StringLiteral: equivalent, compareMinors reads "" as 0.0 too (an empty table: every line is newer)
  const newestLine = Object.keys(table).sort(compareMinors).at(-1) ?? "0.0";
  // Stryker disable next-line EqualityOperator: equivalent, a line equal to the newest is in the table and returned above
  return compareMinors(`${parsed.major}.${parsed.minor}`, newestLine) > 0;
}

/** The GeneratePatches generation of a CAREN release tag (6 for v0.45–v0.50); throws for unchecked releases. */
export function carenPatchGeneration(carenVersion: string): number {
  const version = semver.valid(carenVersion);
  if (!version || !carenVersion.startsWith("v")) {
    throw new Error(`CAREN version ${JSON.stringify(carenVersion)} is not a release tag such as ${catalog.caren.chart.version}`);
  }
  const row = catalog.caren.patchGenerations.find((entry) => semver.satisfies(version, entry.releases));
  if (!row) {
    throw new Error(
      `CAREN ${carenVersion} has no entry in the extension-name table (known: ${catalog.caren.patchGenerations.map((entry) => entry.releases).join("; ")}). ` +
        "Check which configpatch generation it registers in pkg/handlers/generic/mutation/metapatch_handler.go and add a row to catalog.caren.patchGenerations.",
    );
  }
  return row.current;
}
