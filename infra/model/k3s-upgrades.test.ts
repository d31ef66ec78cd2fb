import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { moduleDir } from "../../tests/cluster-class-topology";
import { catalog } from "./catalog";
import { deployedK3sVersionFrom, k3sServerPlan, k3sUpgradeProblem, systemUpgradeControllerManifestUrl } from "./k3s-upgrades";

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
    // Whatever runs, asking for it again changes nothing (the target's own check reports a bad value).
    expect(k3sUpgradeProblem("v1.34.6", "v1.34.6")).toBeUndefined();
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

// Kubernetes' toleration rules, ported: k8s.io/api@v0.35.4: core/v1/toleration.go `ToleratesTaint`
// (an empty effect or key matches any; "" and Equal compare values; Exists matches any value), and
// the API server's validation (k8s.io/kubernetes: pkg/apis/core/validation `ValidateTolerations`:
// an empty key needs operator Exists; Exists takes no value). SUC copies the Plan's tolerations
// into the upgrade job's pod (rancher/system-upgrade-controller: pkg/upgrade/job/job.go).
type Toleration = { key?: string; operator?: string; value?: string; effect?: string };
type Taint = { key: string; value?: string; effect: string };
const tolerates = (t: Toleration, taint: Taint): boolean =>
  (!t.effect || t.effect === taint.effect) &&
  (!t.key || t.key === taint.key) &&
  (t.operator === "Exists" ? true : (t.operator ?? "") === "" || t.operator === "Equal" ? (t.value ?? "") === (taint.value ?? "") : false);
const tolerationProblem = (t: Toleration): string | undefined =>
  !t.key && t.operator !== "Exists" ? "an empty key needs operator Exists" : t.operator === "Exists" && t.value ? "Exists takes no value" : undefined;

describe("k3sServerPlan's tolerations", () => {
  const tolerations = (k3sServerPlan("v1.34.6+k3s1").spec as { tolerations: Toleration[] }).tolerations;
  const toleratedBy = (taint: Taint) => tolerations.some((t) => tolerates(t, taint));

  it("are valid for the API server", () => {
    expect(tolerations.map(tolerationProblem).filter(Boolean)).toEqual([]);
  });

  it("let the upgrade job onto servers with the taints dedicated k3s servers carry, whatever their value", () => {
    // docs.k3s.io (datastore/ha-embedded, dedicated server nodes): --node-taint CriticalAddonsOnly=true:NoExecute;
    // the control-plane role taint as kubeadm sets it (no value) or with k3s' role label value "true".
    for (const taint of [
      { key: "CriticalAddonsOnly", value: "true", effect: "NoExecute" },
      { key: "CriticalAddonsOnly", effect: "NoSchedule" },
      { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" },
      { key: "node-role.kubernetes.io/control-plane", value: "true", effect: "NoSchedule" },
    ]) {
      expect(toleratedBy(taint), JSON.stringify(taint)).toBe(true);
    }
  });

  it("do not tolerate other taints (a node not ready, under pressure, or reserved for something else)", () => {
    for (const taint of [
      { key: "node.kubernetes.io/not-ready", effect: "NoExecute" },
      { key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule" },
      { key: "example.com/dedicated", value: "gpu", effect: "NoSchedule" },
    ]) {
      expect(toleratedBy(taint), JSON.stringify(taint)).toBe(false);
    }
  });
});

describe("systemUpgradeControllerManifestUrl", () => {
  // rancher/system-upgrade-controller@v0.20.1: scripts/package-controller writes the manifest
  // into dist/artifacts/, and .github/workflows/release.yml uploads dist/artifacts/* to the
  // release of the tag; GitHub serves a release asset at /<owner>/<repo>/releases/download/<tag>/<name>.
  it("names the asset SUC's release job uploads, in the module's repository, at the pinned tag", () => {
    // The proxy serves the module at the pinned tag (only its version list answers 403).
    const module = "github.com/rancher/system-upgrade-controller";
    const version = catalog.systemUpgradeController.version;
    const dir = moduleDir(module, version);
    const packaging = readFileSync(path.join(dir, "scripts", "package-controller"), "utf8");
    const asset = /kustomize build --output \.\/dist\/artifacts\/(\S+)/.exec(packaging)?.[1];
    expect(readFileSync(path.join(dir, ".github", "workflows", "release.yml"), "utf8")).toMatch(/gh release upload .* dist\/artifacts\/\*/);
    expect(asset).toBeDefined();
    expect(systemUpgradeControllerManifestUrl()).toBe(`https://${module}/releases/download/${version}/${asset}`);
    expect(systemUpgradeControllerManifestUrl("v0.99.0")).toBe(`https://${module}/releases/download/v0.99.0/${asset}`);
  }, 11 * 60_000);
});
