import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseKubernetesVersion } from "./kubernetes-version";
import {
  computeUpgradePlan,
  defaultAndValidateUpgradePlans,
  defaultWorkersPlan,
  minimumWorkerRollouts,
  minimumWorkersVersion,
  upgradeCampaign,
  UpgradePlanError,
  validateKubernetesVersionsList,
  validateWorkersPlan,
  type UpgradePlanErrorCode,
  type UpgradePlanInput,
  type UpgradeStep,
} from "./upgrade-plan";

/** Every minor from..to with patch 0, e.g. versions(29, 33) = v1.29.0 … v1.33.0. */
function versions(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `v1.${from + i}.0`);
}

const cp = (version: string): UpgradeStep => ({ component: "control-plane", version });
const workers = (version: string): UpgradeStep => ({ component: "workers", version });

function errorOf(run: () => unknown): UpgradePlanError {
  try {
    run();
  } catch (error) {
    if (error instanceof UpgradePlanError) {
      return error;
    }
    throw error;
  }
  throw new Error("expected an UpgradePlanError");
}

function minor(version: string): number {
  const parsed = parseKubernetesVersion(version);
  if (!parsed) {
    throw new Error(`test versions are plain vX.Y.Z, got ${version}`);
  }
  return parsed.minor;
}

function patch(version: string): number {
  return parseKubernetesVersion(version)?.patch ?? Number.NaN;
}

/** -1, 0 or 1 for plain vX.Y.Z versions of the same major. */
function compare(a: string, b: string): number {
  return Math.sign(minor(a) - minor(b) || patch(a) - patch(b));
}

describe("computeUpgradePlan: worked examples", () => {
  it("1.29.0 → 1.33.0: control plane 1.30, 1.31, 1.32, workers to 1.32, control plane 1.33, workers to 1.33", () => {
    const input = { controlPlaneVersion: "v1.29.0", workersVersion: "v1.29.0", desiredVersion: "v1.33.0", kubernetesVersions: versions(29, 33) };
    const plan = computeUpgradePlan(input);
    expect(plan).toEqual({ controlPlaneUpgrades: versions(30, 33), workersUpgrades: ["v1.32.0", "v1.33.0"] });
    expect(upgradeCampaign(input, plan)).toEqual([
      cp("v1.30.0"),
      cp("v1.31.0"),
      cp("v1.32.0"),
      workers("v1.32.0"),
      cp("v1.33.0"),
      workers("v1.33.0"),
    ]);
  });

  it("1.30 → 1.33: control plane 1.31, 1.32, 1.33 and a single workers rollout", () => {
    const input = { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.33.0", kubernetesVersions: versions(30, 33) };
    const plan = computeUpgradePlan(input);
    expect(plan).toEqual({ controlPlaneUpgrades: versions(31, 33), workersUpgrades: ["v1.33.0"] });
    expect(upgradeCampaign(input, plan)).toEqual([cp("v1.31.0"), cp("v1.32.0"), cp("v1.33.0"), workers("v1.33.0")]);
    expect(minimumWorkerRollouts("v1.30.0", "v1.33.0")).toBe(1);
  });

  it("1.29 → 1.35: workers roll out at 1.32 and at 1.35", () => {
    const plan = computeUpgradePlan({
      controlPlaneVersion: "v1.29.0",
      workersVersion: "v1.29.0",
      desiredVersion: "v1.35.0",
      kubernetesVersions: versions(29, 35),
    });
    expect(plan).toEqual({ controlPlaneUpgrades: versions(30, 35), workersUpgrades: ["v1.32.0", "v1.35.0"] });
  });

  it("takes the latest listed patch of each minor: v1.28.0 → v1.29.0 → v1.30.1 → v1.31.2 (the proposal's example)", () => {
    const plan = computeUpgradePlan({
      controlPlaneVersion: "v1.28.0",
      desiredVersion: "v1.31.2",
      kubernetesVersions: ["v1.28.0", "v1.29.0", "v1.30.0", "v1.30.1", "v1.31.2"],
    });
    expect(plan).toEqual({ controlPlaneUpgrades: ["v1.29.0", "v1.30.1", "v1.31.2"], workersUpgrades: [] });
  });

  it("lets workers that are already at the control plane's version go first", () => {
    const input = { controlPlaneVersion: "v1.33.1", workersVersion: "v1.30.0", desiredVersion: "v1.34.1", kubernetesVersions: ["v1.33.1", "v1.34.1"] };
    const plan = computeUpgradePlan(input);
    expect(plan).toEqual({ controlPlaneUpgrades: ["v1.34.1"], workersUpgrades: ["v1.33.1", "v1.34.1"] });
    expect(upgradeCampaign(input, plan)).toEqual([workers("v1.33.1"), cp("v1.34.1"), workers("v1.34.1")]);
  });

  it("returns an empty plan when everything is up to date", () => {
    expect(computeUpgradePlan({ controlPlaneVersion: "v1.33.1", workersVersion: "v1.33.1", desiredVersion: "v1.33.1" })).toEqual({
      controlPlaneUpgrades: [],
      workersUpgrades: [],
    });
  });
});

// Ported from upgrade_plan_test.go TestGetUpgradePlanFromClusterClassVersions (no workers, so only the control plane moves).
describe("computeUpgradePlan from ClusterClass spec.kubernetesVersions", () => {
  it.each([
    { name: "one minor", list: ["v1.31.0", "v1.32.0", "v1.32.1"], from: "v1.31.0", to: "v1.32.0", want: ["v1.32.0"] },
    { name: "patch upgrade", list: ["v1.35.1", "v1.35.2"], from: "v1.35.1", to: "v1.35.2", want: ["v1.35.2"] },
    { name: "patch upgrade skipping a listed patch", list: ["v1.35.1", "v1.35.2", "v1.35.3"], from: "v1.35.1", to: "v1.35.3", want: ["v1.35.3"] },
    { name: "patch upgrade below the latest listed patch", list: ["v1.35.1", "v1.35.2", "v1.35.3"], from: "v1.35.1", to: "v1.35.2", want: ["v1.35.2"] },
    { name: "more than one minor", list: ["v1.31.0", "v1.32.0", "v1.33.0"], from: "v1.31.0", to: "v1.33.0", want: ["v1.32.0", "v1.33.0"] },
    {
      name: "latest patch of every minor",
      list: ["v1.31.0", "v1.31.1", "v1.32.0", "v1.32.2", "v1.32.3", "v1.33.0", "v1.33.1"],
      from: "v1.31.0",
      to: "v1.33.1",
      want: ["v1.32.3", "v1.33.1"],
    },
    {
      name: "latest pre-release of a minor",
      list: ["v1.31.0", "v1.31.1", "v1.32.0-alpha.0", "v1.32.0-alpha.1", "v1.32.0-alpha.2", "v1.33.0", "v1.33.1"],
      from: "v1.31.0",
      to: "v1.33.1",
      want: ["v1.32.0-alpha.2", "v1.33.1"],
    },
    {
      name: "last listed build of a minor",
      list: ["v1.31.0", "v1.31.1", "v1.32.0+foo.1-bar.1", "v1.32.0+foo.2-bar.1", "v1.32.0+foo.2-bar.2", "v1.33.0", "v1.33.1"],
      from: "v1.31.0",
      to: "v1.33.1",
      want: ["v1.32.0+foo.2-bar.2", "v1.33.1"],
    },
    { name: "unlisted control-plane version older than the listed patch", list: ["v1.31.1", "v1.32.0", "v1.33.0"], from: "v1.31.0", to: "v1.33.0", want: ["v1.32.0", "v1.33.0"] },
    { name: "unlisted control-plane version newer than the listed patch", list: ["v1.31.0", "v1.32.0", "v1.33.0"], from: "v1.31.2", to: "v1.33.0", want: ["v1.32.0", "v1.33.0"] },
  ])("$name: $from → $to goes through $want", ({ list, from, to, want }) => {
    expect(computeUpgradePlan({ controlPlaneVersion: from, desiredVersion: to, kubernetesVersions: list })).toEqual({
      controlPlaneUpgrades: want,
      workersUpgrades: [],
    });
  });
});

// Ported from TestGetUpgradePlanOneMinor: without a versions list CAPI moves one minor at a time.
describe("computeUpgradePlan without spec.kubernetesVersions", () => {
  it.each([
    { from: "v1.31.0", to: "v1.31.0", want: [] },
    { from: "v1.31.0", to: "v1.32.0", want: ["v1.32.0"] },
    { from: "v1.32.0-alpha.1", to: "v1.32.0-alpha.2", want: ["v1.32.0-alpha.2"] },
    { from: "v1.32.0+foo.1-bar.1", to: "v1.32.0+foo.2-bar.1", want: ["v1.32.0+foo.2-bar.1"] },
  ])("$from → $to goes through $want", ({ from, to, want }) => {
    expect(computeUpgradePlan({ controlPlaneVersion: from, desiredVersion: to })).toEqual({ controlPlaneUpgrades: want, workersUpgrades: [] });
  });

  it("refuses to jump more than one minor", () => {
    const error = errorOf(() => computeUpgradePlan({ controlPlaneVersion: "v1.31.0", workersVersion: "v1.31.0", desiredVersion: "v1.33.0" }));
    expect(error.code).toBe("minor-jump-without-kubernetes-versions");
    expect(error.message).toContain("cannot compute an upgrade plan from v1.31.0 to v1.33.0");
    expect(error.message).toContain("upgrade to a 1.32 release first");
  });
});

describe("computeUpgradePlan: inputs it rejects", () => {
  it.each<{ name: string; input: UpgradePlanInput; code: UpgradePlanErrorCode; message: string }>([
    {
      name: "an unparseable control-plane version",
      input: { controlPlaneVersion: "foo", desiredVersion: "v1.33.1" },
      code: "invalid-version",
      message: 'control-plane version "foo" is not a valid semantic version',
    },
    {
      name: "a control-plane downgrade",
      input: { controlPlaneVersion: "v1.31.0", desiredVersion: "v1.30.5", kubernetesVersions: ["v1.30.5", "v1.31.0"] },
      code: "downgrade",
      message: "cannot downgrade the control plane from v1.31.0 to v1.30.5",
    },
    {
      name: "workers newer than the desired version",
      input: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.31.0", desiredVersion: "v1.30.0" },
      code: "downgrade",
      message: "cannot downgrade the workers from v1.31.0 to v1.30.0",
    },
    {
      name: "a desired version missing from spec.kubernetesVersions",
      input: { controlPlaneVersion: "v1.30.0", desiredVersion: "v1.31.5", kubernetesVersions: ["v1.30.0", "v1.31.0", "v1.32.0"] },
      code: "version-not-listed",
      message: "desired version v1.31.5 is not listed in the ClusterClass spec.kubernetesVersions (v1.30.0 … v1.32.0)",
    },
    {
      name: "a minor gap in spec.kubernetesVersions",
      input: { controlPlaneVersion: "v1.30.0", desiredVersion: "v1.32.0", kubernetesVersions: ["v1.30.0", "v1.32.0"] },
      code: "invalid-kubernetes-versions",
      message: "expecting a version with minor 30 or 31, found version v1.32.0; add a 1.31 release in between",
    },
    {
      // TestGetUpgradePlanFromClusterClassVersions "not happy path": the list starts two minors above the control plane.
      name: "a list that does not reach down to the control plane's next minor",
      input: { controlPlaneVersion: "v1.30.2", desiredVersion: "v1.33.0", kubernetesVersions: ["v1.32.0", "v1.33.0"] },
      code: "invalid-control-plane-plan",
      message: "expecting a version with minor 30 or 31, found version v1.32.0",
    },
    {
      // Upstream quirk kept: an unlisted control-plane patch cannot move to the first listed patch of its own minor.
      name: "a patch upgrade from an unlisted control-plane version",
      input: { controlPlaneVersion: "v1.31.0", desiredVersion: "v1.31.1", kubernetesVersions: ["v1.31.1"] },
      code: "invalid-control-plane-plan",
      message: "the control-plane version v1.31.0 is not listed, add it",
    },
    {
      // Upstream returns an empty workers plan and no error here (it wraps a nil error).
      name: "workers lagging the control plane by more than 3 minors",
      input: { controlPlaneVersion: "v1.32.0", workersVersion: "v1.28.0", desiredVersion: "v1.33.0", kubernetesVersions: ["v1.32.0", "v1.33.0"] },
      code: "invalid-workers-plan",
      message: "the workers already lag the control plane by more than 3 minors",
    },
  ])("rejects $name", ({ input, code, message }) => {
    const error = errorOf(() => computeUpgradePlan(input));
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });
});

// Ported from TestComputeUpgradePlan: plans as a GenerateUpgradePlan extension could return them.
describe("defaultAndValidateUpgradePlans", () => {
  it.each([
    {
      name: "control plane only (no workers)",
      versions: { controlPlaneVersion: "v1.30.0", desiredVersion: "v1.33.1" },
      controlPlane: ["v1.31.1", "v1.32.0", "v1.33.1"],
      given: [],
      want: [],
    },
    {
      name: "workers move once, at the end",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.32.0" },
      controlPlane: ["v1.31.1", "v1.32.0"],
      given: [],
      want: ["v1.32.0"],
    },
    {
      name: "workers catch up after the control plane finished",
      versions: { controlPlaneVersion: "v1.32.0", workersVersion: "v1.30.0", desiredVersion: "v1.32.0" },
      controlPlane: [],
      given: [],
      want: ["v1.32.0"],
    },
    {
      name: "workers take an extra step to respect the version skew",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.34.1" },
      controlPlane: ["v1.31.1", "v1.32.0", "v1.33.1", "v1.34.1"],
      given: [],
      want: ["v1.33.1", "v1.34.1"],
    },
    {
      name: "the skew step is the current control-plane version (after the control plane reached 1.33)",
      versions: { controlPlaneVersion: "v1.33.1", workersVersion: "v1.30.0", desiredVersion: "v1.34.1" },
      controlPlane: ["v1.34.1"],
      given: [],
      want: ["v1.33.1", "v1.34.1"],
    },
    {
      name: "the skew step uses the last patch of its minor",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.34.1" },
      controlPlane: ["v1.31.1", "v1.31.2", "v1.32.0", "v1.33.1", "v1.33.2", "v1.34.1"],
      given: [],
      want: ["v1.33.2", "v1.34.1"],
    },
    {
      name: "pre-releases in the control-plane plan",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.34.1" },
      controlPlane: ["v1.31.1", "v1.32.0", "v1.33.2", "v1.34.1-beta.0", "v1.34.1-rc.0", "v1.34.1"],
      given: [],
      want: ["v1.33.2", "v1.34.1"],
    },
    {
      name: "a custom workers plan with an unnecessary intermediate step",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.33.1" },
      controlPlane: ["v1.31.1", "v1.32.0", "v1.33.1"],
      given: ["v1.31.1", "v1.33.1"],
      want: ["v1.31.1", "v1.33.1"],
    },
    {
      name: "a custom workers plan plus the skew step",
      versions: { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.35.2" },
      controlPlane: ["v1.31.1", "v1.32.0", "v1.33.1", "v1.34.2", "v1.35.2"],
      given: ["v1.31.1", "v1.34.2", "v1.35.2"],
      want: ["v1.31.1", "v1.34.2", "v1.35.2"],
    },
    {
      name: "build tags",
      versions: { controlPlaneVersion: "v1.30.0+foo.1-bar.1", workersVersion: "v1.30.0+foo.1-bar.1", desiredVersion: "v1.32.1+foo.1-bar.1" },
      controlPlane: ["v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"],
      given: [],
      want: ["v1.32.1+foo.1-bar.1"],
    },
    {
      name: "unordered build tags in the control plane's order",
      versions: { controlPlaneVersion: "v1.31.1+foo.1-bar.1", workersVersion: "v1.30.0+foo.1-bar.1", desiredVersion: "v1.32.1+foo.1-bar.1" },
      controlPlane: ["v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"],
      given: ["v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"],
      want: ["v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"],
    },
  ])("accepts $name: workers go through $want", ({ versions: current, controlPlane, given, want }) => {
    expect(defaultAndValidateUpgradePlans(current, controlPlane, given)).toEqual({ controlPlaneUpgrades: controlPlane, workersUpgrades: want });
    if (given.length > 0) {
      expect(validateWorkersPlan(current, controlPlane, given)).toBeUndefined();
    }
  });

  const from130 = { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.33.1" };
  const upToDateControlPlane = { controlPlaneVersion: "v1.33.1", workersVersion: "v1.30.0", desiredVersion: "v1.33.1" };
  const fullPlan = ["v1.31.1", "v1.32.0", "v1.33.1"];

  it.each([
    { name: "an unparseable control-plane step", current: from130, controlPlane: ["foo"], given: [], message: 'invalid ControlPlane upgrade plan: item 0; "foo" is not a valid semantic version' },
    { name: "a control-plane step that is no upgrade", current: from130, controlPlane: ["v1.30.0"], given: [], message: "item 0; version v1.30.0 must be greater than v1.30.0" },
    {
      name: "a control-plane step that skips a minor",
      current: from130,
      controlPlane: ["v1.32.1"],
      given: [],
      message: "item 0; expecting a version with minor 30 or 31, found version v1.32.1: the control plane cannot skip a minor, add a 1.31 release before it",
    },
    { name: "a control-plane downgrade", current: from130, controlPlane: ["v1.31.1", "v1.30.0"], given: [], message: "item 1; version v1.30.0 must be greater than v1.31.1" },
    { name: "a control-plane plan that stops early", current: from130, controlPlane: ["v1.31.1", "v1.32.0"], given: [], message: "must end with version v1.33.1, ends with v1.32.0 instead" },
    { name: "a control-plane plan that overshoots", current: from130, controlPlane: [...fullPlan, "v1.34.1"], given: [], message: "must end with version v1.33.1, ends with v1.34.1 instead" },
    { name: "a control-plane plan for an up-to-date control plane", current: upToDateControlPlane, controlPlane: ["v1.33.1"], given: [], message: "control plane is already at the desired version" },
    { name: "a workers step the control plane never runs", current: from130, controlPlane: fullPlan, given: ["v1.32.2"], message: "versions v1.32.2 match neither a step of the control plane upgrade plan" },
    { name: "workers steps out of order", current: from130, controlPlane: fullPlan, given: ["v1.33.1", "v1.32.0"], message: "item 1; version v1.32.0 must be greater than v1.33.1" },
    { name: "an unparseable workers step", current: upToDateControlPlane, controlPlane: [], given: ["foo"], message: 'invalid workers upgrade plan: item 0; "foo" is not a valid semantic version' },
    { name: "a workers step that is no upgrade", current: upToDateControlPlane, controlPlane: [], given: ["v1.30.0"], message: "item 0; version v1.30.0 must be greater than v1.30.0" },
    { name: "a workers plan that stops early", current: upToDateControlPlane, controlPlane: [], given: ["v1.32.1"], message: "must end with version v1.33.1, ends with v1.32.1 instead" },
    {
      name: "a workers plan that overshoots",
      current: { controlPlaneVersion: "v1.33.1", workersVersion: "v1.31.0", desiredVersion: "v1.33.1" },
      controlPlane: [],
      given: ["v1.34.1"],
      message: "must end with version v1.33.1, ends with v1.34.1 instead",
    },
    {
      name: "a workers step 4 minors ahead",
      current: { controlPlaneVersion: "v1.34.1", workersVersion: "v1.30.0", desiredVersion: "v1.34.1" },
      controlPlane: [],
      given: ["v1.34.1"],
      message: "item 0; workers cannot go from minor 30 (v1.30.0) to minor 34 (v1.34.1), an intermediate step is required",
    },
    {
      name: "a workers plan without workers",
      current: { controlPlaneVersion: "v1.30.0", desiredVersion: "v1.33.1" },
      controlPlane: fullPlan,
      given: ["v1.35.1"],
      message: "there are no workers, or they already run the desired version v1.33.1",
    },
    {
      name: "unordered build tags in a different order than the control plane's",
      current: { controlPlaneVersion: "v1.30.0+foo.1-bar.1", workersVersion: "v1.30.0+foo.1-bar.1", desiredVersion: "v1.32.1+foo.1-bar.1" },
      controlPlane: ["v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"],
      given: ["v1.31.1+foo.2-bar.1", "v1.31.1+foo.1-bar.1", "v1.32.1+foo.1-bar.1"],
      message: "item 1; version v1.31.1+foo.1-bar.1 must be before v1.31.1+foo.2-bar.1",
    },
  ])("rejects $name", ({ current, controlPlane, given, message }) => {
    expect(errorOf(() => defaultAndValidateUpgradePlans(current, controlPlane, given)).message).toContain(message);
    if (given.length > 0) {
      expect(validateWorkersPlan(current, controlPlane, given)).toContain(message);
    }
  });

  it("defaults the workers plan the same way on its own", () => {
    expect(defaultWorkersPlan({ controlPlaneVersion: "v1.29.0", workersVersion: "v1.29.0", desiredVersion: "v1.38.0" }, versions(30, 38))).toEqual([
      "v1.32.0",
      "v1.35.0",
      "v1.38.0",
    ]);
    expect(defaultWorkersPlan({ controlPlaneVersion: "v1.29.0", desiredVersion: "v1.30.0" }, ["v1.30.0"])).toEqual([]);
  });
});

describe("minimumWorkerRollouts", () => {
  it.each([
    ["v1.29.0", "v1.29.0", 0],
    ["v1.29.0", "v1.29.3", 1], // a patch-only change still rolls the workers once
    ["v1.29.0", "v1.30.0", 1],
    ["v1.29.0", "v1.32.0", 1],
    ["v1.29.0", "v1.33.0", 2],
    ["v1.29.0", "v1.35.0", 2],
    ["v1.29.0", "v1.36.0", 3],
    ["v1.29.0", "v1.38.0", 3],
  ])("%s → %s takes %i rollouts", (from, to, rollouts) => {
    expect(minimumWorkerRollouts(from, to)).toBe(rollouts);
  });

  it("refuses workers newer than the target, and names a version it cannot read", () => {
    const downgrade = errorOf(() => minimumWorkerRollouts("v1.31.0", "v1.30.0"));
    expect(downgrade.code).toBe("downgrade");
    expect(downgrade.message).toBe("cannot downgrade the workers from v1.31.0 to v1.30.0: Cluster API only upgrades");
    expect(errorOf(() => minimumWorkerRollouts("v1.31", "v1.32.0")).message).toContain('workers version "v1.31"');
    expect(errorOf(() => minimumWorkerRollouts("v1.31.0", "next")).message).toContain('desired (Cluster spec.topology.version) version "next"');
  });
});

// Ported from TestIsLowerThanMinVersion.
describe("minimumWorkersVersion", () => {
  it.each([
    { name: "equal", controlPlane: "v1.30.1", workerVersions: ["v1.30.1", "v1.30.1"], want: "v1.30.1" },
    { name: "lower", controlPlane: "v1.30.1", workerVersions: ["v1.30.1", "v1.29.0"], want: "v1.29.0" },
    { name: "lower pre-release", controlPlane: "v1.30.1-alpha.1", workerVersions: ["v1.30.1-alpha.1", "v1.30.1-alpha.0"], want: "v1.30.1-alpha.0" },
    { name: "unordered build tags: not the control plane's is lower", controlPlane: "v1.31.1+foo.2-bar.1", workerVersions: ["v1.31.1+foo.2-bar.1", "v1.31.1+foo.1-bar.1"], want: "v1.31.1+foo.1-bar.1" },
    // upgrade_plan.go, isLowerThanMinVersion: with unordered builds, the control plane's own build is never the lower.
    { name: "unordered build tags: the control plane's is not lower", controlPlane: "v1.31.1+k3s2", workerVersions: ["v1.31.1+k3s1", "v1.31.1+k3s2"], want: "v1.31.1+k3s1" },
    { name: "no versions set", controlPlane: "v1.31.1", workerVersions: ["", ""], want: undefined },
  ])("$name", ({ controlPlane, workerVersions, want }) => {
    expect(minimumWorkersVersion(workerVersions, controlPlane)).toBe(want);
  });
});

describe("validateKubernetesVersionsList", () => {
  it.each([
    { name: "one version", list: ["v1.33.0"] },
    { name: "several patches per minor", list: ["v1.28.0", "v1.29.0", "v1.30.0", "v1.30.1", "v1.31.2"] },
    { name: "unordered build tags of one patch", list: ["v1.31.1+k3s1", "v1.31.1+k3s2", "v1.32.0+k3s1"] },
    { name: "a hundred versions", list: Array.from({ length: 100 }, (_, i) => `v1.30.${i}`) },
  ])("accepts $name", ({ list }) => {
    expect(validateKubernetesVersionsList(list)).toBeUndefined();
  });

  it.each([
    { name: "an empty list", list: [], problem: "must list at least one version" },
    { name: "more than 100 versions", list: Array.from({ length: 101 }, (_, i) => `v1.30.${i}`), problem: "at most 100 are allowed" },
    { name: "an empty entry", list: ["v1.30.0", ""], problem: "spec.kubernetesVersions[1] (\"\") must be 1–256 characters long" },
    { name: "an invalid version", list: ["v1.30.0", "v1.31"], problem: "spec.kubernetesVersions[1] (\"v1.31\"): version must be a valid semantic version" },
    { name: "newest first", list: ["v1.31.0", "v1.30.0"], problem: "version must be greater than v1.31.0" },
    { name: "a duplicate", list: ["v1.30.0", "v1.30.0"], problem: "version must be greater than v1.30.0" },
    { name: "a missing minor", list: ["v1.30.0", "v1.32.0"], problem: "expecting a version with minor 30 or 31, found version v1.32.0; add a 1.31 release in between" },
  ])("rejects $name", ({ list, problem }) => {
    expect(validateKubernetesVersionsList(list)).toContain(problem);
  });

  it("reports every problem of a list, one after the other", () => {
    expect(validateKubernetesVersionsList(["v1.30.0", "", "v1.31"])?.split("; ")).toEqual([
      'spec.kubernetesVersions[1] ("") must be 1–256 characters long',
      'spec.kubernetesVersions[2] ("v1.31"): version must be a valid semantic version',
    ]);
  });

  // A list no other test validates: verdicts are cached by content, so a list judged earlier in
  // this file would be answered from the cache and this test would not run the code it checks.
  it("suggests a release in between only for a gap, not for a list in the wrong order", () => {
    expect(validateKubernetesVersionsList(["v1.33.0", "v1.31.0"])).toMatch(/expecting a version with minor 33 or 34, found version v1\.31\.0$/);
  });

  // The verdict is cached per array (the catalog's list is validated on every plan): an array
  // changed in place must be judged again.
  it("judges a list again after it changed in place", () => {
    const list = ["v1.30.0", "v1.31.0"];
    expect(validateKubernetesVersionsList(list)).toBeUndefined();
    list[1] = "v1.29.0";
    expect(validateKubernetesVersionsList(list)).toContain("must be greater than v1.30.0");
    list[1] = "v1.31.0";
    expect(validateKubernetesVersionsList(list)).toBeUndefined();
    list.push("v1.33.0");
    expect(validateKubernetesVersionsList(list)).toContain("add a 1.32 release in between");
  });
});

describe("upgrade plan errors name the version at fault", () => {
  it.each<{ input: UpgradePlanInput; names: string }>([
    { input: { desiredVersion: "next", controlPlaneVersion: "v1.30.0" }, names: 'desired (Cluster spec.topology.version) version "next"' },
    { input: { desiredVersion: "v1.31.0", controlPlaneVersion: "1.30" }, names: 'control-plane version "1.30"' },
    { input: { desiredVersion: "v1.31.0", controlPlaneVersion: "v1.30.0", workersVersion: "v1.30" }, names: 'workers version "v1.30"' },
  ])("names $names", ({ input, names }) => {
    expect(errorOf(() => computeUpgradePlan(input)).message).toContain(`${names} is not a valid semantic version`);
  });

  it("names a worker's version when picking the lowest, and the control plane's", () => {
    expect(errorOf(() => minimumWorkersVersion(["v1.30.0", "latest"], "v1.30.0")).message).toContain('worker version "latest"');
    expect(errorOf(() => minimumWorkersVersion(["v1.30.0"], "v1.30")).message).toContain('control-plane version "v1.30"');
  });

  it("lists every version a workers plan strays to, and every step a campaign never reaches", () => {
    const versions = { controlPlaneVersion: "v1.30.0", workersVersion: "v1.30.0", desiredVersion: "v1.32.0" };
    const strays = /versions (\S+) match neither/.exec(validateWorkersPlan(versions, ["v1.31.0", "v1.32.0"], ["v1.31.5", "v1.31.6", "v1.32.0"]) ?? "")?.[1];
    expect(strays?.split(",")).toEqual(["v1.31.5", "v1.31.6"]);
    const stranded = /steps (\S+) are never reached/.exec(
      errorOf(() => upgradeCampaign(versions, { controlPlaneUpgrades: ["v1.31.0", "v1.32.0"], workersUpgrades: ["v1.32.0", "v1.31.0", "v1.30.9"] })).message,
    )?.[1];
    expect(stranded?.split(",")).toEqual(["v1.31.0", "v1.30.9"]);
  });

  it("names the checked plan's versions with the same words", () => {
    const versions = { desiredVersion: "v1.31.0", controlPlaneVersion: "v1.30.0" };
    expect(errorOf(() => defaultAndValidateUpgradePlans({ ...versions, desiredVersion: "v1.31" }, ["v1.31"])).message).toContain("desired (Cluster spec.topology.version) version");
    expect(errorOf(() => defaultAndValidateUpgradePlans({ ...versions, controlPlaneVersion: "1.30" }, ["v1.31.0"])).message).toContain('control-plane version "1.30"');
    expect(errorOf(() => defaultAndValidateUpgradePlans({ ...versions, workersVersion: "x" }, ["v1.31.0"])).message).toContain('workers version "x"');
  });

  it("shows a one-version list as that version, a longer one as its range", () => {
    const notListed = (list: string[]) => errorOf(() => computeUpgradePlan({ desiredVersion: "v1.31.5", controlPlaneVersion: "v1.30.0", kubernetesVersions: list })).message;
    expect(notListed(["v1.30.0"])).toContain("spec.kubernetesVersions (v1.30.0);");
    expect(notListed(["v1.30.0", "v1.31.0"])).toContain("spec.kubernetesVersions (v1.30.0 … v1.31.0);");
  });

  it("adds the versions-list hint only to control-plane plan problems", () => {
    const lagging = errorOf(() =>
      computeUpgradePlan({ controlPlaneVersion: "v1.32.0", workersVersion: "v1.28.0", desiredVersion: "v1.33.0", kubernetesVersions: ["v1.32.0", "v1.33.0"] }),
    );
    expect(lagging.code).toBe("invalid-workers-plan");
    expect(lagging.message).not.toContain("plan taken from ClusterClass spec.kubernetesVersions");
  });

  it("says the control-plane version is unlisted only when it is", () => {
    // Unordered builds of one patch: the list's order makes k3s2 → k3s1 a step backwards.
    const listed = errorOf(() => computeUpgradePlan({ controlPlaneVersion: "v1.30.1+k3s2", desiredVersion: "v1.30.1+k3s1", kubernetesVersions: ["v1.30.1+k3s1", "v1.30.1+k3s2"] }));
    expect(listed.code).toBe("invalid-control-plane-plan");
    expect(listed.message).toMatch(/\(plan taken from ClusterClass spec\.kubernetesVersions: list a version for every minor from 1\.30 to 1\.30\)$/);
    const unlisted = errorOf(() => computeUpgradePlan({ controlPlaneVersion: "v1.31.0", desiredVersion: "v1.31.1", kubernetesVersions: ["v1.31.1"] }));
    expect(unlisted.message).toContain("the control-plane version v1.31.0 is not listed, add it");
  });
});

describe("upgradeCampaign", () => {
  it("refuses a workers step that no control-plane step reaches", () => {
    const error = errorOf(() =>
      upgradeCampaign({ controlPlaneVersion: "v1.30.0", desiredVersion: "v1.31.0" }, { controlPlaneUpgrades: ["v1.31.0"], workersUpgrades: ["v1.30.5"] }),
    );
    expect(error.message).toContain("steps v1.30.5 are never reached");
  });
});

/** A ClusterClass list without gaps, and a cluster somewhere along it (workers ≤ control plane ≤ desired, skew ≤ 3). */
const scenario = fc
  .record({
    firstMinor: fc.integer({ min: 20, max: 40 }),
    patchesPerMinor: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
    desiredPick: fc.nat(),
    controlPlanePick: fc.nat(),
    workersPick: fc.option(fc.nat(), { nil: undefined }),
    omitListWhenPossible: fc.boolean(),
  })
  .map(({ firstMinor, patchesPerMinor, desiredPick, controlPlanePick, workersPick, omitListWhenPossible }): UpgradePlanInput => {
    const list = patchesPerMinor.flatMap((patches, i) => [...patches].sort((a, b) => a - b).map((p) => `v1.${firstMinor + i}.${p}`));
    const desiredIndex = desiredPick % list.length;
    const controlPlaneIndex = controlPlanePick % (desiredIndex + 1);
    const desiredVersion = list[desiredIndex]!;
    const controlPlaneVersion = list[controlPlaneIndex]!;
    const workerCandidates = list.slice(0, controlPlaneIndex + 1).filter((v) => minor(controlPlaneVersion) - minor(v) <= 3);
    const workersVersion = workersPick === undefined ? undefined : workerCandidates[workersPick % workerCandidates.length];
    // Without a list CAPI only moves one minor, so drop the list only where that suffices.
    const listNeeded = minor(desiredVersion) - minor(controlPlaneVersion) > 1;
    return { controlPlaneVersion, workersVersion, desiredVersion, kubernetesVersions: omitListWhenPossible && !listNeeded ? undefined : list };
  });

const properties = { numRuns: 1000 };

describe("upgrade plan properties", () => {
  it("never lets the control plane skip a minor", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        let current = input.controlPlaneVersion;
        for (const step of computeUpgradePlan(input).controlPlaneUpgrades) {
          expect(compare(step, current)).toBe(1);
          expect(minor(step) - minor(current)).toBeLessThanOrEqual(1);
          current = step;
        }
      }),
      properties,
    );
  });

  it("keeps workers at or below the control plane and at most 3 minors behind it, step by step", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        let controlPlane = input.controlPlaneVersion;
        let workerVersion = input.workersVersion;
        for (const step of upgradeCampaign(input, computeUpgradePlan(input))) {
          if (step.component === "control-plane") {
            controlPlane = step.version;
          } else {
            workerVersion = step.version;
          }
          if (workerVersion !== undefined) {
            expect(compare(workerVersion, controlPlane)).toBeLessThanOrEqual(0);
            expect(minor(controlPlane) - minor(workerVersion)).toBeLessThanOrEqual(3);
          }
        }
      }),
      properties,
    );
  });

  it("ends with the control plane and the workers at the target", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        const plan = computeUpgradePlan(input);
        if (input.controlPlaneVersion !== input.desiredVersion) {
          expect(plan.controlPlaneUpgrades.at(-1)).toBe(input.desiredVersion);
        } else {
          expect(plan.controlPlaneUpgrades).toEqual([]);
        }
        if (input.workersVersion !== undefined && input.workersVersion !== input.desiredVersion) {
          expect(plan.workersUpgrades.at(-1)).toBe(input.desiredVersion);
        } else {
          expect(plan.workersUpgrades).toEqual([]);
        }
      }),
      properties,
    );
  });

  it("rolls the workers out ceil(minors / 3) times (once for a patch-only change)", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        const rollouts = upgradeCampaign(input, computeUpgradePlan(input)).filter((step) => step.component === "workers").length;
        if (input.workersVersion === undefined) {
          expect(rollouts).toBe(0);
          return;
        }
        expect(rollouts).toBe(minimumWorkerRollouts(input.workersVersion, input.desiredVersion));
        const minors = minor(input.desiredVersion) - minor(input.workersVersion);
        if (minors > 0) {
          expect(rollouts).toBe(Math.ceil(minors / 3));
        }
      }),
      properties,
    );
  });

  it("accepts every default workers plan as a custom one", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        const plan = computeUpgradePlan(input);
        expect(validateWorkersPlan(input, plan.controlPlaneUpgrades, plan.workersUpgrades)).toBeUndefined();
      }),
      properties,
    );
  });

  it("rejects a default workers plan whose final step was dropped (negative control)", () => {
    const withWorkersBehind = scenario.filter((input) => input.workersVersion !== undefined && input.workersVersion !== input.desiredVersion);
    fc.assert(
      fc.property(withWorkersBehind, (input) => {
        const plan = computeUpgradePlan(input);
        expect(validateWorkersPlan(input, plan.controlPlaneUpgrades, plan.workersUpgrades.slice(0, -1))).toContain("must end with version");
      }),
      properties,
    );
  });

  it("rejects a workers step 4 or more minors ahead (negative control)", () => {
    // Workers and control plane together at 1.m, target at least 4 minors later, workers asked to jump straight there.
    const farTarget = fc.record({ from: fc.integer({ min: 20, max: 40 }), span: fc.integer({ min: 4, max: 10 }), patch: fc.integer({ min: 0, max: 9 }) });
    fc.assert(
      fc.property(farTarget, ({ from, span, patch: p }) => {
        const input = { controlPlaneVersion: `v1.${from}.0`, workersVersion: `v1.${from}.0`, desiredVersion: `v1.${from + span}.${p}` };
        const controlPlane = [...versions(from + 1, from + span - 1), input.desiredVersion];
        expect(validateWorkersPlan(input, controlPlane, [input.desiredVersion])).toContain(
          `workers cannot go from minor ${from} (v1.${from}.0) to minor ${from + span}`,
        );
        expect(validateWorkersPlan(input, controlPlane, defaultWorkersPlan(input, controlPlane))).toBeUndefined();
      }),
      properties,
    );
  });

  it("rejects a workers step the control plane never runs (negative control)", () => {
    const withWorkersBehind = scenario.filter((input) => input.workersVersion !== undefined && input.workersVersion !== input.desiredVersion);
    fc.assert(
      fc.property(withWorkersBehind, (input) => {
        const plan = computeUpgradePlan(input);
        fc.pre(plan.controlPlaneUpgrades.length > 0);
        const stray = `v1.${minor(input.desiredVersion)}.99`;
        expect(validateWorkersPlan(input, plan.controlPlaneUpgrades, [...plan.workersUpgrades.slice(0, -1), stray])).toContain(
          `versions ${stray} match neither`,
        );
      }),
      properties,
    );
  });
});

// CAPI's version.Compare(a, b, WithBuildTags()), which orders ClusterClass spec.kubernetesVersions:
// the cases of sigs.k8s.io/cluster-api@v1.12.10: util/version/version_test.go (TestCompare), observed
// through the list rule "each version greater than the one before" (internal/webhooks/clusterclass.go).
// 2 = different but unorderable (two non-numeric build identifiers): the webhook lets list order decide.
describe("build identifiers order the ClusterClass list as CAPI's version.Compare does", () => {
  it.each<[string, string, -1 | 0 | 1 | 2]>([
    ["1.2.3+xyz.1", "1.2.3+xyz.2", -1],
    ["v1.20.1-alpha.1+xyz.1", "v1.20.1-alpha.1+xyz.2", -1],
    ["v1.20.1+xyz.1", "v1.20.1+xyz.2", -1],
    ["v1.20.1+xyz.1", "v1.20.1+xyz.1", 0],
    ["v1.20.1+xyz.3", "v1.20.1+xyz.2", 1],
    ["v1.20.1+xyz.1.0", "v1.20.1+xyz.1.1", -1],
    ["v1.20.1+xyz.1.1", "v1.20.1+xyz.2", -1],
    ["v1.20.1+xyz.1.1", "v1.20.1+xyz.1", 1],
    ["v1.20.1+xyz.a", "v1.20.1+xyz.b", 2],
    ["v1.20.1+xyz.a", "v1.20.1+xyz.a", 0],
    ["v1.20.1+xyz.1", "v1.20.1+xyz.abc", -1],
    // beyond upstream's table: numbers compare as numbers, of any size
    ["v1.20.1+9", "v1.20.1+10", -1],
    ["v1.20.1+99999999999999999999", "v1.20.1+100000000000000000000", -1],
  ])("%s vs %s: %i", (a, b, want) => {
    const refusedAfter = (first: string, second: string) => /must be greater than/.test(validateKubernetesVersionsList([first, second]) ?? "");
    // [a, b] is refused when b is not greater than a; [b, a] when a is not greater than b.
    expect([refusedAfter(a, b), refusedAfter(b, a)]).toEqual(
      want === -1 ? [false, true] : want === 1 ? [true, false] : want === 0 ? [true, true] : [false, false],
    );
  });

  it("names the previous version with its build metadata as written", () => {
    expect(validateKubernetesVersionsList(["v1.30.0+foo.1", "v1.30.0+foo.1"])).toContain("must be greater than v1.30.0+foo.1;");
  });

  it("treats another build of the same patch as another version: the control plane moves to it", () => {
    const list = ["v1.30.0+foo.1", "v1.30.0+foo1"];
    expect(computeUpgradePlan({ controlPlaneVersion: list[0]!, desiredVersion: list[1]!, kubernetesVersions: list }).controlPlaneUpgrades).toEqual([list[1]]);
  });
});

describe("UpgradePlanError", () => {
  it("carries its class's name, so a log line says which error it is", () => {
    const error = errorOf(() => computeUpgradePlan({ controlPlaneVersion: "v1.30.0", desiredVersion: "latest" }));
    expect(error.name).toBe(UpgradePlanError.name);
    expect(String(error).startsWith(`${UpgradePlanError.name}: `)).toBe(true);
  });
});
