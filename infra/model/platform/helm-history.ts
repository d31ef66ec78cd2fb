/**
 * What is left of a Helm release whose install or upgrade was cut off (Ctrl-C, a CI timeout),
 * and which of its records must go so that the next `pulumi up` can run Helm again.
 *
 * Helm refuses both retries on its own (helm.sh/helm/v3@v3.18.6, the Helm in Kubernetes provider
 * 4.25.0): an install when any revision of the name exists ("cannot re-use a name that is still
 * in use", pkg/action/install.go `availableName`), an upgrade when the last revision is pending
 * (pkg/action/upgrade.go `prepareUpgrade`, `errPending`). The engine retries the step the
 * interrupted run left pending, so only these two cases reach Helm, and only from this program.
 */

/** One revision of a release as Helm's storage keeps it (pkg/release/status.go names the states). */
export interface HelmRevision {
  revision: number;
  status: string;
  /** Name of the chart the revision installed (its `chart.metadata.name`). */
  chart: string;
}

/** The step the engine is about to run on the release. */
export type ReleaseStep = "create" | "update";

/** Revisions to delete from Helm's storage, and why. */
export interface InterruptedRelease {
  revisions: number[];
  reason: string;
}

const pending = new Set(["pending-install", "pending-upgrade", "pending-rollback"]);

/**
 * The records of an interrupted run of this release, or undefined when there are none (or when
 * the history is not this program's to touch: another chart's, or one that once deployed).
 * - Before a create: every revision is of `chart` and none ever deployed (all `pending-install`
 *   or `failed`, which is what Helm leaves when its wait is cancelled). All of them go; the
 *   objects the cut-off install created keep Helm's ownership annotations, so the new install
 *   adopts them.
 * - Before an update: the last revision is pending and an earlier one exists. The pending one
 *   goes, so Helm upgrades from the last deployed revision again.
 */
export function interruptedRelease(history: readonly HelmRevision[], chart: string, step: ReleaseStep): InterruptedRelease | undefined {
  if (history.length === 0 || history.some((revision) => revision.chart !== chart)) {
    return undefined;
  }
  const sorted = [...history].sort((a, b) => a.revision - b.revision);
  if (step === "create") {
    if (!sorted.every((revision) => revision.status === "pending-install" || revision.status === "failed")) {
      return undefined;
    }
    return { revisions: sorted.map((revision) => revision.revision), reason: `an install that never completed (${sorted.map((revision) => `revision ${revision.revision}: ${revision.status}`).join(", ")})` };
  }
  const last = sorted.at(-1);
  if (!last || !pending.has(last.status) || sorted.length < 2) {
    return undefined;
  }
  return { revisions: [last.revision], reason: `an upgrade that never completed (revision ${last.revision}: ${last.status})` };
}
