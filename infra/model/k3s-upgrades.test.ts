import fc from "fast-check";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { deployedK3sVersionFrom, k3sUpgradeProblem } from "./k3s-upgrades";

// The rule (docs.k3s.io/upgrades/manual): k3s upgrades one minor at a time and is never
// downgraded in place; a release is vMAJOR.MINOR.PATCH+k3sN, newer N = newer build of that patch.

const release = fc.record({
  minor: fc.integer({ min: 28, max: 40 }),
  patch: fc.integer({ min: 0, max: 12 }),
  revision: fc.integer({ min: 1, max: 12 }),
});
type Release = { minor: number; patch: number; revision: number };
const text = (r: Release) => `v1.${r.minor}.${r.patch}+k3s${r.revision}`;

/** The order of two releases: semver for the version (it ignores build metadata), then the k3s revision as a number. */
function order(a: Release, b: Release): number {
  return semver.compare(`1.${a.minor}.${a.patch}`, `1.${b.minor}.${b.patch}`) || Math.sign(a.revision - b.revision);
}

describe("k3sUpgradeProblem", () => {
  it("allows exactly the upgrades that move forward by at most one minor", () => {
    fc.assert(
      fc.property(release, release, (from, to) => {
        const problem = k3sUpgradeProblem(text(from), text(to));
        const allowed = order(to, from) >= 0 && to.minor - from.minor <= 1;
        expect(problem === undefined, `${text(from)} → ${text(to)}: ${problem}`).toBe(allowed);
        if (order(to, from) < 0) expect(problem).toContain("downgrade");
      }),
      { numRuns: 500 },
    );
  });

  it("orders k3s revisions as numbers: +k3s10 is newer than +k3s9", () => {
    expect(k3sUpgradeProblem("v1.34.6+k3s9", "v1.34.6+k3s10")).toBeUndefined();
    expect(k3sUpgradeProblem("v1.34.6+k3s10", "v1.34.6+k3s9")).toContain("downgrade");
  });

  it("counts the minors a skip leaves out and names the one to set first", () => {
    fc.assert(
      fc.property(release, fc.integer({ min: 2, max: 8 }), (from, span) => {
        const to = { ...from, minor: from.minor + span };
        const problem = k3sUpgradeProblem(text(from), text(to)) ?? "";
        const skipped = span - 1;
        expect(problem).toContain(`skips ${skipped} minor${skipped === 1 ? "" : "s"};`);
        expect(problem).toContain(`set v1.${from.minor + 1}.x first`);
      }),
    );
  });

  it("refuses a new major as a skip, not as an allowed step", () => {
    expect(k3sUpgradeProblem("v1.34.6+k3s1", "v2.0.0+k3s1")).toContain("set v1.35.x first");
    expect(k3sUpgradeProblem("v2.0.0+k3s1", "v1.40.0+k3s1")).toContain("downgrade");
  });

  it("has nothing to say before the first deployment, for the running version, or for a target the config check reports", () => {
    expect(k3sUpgradeProblem(undefined, "v1.34.6+k3s1")).toBeUndefined();
    expect(k3sUpgradeProblem("v1.34.6+k3s1", "v1.34.6+k3s1")).toBeUndefined();
    expect(k3sUpgradeProblem("v1.30.0+k3s1", "latest")).toBeUndefined();
  });

  it("refuses a deployed version that is not a k3s release, naming it", () => {
    for (const deployed of ["v1.34.6", "latest", ""]) {
      expect(k3sUpgradeProblem(deployed, "v1.34.6+k3s1"), deployed).toContain(JSON.stringify(deployed));
    }
  });
});

describe("deployedK3sVersionFrom", () => {
  it("reads a k3s release back; reports anything else as ignored; nothing is not ignored", () => {
    expect(deployedK3sVersionFrom("v1.34.6+k3s1")).toEqual({ version: "v1.34.6+k3s1", ignored: false });
    expect(deployedK3sVersionFrom(undefined)).toEqual({ version: undefined, ignored: false });
    expect(deployedK3sVersionFrom(null)).toEqual({ version: undefined, ignored: false });
    for (const output of ["v1.34.6", 1.34, { version: "v1.34.6+k3s1" }, ""]) {
      expect(deployedK3sVersionFrom(output), JSON.stringify(output)).toEqual({ version: undefined, ignored: true });
    }
  });
});
