import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { moduleDir } from "../../../tests/support/cluster-class-topology";
import { catalog } from "../versions/catalog";
import { deployedK3sVersionFrom, k3sServerPlan, k3sUpgradeAllowanceSeconds, k3sUpgradeProblem, systemUpgrade, systemUpgradeControllerManifestUrl } from "./k3s-upgrades";

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
  // Built inside each test, so per-test coverage (the mutation gate) attributes the Plan to it.
  const tolerations = () => (k3sServerPlan("v1.34.6+k3s1").spec as { tolerations: Toleration[] }).tolerations;
  const toleratedBy = (taint: Taint) => tolerations().some((t) => tolerates(t, taint));

  it("are valid for the API server", () => {
    expect(tolerations().map(tolerationProblem).filter(Boolean)).toEqual([]);
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

// Label selection, ported: k8s.io/apimachinery@v0.35.4: pkg/labels/selector.go (`In`: the label
// exists and its value is listed). k3s labels every server node-role.kubernetes.io/control-plane=true
// and gives agents no role label (k3s-io/k3s: pkg/server/server.go, setNodeLabelsAndAnnotations).
type Requirement = { key: string; operator: string; values: string[] };
const selects = (requirements: Requirement[], labels: Record<string, string>) =>
  requirements.every((r) => r.operator === "In" && r.key in labels && r.values.includes(labels[r.key]!));

describe("k3sServerPlan's targets", () => {
  const plan = () => k3sServerPlan("v1.34.6+k3s1") as { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> };

  it("is the Plan the controller the installer deploys watches, upgrading with the k3s-upgrade image", () => {
    const { apiVersion, kind, metadata, spec } = plan();
    expect({ apiVersion, kind, metadata }).toEqual({ apiVersion: systemUpgrade.apiVersion, kind: "Plan", metadata: { name: systemUpgrade.serverPlanName, namespace: systemUpgrade.namespace } });
    expect(spec["upgrade"]).toEqual({ image: systemUpgrade.k3sUpgradeImage });
    expect(spec["serviceAccountName"]).toBe(systemUpgrade.serviceAccount);
  });

  it("selects every k3s server and nothing else", () => {
    const { matchExpressions } = plan().spec["nodeSelector"] as { matchExpressions: Requirement[] };
    expect(selects(matchExpressions, { "node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/master": "true" })).toBe(true);
    expect(selects(matchExpressions, {})).toBe(false);
    expect(selects(matchExpressions, { "node-role.kubernetes.io/control-plane": "false" })).toBe(false);
  });

  it("cordons and drains each server first, as `kubectl drain` must to finish on a k3s server (DaemonSet pods stay, emptyDir pods go)", () => {
    const { cordon, drain } = plan().spec as { cordon: boolean; drain: { ignoreDaemonSets: boolean; deleteEmptydirData: boolean } };
    // Without these two flags kubectl drain refuses nodes with DaemonSet or emptyDir pods
    // (k8s.io/kubectl: pkg/drain/filters.go, daemonSetFilter and localStorageFilter), and every
    // k3s server runs DaemonSet pods (svclb, the CCM's) and metrics-server with an emptyDir.
    expect({ cordon, ignoreDaemonSets: drain.ignoreDaemonSets, deleteEmptydirData: drain.deleteEmptydirData }).toEqual({ cordon: true, ignoreDaemonSets: true, deleteEmptydirData: true });
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

// How long SUC lets one server's upgrade job run, read from rancher/system-upgrade-controller at
// the catalog's version: pkg/upgrade/job/job.go (New) runs the drain as an init container of the
// same Job as the upgrade container, so the Job's activeDeadlineSeconds covers both. The deadline
// is the Plan's jobActiveDeadlineSecs when > 0, none when 0, else the controller's
// SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS (set by the release manifest's ConfigMap, else the Go
// default), and never above SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS_MAX when that is > 0.
describe("k3sServerPlan's job deadline", () => {
  const dir = () => moduleDir("github.com/rancher/system-upgrade-controller", catalog.systemUpgradeController.version);

  /** job.go's env-or-default reader of one setting: the env name and the Go default. */
  function envSetting(jobGo: string, variable: string): { env: string; fallback: number } {
    const block = new RegExp(`\\n\\t${variable} = func\\(defaultValue int64\\) int64 \\{([\\s\\S]*?)\\n\\t\\}\\(([^)]*)\\)`).exec(jobGo);
    const env = /os\.LookupEnv\("(\w+)"\)/.exec(block?.[1] ?? "")?.[1];
    const argument = block?.[2]?.replace(/\/\*.*?\*\//g, "").trim() ?? "";
    const constant = new RegExp(`\\b${argument}\\s*=\\s*int64\\((\\d+)\\)`).exec(jobGo)?.[1];
    const fallback = Number(/^\d+$/.test(argument) ? argument : constant);
    if (!env || Number.isNaN(fallback)) throw new Error(`job.go: cannot read ${variable}`);
    return { env, fallback };
  }

  /** The controller's environment from the release manifest: the ConfigMaps its Deployment loads with envFrom. */
  function controllerEnv(): Record<string, string> {
    type Document = {
      kind?: string;
      metadata?: { name?: string };
      data?: Record<string, string>;
      spec?: { template?: { spec?: { containers?: { envFrom?: { configMapRef?: { name: string } }[] }[] } } };
    };
    const kustomization = parse(readFileSync(path.join(dir(), "kustomization.yaml"), "utf8")) as { resources: string[] };
    const documents = kustomization.resources.flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(dir(), file), "utf8")).map((document) => document.toJS() as Document),
    );
    const deployment = documents.find((d) => d.kind === "Deployment" && d.metadata?.name === "system-upgrade-controller");
    const names = (deployment?.spec?.template?.spec?.containers?.[0]?.envFrom ?? []).map((from) => from.configMapRef?.name);
    expect(names.length, "the controller loads no ConfigMap").toBeGreaterThan(0);
    const configMaps = documents.filter((d) => d.kind === "ConfigMap" && names.includes(d.metadata?.name));
    return Object.assign({}, ...configMaps.map((d) => d.data ?? {})) as Record<string, string>;
  }

  /** Go's time.ParseDuration for what a drain timeout can hold (a string, or nanoseconds as a number), in seconds. */
  function durationSeconds(value: unknown): number {
    if (typeof value === "number") return value / 1e9;
    const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3 };
    const parts = [...String(value).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join("") !== value) throw new Error(`not a duration: ${String(value)}`);
    return parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit!]!, 0);
  }

  /** The deadline SUC gives the Job of a Plan (job.go, New), in seconds; undefined: none. */
  function jobDeadline(planDeadline: number | undefined): number | undefined {
    const jobGo = readFileSync(path.join(dir(), "pkg", "upgrade", "job", "job.go"), "utf8");
    // The precedence below is job.go's; fail if upstream rewrites it.
    expect(jobGo).toContain("} else if *plan.Spec.JobActiveDeadlineSecs > 0 {\n\t\t\t// > 0 means value as set\n\t\t\tjob.Spec.ActiveDeadlineSeconds = plan.Spec.JobActiveDeadlineSecs");
    expect(jobGo).toMatch(/if ActiveDeadlineSecondsMax > 0 && \*job\.Spec\.ActiveDeadlineSeconds > ActiveDeadlineSecondsMax \{/);
    const env = controllerEnv();
    const value = ({ env: name, fallback }: { env: string; fallback: number }) => (env[name] === undefined ? fallback : Number(env[name]));
    const controllerDefault = value(envSetting(jobGo, "ActiveDeadlineSeconds"));
    const max = value(envSetting(jobGo, "ActiveDeadlineSecondsMax"));
    const deadline = planDeadline === undefined || planDeadline < 0 ? controllerDefault : planDeadline > 0 ? planDeadline : undefined;
    if (max <= 0) return deadline;
    return deadline === undefined ? max : Math.min(deadline, max);
  }

  it("counts the drain against the same Job as the upgrade (an init container of it)", () => {
    const jobGo = readFileSync(path.join(dir(), "pkg", "upgrade", "job", "job.go"), "utf8");
    expect(jobGo).toContain("podTemplate.Spec.InitContainers = append(podTemplate.Spec.InitContainers, drainContainer)");
    expect(jobGo).toMatch(/podTemplate\.Spec\.Containers = \[\]corev1\.Container\{\s*upgradectr\.New\("upgrade"/);
  });

  it("leaves the upgrade its allowance after a drain that runs to its timeout", () => {
    const spec = k3sServerPlan(catalog.k3s.version).spec as { jobActiveDeadlineSecs?: number; drain: { timeout: unknown } };
    const deadline = jobDeadline(spec.jobActiveDeadlineSecs);
    const drain = durationSeconds(spec.drain.timeout);
    expect(deadline, "the Job has no deadline").toBeDefined();
    expect(deadline! - drain, `job deadline ${deadline} s, drain timeout ${drain} s`).toBeGreaterThanOrEqual(k3sUpgradeAllowanceSeconds);
    expect(k3sUpgradeAllowanceSeconds).toBeGreaterThan(0);
  });

  it("sets the deadline through a Plan field SUC's CRD declares as an integer", () => {
    const crd = parse(readFileSync(path.join(dir(), "pkg", "crds", "yaml", "generated", "upgrade.cattle.io_plans.yaml"), "utf8")) as {
      spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, { type?: string }> } } } } }[] };
    };
    const field = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.jobActiveDeadlineSecs;
    expect(field?.type).toBe("integer");
    expect(Number.isInteger((k3sServerPlan(catalog.k3s.version).spec as { jobActiveDeadlineSecs?: unknown }).jobActiveDeadlineSecs)).toBe(true);
  });

  it("reads the controller's settings as SUC does (negative controls)", () => {
    // The release manifest's ConfigMap overrides job.go's constant; a Plan's own value wins; 0 means none.
    const jobGo = readFileSync(path.join(dir(), "pkg", "upgrade", "job", "job.go"), "utf8");
    const { env, fallback } = envSetting(jobGo, "ActiveDeadlineSeconds");
    expect(env).toBe("SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS");
    expect(fallback).toBeGreaterThan(0);
    expect(jobDeadline(undefined)).toBe(Number(controllerEnv()[env] ?? fallback));
    expect(jobDeadline(-1)).toBe(jobDeadline(undefined));
    expect(jobDeadline(12_345)).toBe(12_345);
    expect(jobDeadline(0)).toBeUndefined();
    expect(durationSeconds("1h2m3.5s")).toBe(3723.5);
    expect(durationSeconds(90e9)).toBe(90);
    expect(() => durationSeconds("15 minutes")).toThrow();
  });
});
