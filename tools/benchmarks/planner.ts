// Part 3 of `npm run bench`: the upgrade planner over random (control plane, target, workers)
// triples. Pure, so tools/bench.test.ts checks the generator, the rollout accounting and the
// lower bound (against Cluster API's own planner).
import { performance } from "node:perf_hooks";
import semver from "semver";
import { catalog } from "../../infra/model/versions/catalog";
import { computeUpgradePlan, UpgradePlanError, type UpgradePlan } from "../../infra/model/versions/upgrade-plan";

/** One planner input: where the control plane and the workers are, and the Cluster's target. */
export interface PlannerTriple {
  readonly controlPlaneVersion: string;
  readonly workersVersion: string;
  readonly desiredVersion: string;
  /** True when drawn within the planner's input rules (so it must plan without error). */
  readonly valid: boolean;
}

/** Minors either side of the catalog's tenant minors in the synthetic ClusterClass list. */
const minorsAround = 12;
/** How far past the control plane a valid target may be (multi-minor chained upgrades). */
const maxTargetMinors = 8;
/** Share of triples drawn with no regard for the rules (downgrades, too much lag, …). */
export const unconstrainedShare = 0.1;

/**
 * How many minors the workers may move in one rollout, and lag the control plane by: CAPI refuses a
 * larger workers step, "to comply with Kubernetes version skew rules" (sigs.k8s.io/cluster-api@v1.12.10:
 * exp/topology/desiredstate/upgrade_plan.go, DefaultAndValidateUpgradePlans). The bench's own copy,
 * not the planner's: the bound below must not come from the code it measures.
 */
export const workersMaxMinorsPerRollout = 3;

/**
 * A ClusterClass `kubernetesVersions` list spanning many minors around the catalog's: patches
 * .0 and .1 of each minor plus the catalog's own versions, oldest first. These are synthetic
 * planner inputs, derived from the catalog so that no version is typed here.
 */
export function syntheticKubernetesVersions(): string[] {
  const catalogVersions = catalog.tenantKubernetesVersions.map((text) => semver.parse(text)).filter((version) => version !== null);
  const major = catalogVersions[0]?.major ?? 1;
  const minors = catalogVersions.map((version) => version.minor);
  const low = Math.max(0, Math.min(...minors) - minorsAround);
  const high = Math.max(...minors) + minorsAround;
  const list: string[] = [];
  for (let minor = low; minor <= high; minor++) {
    const patches = new Set([0, 1, ...catalogVersions.filter((version) => version.minor === minor).map((version) => version.patch)]);
    for (const patch of [...patches].sort((a, b) => a - b)) list.push(`v${major}.${minor}.${patch}`);
  }
  return list;
}

/** A small seeded PRNG (mulberry32): the same triples on every run and machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` triples over `versions` (oldest first). Most follow the planner's input rules:
 * workers ≤ control plane ≤ target, workers at most 3 minors behind the control plane, the
 * target listed; the rest (unconstrainedShare) are any three listed versions.
 */
export function randomTriples(versions: readonly string[], count: number, seed = 8): PlannerTriple[] {
  const random = seededRandom(seed);
  const minors = versions.map((text) => semver.minor(text));
  const pick = (from: number, to: number): number => from + Math.floor(random() * (to - from + 1));
  const lastIndexWithMinorAtMost = (minor: number): number => {
    let index = minors.length - 1;
    while (index > 0 && (minors[index] ?? 0) > minor) index--;
    return index;
  };
  const at = (index: number): string => versions[index] ?? "";
  const triples: PlannerTriple[] = [];
  for (let i = 0; i < count; i++) {
    if (random() < unconstrainedShare) {
      const [a, b, c] = [pick(0, versions.length - 1), pick(0, versions.length - 1), pick(0, versions.length - 1)];
      triples.push({ controlPlaneVersion: at(a), workersVersion: at(b), desiredVersion: at(c), valid: false });
      continue;
    }
    const workers = pick(0, versions.length - 1);
    const controlPlane = pick(workers, lastIndexWithMinorAtMost((minors[workers] ?? 0) + workersMaxMinorsPerRollout));
    const desired = pick(controlPlane, lastIndexWithMinorAtMost((minors[controlPlane] ?? 0) + maxTargetMinors));
    triples.push({ controlPlaneVersion: at(controlPlane), workersVersion: at(workers), desiredVersion: at(desired), valid: true });
  }
  return triples;
}

/**
 * The fewest worker rollouts any plan CAPI accepts can have, from the two versions alone: the workers
 * must end at the target and each rollout moves them at most 3 minors, so ⌈minors / 3⌉; one when only
 * the patch changes; none when they already run it. tools/bench.test.ts checks it against CAPI's own
 * planner (its default plan has this many rollouts, and it refuses every shorter plan).
 */
export function workerRolloutsLowerBound(workersVersion: string, desiredVersion: string): number {
  if (semver.eq(workersVersion, desiredVersion)) return 0;
  return Math.max(1, Math.ceil((semver.minor(desiredVersion) - semver.minor(workersVersion)) / workersMaxMinorsPerRollout));
}

/** Worker rollouts if the workers followed the control plane through every minor (at least one for a patch change). */
export function onePerMinorRollouts(workersVersion: string, desiredVersion: string): number {
  if (semver.eq(workersVersion, desiredVersion)) return 0;
  return Math.max(1, semver.minor(desiredVersion) - semver.minor(workersVersion));
}

/** What the planner part reports. */
export interface PlannerResult {
  triples: number;
  versionsListed: number;
  planMs: number;
  plansPerSecond: number;
  planned: number;
  /** Errors by UpgradePlanError code (invalid inputs). */
  errors: Record<string, number>;
  /** Triples drawn within the rules that still failed (should be 0). */
  unexpectedErrors: number;
  rollouts: { total: number; lowerBound: number; onePerMinor: number; atLowerBound: number; aboveLowerBound: number; belowLowerBound: number };
}

/** Plans every triple (timed), then compares each plan's worker rollouts with the bounds (untimed). */
export function measurePlanner(versions: readonly string[], triples: readonly PlannerTriple[]): PlannerResult {
  const plans: (UpgradePlan | UpgradePlanError)[] = new Array<UpgradePlan | UpgradePlanError>(triples.length);
  const start = performance.now();
  for (let i = 0; i < triples.length; i++) {
    const triple = triples[i];
    if (!triple) continue;
    try {
      plans[i] = computeUpgradePlan({ ...triple, kubernetesVersions: versions });
    } catch (error) {
      if (!(error instanceof UpgradePlanError)) throw error;
      plans[i] = error;
    }
  }
  const planMs = performance.now() - start;

  const errors: Record<string, number> = {};
  const rollouts = { total: 0, lowerBound: 0, onePerMinor: 0, atLowerBound: 0, aboveLowerBound: 0, belowLowerBound: 0 };
  let unexpectedErrors = 0;
  triples.forEach((triple, index) => {
    const plan = plans[index];
    if (plan instanceof UpgradePlanError || plan === undefined) {
      const code = plan?.code ?? "missing";
      errors[code] = (errors[code] ?? 0) + 1;
      if (triple.valid) unexpectedErrors++;
      return;
    }
    const made = plan.workersUpgrades.length;
    const bound = workerRolloutsLowerBound(triple.workersVersion, triple.desiredVersion);
    rollouts.total += made;
    rollouts.lowerBound += bound;
    rollouts.onePerMinor += onePerMinorRollouts(triple.workersVersion, triple.desiredVersion);
    if (made === bound) rollouts.atLowerBound++;
    else if (made > bound) rollouts.aboveLowerBound++;
    else rollouts.belowLowerBound++;
  });
  const failed = Object.values(errors).reduce((sum, n) => sum + n, 0);
  return {
    triples: triples.length,
    versionsListed: versions.length,
    planMs,
    plansPerSecond: triples.length / (planMs / 1000),
    planned: triples.length - failed,
    errors,
    unexpectedErrors,
    rollouts,
  };
}
