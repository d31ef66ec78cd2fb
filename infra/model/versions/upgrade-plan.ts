// Chained-upgrade planner for clusters with a managed topology, ported from Cluster API:
//   sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/upgrade_plan.go
// (ComputeUpgradePlan, DefaultAndValidateUpgradePlans, GetUpgradePlanOneMinor,
// GetUpgradePlanFromClusterClassVersions, isLowerThanMinVersion), plus the admission rules that
// guard its inputs: internal/webhooks/clusterclass.go (validateKubernetesVersions, CRD list bounds in
// api/core/v1beta2/clusterclass_types.go) and internal/webhooks/cluster.go (version must be listed,
// version cannot be decreased). Pure: no Pulumi, so the policy pack can share it.
//
// Versions are semantic versions as CAPI reads them: a leading "v" is optional, pre-releases and
// build metadata (e.g. "+k3s1") are allowed. Like CAPI, only minors are compared for skew and gaps.
import semver from "semver";

/** Where the cluster stands and where it should go. */
export interface UpgradePlanVersions {
  /** The control plane's current spec.version. */
  readonly controlPlaneVersion: string;
  /** The lowest version over all MachineDeployments and MachinePools (see minimumWorkersVersion); undefined = no workers. */
  readonly workersVersion?: string | undefined;
  /** The Cluster's spec.topology.version. */
  readonly desiredVersion: string;
}

export interface UpgradePlanInput extends UpgradePlanVersions {
  /** ClusterClass spec.kubernetesVersions; undefined or empty = not set (one-minor upgrades only). */
  readonly kubernetesVersions?: readonly string[] | undefined;
}

/** Versions still to go through; the current version is omitted, the target is included. */
export interface UpgradePlan {
  controlPlaneUpgrades: string[];
  workersUpgrades: string[];
}

export type UpgradeComponent = "control-plane" | "workers";

export interface UpgradeStep {
  readonly component: UpgradeComponent;
  readonly version: string;
}

export type UpgradePlanErrorCode =
  | "invalid-version"
  | "invalid-kubernetes-versions"
  | "version-not-listed"
  | "downgrade"
  | "minor-jump-without-kubernetes-versions"
  | "invalid-control-plane-plan"
  | "invalid-workers-plan";

/** Why no upgrade plan exists; the message names the versions involved and what to change. */
export class UpgradePlanError extends Error {
  override readonly name = "UpgradePlanError";
  readonly code: UpgradePlanErrorCode;

  constructor(code: UpgradePlanErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Kubernetes' version skew policy: kubelets may be up to 3 minors older than the API server. */
export const maxWorkersMinorSkew = 3;

/** CRD bounds of ClusterClass spec.kubernetesVersions. */
const kubernetesVersionsMaxItems = 100;
const kubernetesVersionsItemMaxLength = 256;

interface Version {
  /** The text as written by the user; plans carry these strings unchanged, as CAPI does. */
  readonly text: string;
  readonly semver: semver.SemVer;
  /** "v" + version + build metadata: the form CAPI prints and compares for equality. */
  readonly canonical: string;
  readonly minor: number;
}

/**
 * Parsed versions by text. Every plan re-reads the whole ClusterClass list, and semver.parse
 * dominated the planner's profile (`npm run bench`); a fleet uses few distinct versions, and
 * the cap keeps odd inputs from growing the cache without bound. Entries are never mutated.
 */
const parsedVersions = new Map<string, Version | null>();
const parsedVersionsMax = 4096;

function tryParse(text: string): Version | undefined {
  const cached = parsedVersions.get(text);
  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, a cache miss parses the same text to the same version
  if (cached !== undefined) {
    return cached ?? undefined;
  }
  const parsed = semver.parse(text);
  const build = parsed && parsed.build.length > 0 ? `+${parsed.build.join(".")}` : "";
  const version = parsed ? { text, semver: parsed, canonical: `v${parsed.version}${build}`, minor: parsed.minor } : null;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: equivalent, the cap only bounds memory; a cleared cache re-parses
  if (parsedVersions.size >= parsedVersionsMax) {
    // Stryker disable next-line CallExpression: equivalent, the cap only bounds memory; a cleared cache re-parses
    parsedVersions.clear();
  }
  // Stryker disable next-line CallExpression: equivalent, without the entry the next call parses the text again
  parsedVersions.set(text, version);
  return version ?? undefined;
}

function parse(text: string, what: string): Version {
  const version = tryParse(text);
  if (!version) {
    throw new UpgradePlanError(
      "invalid-version",
      `${what} version ${JSON.stringify(text)} is not a valid semantic version; use the vMAJOR.MINOR.PATCH form Cluster API expects`,
    );
  }
  return version;
}

/**
 * CAPI's version.Compare(a, b, WithBuildTags()): semver order, then build identifiers.
 * 2 means "different, order unknown" (two non-numeric build identifiers such as commit hashes or k3s1/k3s2).
 */
type Comparison = -1 | 0 | 1 | 2;

function compareVersions(a: Version, b: Version): Comparison {
  const byVersion = a.semver.compare(b.semver);
  return byVersion !== 0 ? byVersion : compareBuildIdentifiers(a.semver.build, b.semver.build);
}

function compareBuildIdentifiers(a: readonly string[], b: readonly string[]): Comparison {
  // Stryker disable next-line MethodExpression: equivalent, past the shorter list "" is numeric and sorts it first, as the length rule below does
  const shared = Math.min(a.length, b.length);
  // Stryker disable next-line EqualityOperator: equivalent, one more round compares "" as above
  for (let i = 0; i < shared; i++) {
    // Stryker disable next-line StringLiteral: equivalent, i is below both lengths
    const comparison = compareBuildIdentifier(a[i] ?? "", b[i] ?? "");
    if (comparison !== 0) {
      return comparison;
    }
  }
  // Equal so far: the longer one is greater.
  // Stryker disable next-line EqualityOperator: equivalent, the lengths differ here, so < and <= agree
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compareBuildIdentifier(a: string, b: string): Comparison {
  const numeric = /^\d*$/;
  const aNumeric = numeric.test(a);
  const bNumeric = numeric.test(b);
  if (aNumeric !== bNumeric) {
    // Numbers sort before strings.
    return aNumeric ? -1 : 1;
  }
  if (aNumeric) {
    // Numbers of any size (BigInt("") is 0n, though semver build identifiers are never empty).
    const x = BigInt(a);
    const y = BigInt(b);
    // Stryker disable next-line EqualityOperator: equivalent, equality is answered first
    return x === y ? 0 : x < y ? -1 : 1;
  }
  return a === b ? 0 : 2;
}

function minorName(version: Version, minor: number = version.minor): string {
  return `${version.semver.major}.${minor}`;
}

function listedRange(versions: readonly string[]): string {
  // Stryker disable next-line StringLiteral: equivalent, only called with a non-empty list
  const first = versions[0] ?? "";
  // Stryker disable next-line StringLiteral: equivalent, only called with a non-empty list
  const last = versions[versions.length - 1] ?? "";
  return versions.length === 1 ? first : `${first} … ${last}`;
}

/**
 * Problems with a ClusterClass spec.kubernetesVersions list (the CRD bounds and the ClusterClass webhook),
 * joined with "; ", or undefined when the list is acceptable.
 */
export function validateKubernetesVersionsList(list: readonly string[]): string | undefined {
  // Every plan validates the list again, usually the catalog's: reuse the verdict on the same content.
  const key = JSON.stringify(list);
  const known = listVerdicts.get(key);
  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, a cache miss computes the same verdict
  if (known !== undefined) {
    return known ?? undefined;
  }
  const problem = listProblems(list);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: equivalent, the cap only bounds memory; a cleared cache recomputes
  if (listVerdicts.size >= listVerdictsMax) {
    // Stryker disable next-line CallExpression: equivalent, the cap only bounds memory; a cleared cache recomputes
    listVerdicts.clear();
  }
  listVerdicts.set(key, problem ?? null);
  return problem;
}

/** Verdicts by list content (null: acceptable); bounded as parsedVersions is. */
const listVerdicts = new Map<string, string | null>();
const listVerdictsMax = 256;

function listProblems(list: readonly string[]): string | undefined {
  if (list.length === 0) {
    return "spec.kubernetesVersions must list at least one version; omit the field to allow one-minor upgrades only";
  }
  if (list.length > kubernetesVersionsMaxItems) {
    return `spec.kubernetesVersions lists ${list.length} versions; at most ${kubernetesVersionsMaxItems} are allowed, drop the oldest`;
  }
  const problems: string[] = [];
  let previous: Version | undefined;
  list.forEach((text, index) => {
    // Built only for a problem: the list is validated on every plan.
    const entry = (): string => `spec.kubernetesVersions[${index}] (${JSON.stringify(text)})`;
    if (text.length === 0 || text.length > kubernetesVersionsItemMaxLength) {
      problems.push(`${entry()} must be 1–${kubernetesVersionsItemMaxLength} characters long`);
      return;
    }
    const version = tryParse(text);
    if (!version) {
      // Like the webhook, the next entry is compared with the last valid one.
      problems.push(`${entry()}: version must be a valid semantic version`);
      return;
    }
    if (previous) {
      // Same major.minor.patch with unorderable build tags (comparison 2) is tolerated: list order decides.
      const comparison = compareVersions(version, previous);
      if (comparison === -1 || comparison === 0) {
        problems.push(`${entry()}: version must be greater than ${previous.canonical}; list versions oldest first, each once`);
      }
      if (previous.minor !== version.minor && previous.minor + 1 !== version.minor) {
        // Stryker disable next-line EqualityOperator,ArithmeticOperator: equivalent, here the minor is either below the previous one or more than one above
        const fix = version.minor > previous.minor + 1 ? `; add a ${minorName(previous, previous.minor + 1)} release in between` : "";
        problems.push(
          `${entry()}: expecting a version with minor ${previous.minor} or ${previous.minor + 1}, found version ${text}${fix}`,
        );
      }
    }
    previous = version;
  });
  return problems.length > 0 ? problems.join("; ") : undefined;
}

/**
 * The version CAPI treats as "the workers' version": the lowest over all MachineDeployments and
 * MachinePools (empty versions are skipped). Versions that differ only in unorderable build tags are
 * resolved against the control plane: the one that is not the control plane's version is the older.
 */
export function minimumWorkersVersion(workerVersions: readonly string[], controlPlaneVersion: string): string | undefined {
  const controlPlane = parse(controlPlaneVersion, "control-plane");
  let minimum: Version | undefined;
  for (const text of workerVersions) {
    if (text === "") {
      continue;
    }
    const version = parse(text, "worker");
    if (!minimum || isLowerThanMinimum(version, minimum, controlPlane)) {
      minimum = version;
    }
  }
  return minimum?.canonical;
}

function isLowerThanMinimum(version: Version, minimum: Version, controlPlane: Version): boolean {
  const comparison = compareVersions(version, minimum);
  return comparison === -1 || (comparison === 2 && version.canonical !== controlPlane.canonical);
}

/**
 * The upgrade plan CAPI's topology controller follows: the control plane goes through every minor
 * (the latest listed patch of each when ClusterClass spec.kubernetesVersions is set, otherwise one
 * minor only), and the workers move as rarely as the skew policy allows.
 */
export function computeUpgradePlan(input: UpgradePlanInput): UpgradePlan {
  const desired = parse(input.desiredVersion, "desired (Cluster spec.topology.version)");
  const controlPlane = parse(input.controlPlaneVersion, "control-plane");
  // Checked first, so that a bad version is named before any list problem.
  if (input.workersVersion !== undefined) parse(input.workersVersion, "workers");
  const kubernetesVersions = input.kubernetesVersions ?? [];
  const listed = kubernetesVersions.length > 0;

  if (listed) {
    const problem = validateKubernetesVersionsList(kubernetesVersions);
    if (problem) {
      throw new UpgradePlanError("invalid-kubernetes-versions", `ClusterClass ${problem}`);
    }
    // The Cluster webhook compares strings exactly.
    if (!kubernetesVersions.includes(input.desiredVersion)) {
      throw new UpgradePlanError(
        "version-not-listed",
        `desired version ${input.desiredVersion} is not listed in the ClusterClass spec.kubernetesVersions (${listedRange(kubernetesVersions)}); add it to the list or set spec.topology.version to a listed version`,
      );
    }
  }
  rejectDowngrades(desired, controlPlane);

  const controlPlaneUpgrades = listed
    ? controlPlanePlanFromKubernetesVersions(kubernetesVersions, controlPlane, desired)
    : controlPlanePlanOneMinor(controlPlane, desired);
  try {
    return defaultAndValidateUpgradePlans(input, controlPlaneUpgrades);
  } catch (error) {
    if (listed && error instanceof UpgradePlanError && error.code === "invalid-control-plane-plan") {
      throw new UpgradePlanError(error.code, `${error.message}${kubernetesVersionsHint(kubernetesVersions, controlPlane, desired)}`);
    }
    throw error;
  }
}

/** Workers newer than the desired version are refused while their plan is defaulted (defaultWorkers). */
function rejectDowngrades(desired: Version, controlPlane: Version): void {
  if (compareVersions(desired, controlPlane) === -1) {
    throw new UpgradePlanError(
      "downgrade",
      `cannot downgrade the control plane from ${controlPlane.text} to ${desired.text}: Cluster API only upgrades; set spec.topology.version to ${controlPlane.text} or newer`,
    );
  }
}

function kubernetesVersionsHint(kubernetesVersions: readonly string[], controlPlane: Version, desired: Version): string {
  const unlisted = kubernetesVersions.some((text) => tryParse(text)?.canonical === controlPlane.canonical)
    ? ""
    : `; the control-plane version ${controlPlane.text} is not listed, add it`;
  return ` (plan taken from ClusterClass spec.kubernetesVersions: list a version for every minor from ${minorName(controlPlane)} to ${minorName(desired)}${unlisted})`;
}

/** Without spec.kubernetesVersions CAPI upgrades at most one minor at a time (GetUpgradePlanOneMinor). */
function controlPlanePlanOneMinor(controlPlane: Version, desired: Version): string[] {
  if (controlPlane.canonical === desired.canonical) {
    return [];
  }
  if (desired.minor > controlPlane.minor + 1) {
    throw new UpgradePlanError(
      "minor-jump-without-kubernetes-versions",
      `cannot compute an upgrade plan from ${controlPlane.text} to ${desired.text}: without ClusterClass spec.kubernetesVersions the control plane moves at most one minor per upgrade; upgrade to a ${minorName(controlPlane, controlPlane.minor + 1)} release first, or list a version for every minor from ${minorName(controlPlane)} to ${minorName(desired)} in spec.kubernetesVersions`,
    );
  }
  return [desired.text];
}

/** The latest listed version of each minor after the control plane's, up to the desired one (GetUpgradePlanFromClusterClassVersions). */
function controlPlanePlanFromKubernetesVersions(list: readonly string[], controlPlane: Version, desired: Version): string[] {
  const candidates: Version[] = [];
  let started = false;
  let ended = false;
  // The list was validated (validateKubernetesVersionsList) before it got here: every entry parses.
  // Stryker disable next-line ArrayDeclaration: equivalent, the fallback is never used
  for (const version of list.flatMap((text) => tryParse(text) ?? [])) {
    // Upstream sets `started` only after this check, so a listed version above an unlisted
    // control-plane version in the same minor is skipped; kept as is.
    if ((started && !ended) || (!started && version.minor > controlPlane.minor)) {
      candidates.push(version);
    }
    if (version.canonical === controlPlane.canonical || compareVersions(controlPlane, version) === -1) {
      started = true;
    }
    // Stryker disable next-line ConditionalExpression: equivalent, the desired version is listed (checked before), so equality ends the walk first
    if (version.canonical === desired.canonical || compareVersions(desired, version) === -1) {
      ended = true;
    }
  }
  const first = candidates[0];
  if (!first) {
    return [];
  }
  const plan: string[] = [];
  let currentMinor = controlPlane.minor;
  // A patch-only upgrade has no "next minor" to start from.
  if (currentMinor === desired.minor) {
    plan.push(first.text);
  }
  for (const version of candidates) {
    if (version.minor > currentMinor) {
      plan.push(version.text);
    } else if (
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent, candidates never go below the current minor, and plan[-1] is no element
      version.minor === currentMinor && plan.length > 0
    ) {
      plan[plan.length - 1] = version.text;
    }
    currentMinor = version.minor;
  }
  return plan;
}

/** Facts the workers' plan is checked against, derived while validating the control-plane plan. */
interface ControlPlanePlanFacts {
  readonly desired: Version;
  readonly controlPlane: Version;
  readonly workers: Version | undefined;
  /** The last version of each minor the control plane is at or goes through. */
  readonly versionOfMinor: ReadonlyMap<number, string>;
  /** Position of each version in the control-plane plan (-1 = current); orders unorderable build tags. */
  readonly order: ReadonlyMap<string, number>;
}

function checkControlPlanePlan(versions: UpgradePlanVersions, controlPlaneUpgrades: readonly string[]): ControlPlanePlanFacts {
  const desired = parse(versions.desiredVersion, "desired (Cluster spec.topology.version)");
  const controlPlane = parse(versions.controlPlaneVersion, "control-plane");
  const workers = versions.workersVersion === undefined ? undefined : parse(versions.workersVersion, "workers");
  const versionOfMinor = new Map<number, string>([[controlPlane.minor, versions.controlPlaneVersion]]);
  const order = new Map<string, number>([[controlPlane.canonical, -1]]);
  const fail = (problem: string): never => {
    throw new UpgradePlanError("invalid-control-plane-plan", `invalid ControlPlane upgrade plan: ${problem}`);
  };

  if (compareVersions(controlPlane, desired) !== 0) {
    let current = controlPlane;
    controlPlaneUpgrades.forEach((text, index) => {
      const target = tryParse(text) ?? fail(`item ${index}; ${JSON.stringify(text)} is not a valid semantic version`);
      order.set(target.canonical, index);
      const comparison = compareVersions(target, current);
      if (comparison === -1 || comparison === 0) {
        fail(`item ${index}; version ${text} must be greater than ${current.canonical}: the plan may only move forward`);
      }
      if (current.minor !== target.minor && current.minor + 1 !== target.minor) {
        fail(
          `item ${index}; expecting a version with minor ${current.minor} or ${current.minor + 1}, found version ${text}: the control plane cannot skip a minor, add a ${minorName(current, current.minor + 1)} release before it`,
        );
      }
      versionOfMinor.set(target.minor, text);
      current = target;
    });
    if (compareVersions(current, desired) !== 0) {
      fail(`control plane upgrade plan must end with version ${versions.desiredVersion}, ends with ${current.canonical} instead`);
    }
  } else if (controlPlaneUpgrades.length > 0) {
    fail(`control plane is already at the desired version ${versions.desiredVersion}; the plan must be empty`);
  }
  return { desired, controlPlane, workers, versionOfMinor, order };
}

function workersNeedUpgrade(facts: ControlPlanePlanFacts): facts is ControlPlanePlanFacts & { readonly workers: Version } {
  return facts.workers !== undefined && compareVersions(facts.workers, facts.desired) !== 0;
}

function failWorkers(problem: string): never {
  throw new UpgradePlanError("invalid-workers-plan", `invalid workers upgrade plan: ${problem}`);
}

/** Workers move only when the skew policy forces them to (every 3rd minor) and at the target. */
function defaultWorkers(facts: ControlPlanePlanFacts & { readonly workers: Version }, versions: UpgradePlanVersions): string[] {
  const { workers, desired } = facts;
  if (compareVersions(workers, desired) === 1) {
    throw new UpgradePlanError(
      "downgrade",
      `cannot downgrade the workers from ${workers.text} to ${desired.text}: Cluster API only upgrades; set spec.topology.version to ${workers.text} or newer`,
    );
  }
  const plan: string[] = [];
  for (let step = maxWorkersMinorSkew; step < desired.minor - workers.minor; step += maxWorkersMinorSkew) {
    const minor = workers.minor + step;
    const version = facts.versionOfMinor.get(minor);
    if (version === undefined) {
      // Upstream wraps a nil error here and so returns no plan and no error; this port reports it.
      failWorkers(
        `workers at ${workers.text} must step through a ${minorName(workers, minor)} release, but neither the control plane (${facts.controlPlane.text}) nor its plan runs that minor: the workers already lag the control plane by more than ${maxWorkersMinorSkew} minors; bring them within ${maxWorkersMinorSkew} minors of it first`,
      );
    }
    plan.push(version);
  }
  // The steps above stay below the desired minor, so the target is always one more step.
  plan.push(versions.desiredVersion);
  return plan;
}

function checkWorkersPlan(
  facts: ControlPlanePlanFacts,
  versions: UpgradePlanVersions,
  controlPlaneUpgrades: readonly string[],
  workersUpgrades: readonly string[],
  options: { readonly provided: boolean },
): void {
  if (!workersNeedUpgrade(facts)) {
    if (workersUpgrades.length > 0) {
      failWorkers(`there are no workers, or they already run the desired version ${versions.desiredVersion}; the plan must be empty`);
    }
    return;
  }
  // Workers may only move to versions the control plane runs or will run (string match, as upstream).
  if (options.provided && controlPlaneUpgrades.length > 0) {
    const allowed = new Set([...controlPlaneUpgrades, versions.controlPlaneVersion]);
    const strays = [...new Set(workersUpgrades.filter((text) => !allowed.has(text)))];
    if (strays.length > 0) {
      failWorkers(
        `versions ${strays.join(",")} match neither a step of the control plane upgrade plan nor the control-plane version ${versions.controlPlaneVersion}; workers may only move to versions the control plane runs`,
      );
    }
  }

  let current = facts.workers;
  workersUpgrades.forEach((text, index) => {
    const target = tryParse(text) ?? failWorkers(`item ${index}; ${JSON.stringify(text)} is not a valid semantic version`);
    const comparison = compareVersions(target, current);
    if (comparison === -1 || comparison === 0) {
      failWorkers(`item ${index}; version ${text} must be greater than ${current.canonical}: the plan may only move forward`);
    }
    if (comparison === 2) {
      // Unorderable build tags: the control-plane plan's order decides.
      const targetOrder = facts.order.get(target.canonical);
      const currentOrder = facts.order.get(current.canonical);
      if (targetOrder === undefined || currentOrder === undefined) {
        failWorkers(
          `item ${index}; cannot tell whether ${text} comes after ${current.canonical}: their build tags are unordered and they are not both in the control plane upgrade plan`,
        );
      }
      // Stryker disable next-line EqualityOperator: equivalent, the same order is the same version, refused above
      if (targetOrder < currentOrder) {
        failWorkers(`item ${index}; version ${text} must be before ${current.canonical}, as in the control plane upgrade plan`);
      }
    }
    if (target.minor - current.minor > maxWorkersMinorSkew) {
      failWorkers(
        `item ${index}; workers cannot go from minor ${current.minor} (${current.canonical}) to minor ${target.minor} (${text}), an intermediate step is required to comply with Kubernetes version skew rules (at most ${maxWorkersMinorSkew} minors behind the control plane)`,
      );
    }
    current = target;
  });
  if (compareVersions(current, facts.desired) !== 0) {
    failWorkers(`workers upgrade plan must end with version ${versions.desiredVersion}, ends with ${current.canonical} instead`);
  }
}

/**
 * Validates a control-plane plan (from any source: the versions list, the one-minor rule or a
 * GenerateUpgradePlan extension) and an optional workers plan, defaulting the latter when empty
 * (DefaultAndValidateUpgradePlans). Throws UpgradePlanError.
 */
export function defaultAndValidateUpgradePlans(
  versions: UpgradePlanVersions,
  controlPlaneUpgrades: readonly string[],
  workersUpgrades: readonly string[] = [],
): UpgradePlan {
  const facts = checkControlPlanePlan(versions, controlPlaneUpgrades);
  const provided = workersUpgrades.length > 0;
  const workers = !provided && workersNeedUpgrade(facts) ? defaultWorkers(facts, versions) : [...workersUpgrades];
  checkWorkersPlan(facts, versions, controlPlaneUpgrades, workers, { provided });
  return { controlPlaneUpgrades: [...controlPlaneUpgrades], workersUpgrades: workers };
}

/**
 * The workers plan CAPI picks when none is given: a step every 3rd minor (to the control-plane
 * version of that minor) and one at the target. Empty without workers or when they are up to date.
 * Throws UpgradePlanError when the control-plane plan is invalid or offers no version to step through.
 */
export function defaultWorkersPlan(versions: UpgradePlanVersions, controlPlaneUpgrades: readonly string[]): string[] {
  return defaultAndValidateUpgradePlans(versions, controlPlaneUpgrades).workersUpgrades;
}

/**
 * Why a workers plan (e.g. one returned by a GenerateUpgradePlan extension) would be rejected, or
 * undefined when it is acceptable: every step is a control-plane step or the current control-plane
 * version, steps strictly increase, none is more than 3 minors ahead of the previous workers version,
 * and the plan ends at the desired version. Problems with the control-plane plan are reported first.
 */
export function validateWorkersPlan(
  versions: UpgradePlanVersions,
  controlPlaneUpgrades: readonly string[],
  workersUpgrades: readonly string[],
): string | undefined {
  try {
    const facts = checkControlPlanePlan(versions, controlPlaneUpgrades);
    checkWorkersPlan(facts, versions, controlPlaneUpgrades, workersUpgrades, { provided: true });
    return undefined;
  } catch (error) {
    if (error instanceof UpgradePlanError) {
      return error.message;
    }
    throw error;
  }
}

/**
 * How many times the workers roll out with the default plan: once per 3 minors, rounded up; a
 * patch-only change still rolls them once (upstream appends the target even when no minor changes);
 * 0 when they already run the desired version.
 */
export function minimumWorkerRollouts(workersVersion: string, desiredVersion: string): number {
  const workers = parse(workersVersion, "workers");
  const desired = parse(desiredVersion, "desired (Cluster spec.topology.version)");
  const comparison = compareVersions(workers, desired);
  if (comparison === 0) {
    return 0;
  }
  if (comparison === 1) {
    throw new UpgradePlanError("downgrade", `cannot downgrade the workers from ${workersVersion} to ${desiredVersion}: Cluster API only upgrades`);
  }
  return Math.max(1, Math.ceil((desired.minor - workers.minor) / maxWorkersMinorSkew));
}

/**
 * The plan in the order the topology controller executes it: the control plane takes its steps one
 * by one, and whenever it reaches the version that is next in the workers plan it waits for the
 * workers to get there (a workers step at the current control-plane version goes first).
 */
export function upgradeCampaign(versions: UpgradePlanVersions, plan: UpgradePlan): UpgradeStep[] {
  const steps: UpgradeStep[] = [];
  let next = 0;
  const catchUpWorkers = (controlPlaneVersion: string): void => {
    if (plan.workersUpgrades[next] === controlPlaneVersion) {
      steps.push({ component: "workers", version: controlPlaneVersion });
      next++;
    }
  };
  catchUpWorkers(versions.controlPlaneVersion);
  for (const version of plan.controlPlaneUpgrades) {
    steps.push({ component: "control-plane", version });
    catchUpWorkers(version);
  }
  const stranded = plan.workersUpgrades.slice(next);
  if (stranded.length > 0) {
    failWorkers(
      `steps ${stranded.join(",")} are never reached: each workers step must be a control-plane version, in control-plane order`,
    );
  }
  return steps;
}
