import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Script } from "node:vm";
import semver from "semver";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { catalog } from "../infra/model/versions/catalog";
import { validateKubernetesVersionsList } from "../infra/model/versions/upgrade-plan";
import { configKeys } from "../infra/model/config/stack-config";
import { parseFleetConfig } from "../infra/model/stack/validate-fleet-config";
import { generatedDeployedVersions, generatedStackConfig, generatedTenants, tenantsPerRoutingDomain } from "./benchmarks/fleet-generator";
import { measurePlanner, onePerMinorRollouts, randomTriples, syntheticKubernetesVersions, workerRolloutsLowerBound } from "./benchmarks/planner";
import { choosePreview, generatedStackFile, parseExports, parseToolchainPins, policyReport, programPlugins } from "./benchmarks/preview";
import { parsePolicyViolations, policyShare, standInPlan, standInProgramFile } from "./benchmarks/stand-in";
import { benchExitCode, checkTargets, formatTable, gibibyte, median } from "./benchmarks/stats";
import { buildGoProgram } from "../tests/support/go-programs";
import { fakeHcloudToken, readStackConfig, repoRoot } from "../tests/support/stack-files";
import { componentTypes } from "../infra/model/contract/component-types";

// The pure parts of `npm run bench` (tools/bench.ts); the benchmark itself is not a test.

const validated = (tenants: number) => {
  const { values, secretKeys } = generatedStackConfig(readStackConfig("prod"), tenants, fakeHcloudToken);
  return parseFleetConfig({ stack: "bench", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: false });
};

describe("generated fleets", () => {
  it("pass the real validation, two worker pools per tenant, tokens secret", () => {
    const config = validated(3);
    expect(config.tenants.map((tenant) => tenant.name)).toEqual(["tenant-0000", "tenant-0001", "tenant-0002"]);
    expect(config.tenants.every((tenant) => tenant.workers.length === 2)).toBe(true);
    expect(config.management.mode).toBe("hetzner");
  });

  it("stay valid across routing domains, where ranges repeat", () => {
    const config = validated(tenantsPerRoutingDomain * 2 + 1);
    expect(new Set(config.tenants.map((tenant) => tenant.network.routingDomain)).size).toBe(3);
    expect(config.tenants[0]!.network.nodesCidr).toBe(config.tenants[tenantsPerRoutingDomain]!.network.nodesCidr);
  });

  it("deploy an older catalog version to some tenants, so upgrades get planned", () => {
    const deployed = generatedDeployedVersions(12);
    const tenants = generatedTenants(12);
    expect(Object.keys(deployed).length).toBeGreaterThan(0);
    for (const [name, version] of Object.entries(deployed)) {
      const target = tenants.find((tenant) => tenant.name === name)!.kubernetesVersion;
      const versions: readonly string[] = catalog.tenantKubernetesVersions;
      expect(versions.indexOf(version)).toBe(versions.indexOf(target) - 1);
    }
  });

  it("become a stack file that reuses prod's salt and encrypted placeholder for every tenant", () => {
    const prod = readFileSync(path.join(repoRoot, "stacks", "Pulumi.prod.yaml"), "utf8");
    const file = parse(generatedStackFile(prod, 4)) as { encryptionsalt: string; config: Record<string, unknown> };
    const original = parse(prod) as { encryptionsalt: string; config: Record<string, Record<string, { secure: string }>> };
    expect(file.encryptionsalt).toBe(original.encryptionsalt);
    const tokens = file.config[configKeys.tenantHcloudTokens] as Record<string, { secure: string }>;
    expect(Object.keys(tokens)).toHaveLength(4);
    expect(Object.values(tokens).every((token) => token.secure === Object.values(original.config[configKeys.tenantHcloudTokens]!)[0]!.secure)).toBe(true);
    expect(file.config[configKeys.hcloudToken]).toEqual(original.config[configKeys.hcloudToken]);
  });
});

describe("bench arithmetic", () => {
  it("takes medians of odd and even sample counts", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("checks the bench's targets, and says which were not run", () => {
    const checks = checkTargets({
      registrationMs: new Map([[100, 2000], [500, 9000]]),
      peakHeapBytes: new Map([[500, gibibyte + 1]]),
      policyMsPerResource: new Map([[1, 0.2], [500, 0.05]]),
      plansPerSecond: 150_000,
      rolloutMisses: 0,
      previewPolicyShare: undefined,
    });
    const byName = Object.fromEntries(checks.map((check) => [check.name, check]));
    expect(byName["registration time(500) / time(100)"]).toMatchObject({ measured: "4.50", status: "pass" });
    expect(byName["registration time, 500 tenants"]?.status).toBe("pass");
    expect(byName["peak heap, 500 tenants"]?.status).toBe("FAIL");
    expect(byName["policy time per resource (worst fleet size)"]).toMatchObject({ measured: "0.200 ms", status: "pass" });
    expect(byName["policy share of preview time (worst)"]?.status).toBe("not run");
    expect(byName["planner throughput"]?.status).toBe("pass");
    expect(checkTargets({ ...emptyInputs, registrationMs: new Map([[100, 1000], [500, 6500]]) })[0]?.status).toBe("FAIL");
  });

  it("pads tables, numbers to the right", () => {
    expect(formatTable(["name", "time"], [["a", "1.5 s"], ["long", "10.25 s"]]).split("\n")).toEqual(["name  time", "----  -------", "a       1.5 s", "long  10.25 s"]);
  });
});

const emptyInputs = { registrationMs: new Map(), peakHeapBytes: new Map(), policyMsPerResource: new Map(), plansPerSecond: undefined, rolloutMisses: undefined, previewPolicyShare: undefined };

describe("planner bench", () => {
  const versions = syntheticKubernetesVersions();

  it("lists a valid ClusterClass kubernetesVersions around the catalog's minors", () => {
    expect(validateKubernetesVersionsList(versions)).toBeUndefined();
    expect(versions.length).toBeLessThanOrEqual(100);
    expect(versions).toEqual(expect.arrayContaining([...catalog.tenantKubernetesVersions]));
  });

  it("draws the same triples for a seed, and in-rule triples plan at the lower bound", () => {
    expect(randomTriples(versions, 50)).toEqual(randomTriples(versions, 50));
    const result = measurePlanner(versions, randomTriples(versions, 400));
    expect(result.unexpectedErrors).toBe(0);
    expect(result.planned).toBeGreaterThan(300);
    expect(result.rollouts.atLowerBound).toBe(result.planned);
    expect(result.rollouts.onePerMinor).toBeGreaterThan(result.rollouts.lowerBound);
  });

  it("takes its lower bound of worker rollouts from Cluster API's own planner: CAPI's default plan has that many, and CAPI refuses every shorter plan", () => {
    // tests/go/capi-upgrade-plan: sigs.k8s.io/cluster-api@v1.12.10 exp/topology/desiredstate/upgrade_plan.go.
    const capi = buildGoProgram("capi-upgrade-plan").binary;
    const ask = (requests: readonly object[]): { controlPlanePlan: string[] | null; workersPlan: string[] | null; error?: string }[] => {
      const result = spawnSync(capi, [], { input: requests.map((r) => JSON.stringify(r)).join("\n") + "\n", encoding: "utf8", timeout: 60_000 });
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines, result.stderr).toHaveLength(requests.length);
      return lines.map((line) => JSON.parse(line) as { controlPlanePlan: string[] | null; workersPlan: string[] | null; error?: string });
    };
    const triples = randomTriples(versions, 600, 21).filter((triple) => triple.valid);
    const plans = ask(triples.map((t) => ({ op: "compute", desired: t.desiredVersion, controlPlane: t.controlPlaneVersion, workers: [t.workersVersion], kubernetesVersions: versions })));
    const shorter: { triple: (typeof triples)[number]; controlPlanePlan: string[]; workersPlan: string[] }[] = [];
    triples.forEach((triple, i) => {
      const plan = plans[i]!;
      const bound = workerRolloutsLowerBound(triple.workersVersion, triple.desiredVersion);
      expect(plan.error, JSON.stringify(triple)).toBeUndefined();
      expect(plan.workersPlan ?? [], JSON.stringify({ triple, bound })).toHaveLength(bound);
      // Workers may only step to the control plane's version or a step of its plan: every such plan
      // that moves forward and ends at the target with fewer rollouts than the bound.
      const steps = [triple.controlPlaneVersion, ...(plan.controlPlanePlan ?? [])].filter((v) => semver.gt(v, triple.workersVersion) && v !== triple.desiredVersion);
      const subsets = (items: readonly string[], size: number): string[][] =>
        size === 0 ? [[]] : items.flatMap((item, j) => subsets(items.slice(j + 1), size - 1).map((rest) => [item, ...rest]));
      for (let size = 0; size < bound - 1; size++) {
        for (const subset of subsets(steps, size)) shorter.push({ triple, controlPlanePlan: plan.controlPlanePlan ?? [], workersPlan: [...subset, triple.desiredVersion] });
      }
    });
    const verdicts = ask(
      shorter.map(({ triple, controlPlanePlan, workersPlan }) => ({
        op: "validate",
        desired: triple.desiredVersion,
        controlPlane: triple.controlPlaneVersion,
        minWorkers: triple.workersVersion,
        controlPlanePlan,
        workersPlan,
      })),
    );
    verdicts.forEach((verdict, i) => {
      expect(verdict.error, JSON.stringify(shorter[i])).toMatch(/an intermediate step is required to comply with Kubernetes version skew rules/);
    });
    // Not vacuous: multi-rollout upgrades and shorter plans were drawn.
    expect(triples.filter((t) => workerRolloutsLowerBound(t.workersVersion, t.desiredVersion) >= 3).length).toBeGreaterThan(20);
    expect(shorter.length).toBeGreaterThan(500);
  }, 960_000);

  it("counts one rollout per minor for the baseline, one for a patch, none when equal", () => {
    const [a, b] = catalog.tenantKubernetesVersions;
    expect(onePerMinorRollouts(a, a)).toBe(0);
    expect(onePerMinorRollouts(a, b)).toBe(1);
    expect(onePerMinorRollouts(versions[0]!, versions[versions.length - 1]!)).toBeGreaterThan(10);
  });

  it("re-validates a kubernetesVersions list changed after it was validated (the planner caches verdicts)", () => {
    const list = [...versions];
    expect(validateKubernetesVersionsList(list)).toBeUndefined();
    list.reverse();
    expect(validateKubernetesVersionsList(list)).toMatch(/must be greater than/);
  });
});

describe("preview preflight parsing", () => {
  it("reads the plugin pins and the host pin from tools/toolchain", () => {
    const script = readFileSync(path.join(repoRoot, "tools", "toolchain"), "utf8");
    const pins = parseToolchainPins(`${script}\npinset-key: p\ncache: /c/pulumi-p\n`);
    expect(programPlugins(repoRoot, pins.plugins).map((plugin) => plugin.name).sort()).toEqual(["command", "hcloud", "kubernetes"]);
    expect(pins.plugins.map((plugin) => `${plugin.name}@${plugin.version}`)).toContain("kubernetes@4.25.0");
    expect(pins.plugins.every((plugin) => plugin.module.startsWith("github.com/") && plugin.version !== "")).toBe(true);
    expect(pins.hostPin).toMatch(/^v3\./);
    expect(pins.cache).toBe("/c/pulumi-p");
  });

  it("reads tools/toolchain env's exports", () => {
    expect(parseExports("# note\nexport PATH=/a:/b\nexport PULUMI_HOME=/h\\ x\n")).toEqual({ PATH: "/a:/b", PULUMI_HOME: "/h x" });
  });
});

describe("stand-in preview (part 4 without provider plugins)", () => {
  const registration = (type: string, name: string, urn: string, dependencies: string[] = [], inputs: Record<string, unknown> = {}) => ({ type, name, urn, dependencies, inputs });

  it("stands in for every non-pulumi registration, in order, with dependsOn on earlier stand-ins", () => {
    const plan = standInPlan([
      registration("pulumi:pulumi:Stack", "capi-fleet-prod", "urn:stack"),
      registration("pulumi:providers:hcloud", "management-hcloud", "urn:provider"),
      registration("hcloud:index/network:Network", "net", "urn:net", ["urn:provider"], { ipRange: "10.0.0.0/16" }),
      registration("hcloud:index/server:Server", "cp-0", "urn:cp-0", ["urn:net", "urn:net", "urn:later", "urn:stack"]),
      registration("hcloud:index/server:Server", "later", "urn:later"),
    ]);
    expect(plan.entries.map((entry) => [entry.type, entry.name, entry.dependsOn])).toEqual([
      ["hcloud:index/network:Network", "net", []],
      ["hcloud:index/server:Server", "cp-0", [0]],
      ["hcloud:index/server:Server", "later", []],
    ]);
    expect(plan.entries[0]!.inputs).toEqual({ ipRange: "10.0.0.0/16" });
    expect(plan).toMatchObject({ skippedPulumiTypes: 2, skippedDependencies: 2, unknownDependencies: 1, collisions: 0 });
  });

  it("suffixes names that collide on (type, name) and counts them; other types keep the name", () => {
    const plan = standInPlan([
      registration("k:Secret", "ca", "urn:a"),
      registration("k:Secret", "ca", "urn:b"),
      registration("k:Secret", "ca-2", "urn:c"),
      registration("k:Secret", "ca", "urn:d"),
      registration("k:ConfigMap", "ca", "urn:e"),
    ]);
    expect(plan.entries.map((entry) => entry.name)).toEqual(["ca", "ca-2", "ca-2-2", "ca-3", "ca"]);
    expect(plan.collisions).toBe(3);
  });

  it("replaces resource objects among the inputs by a string naming them", () => {
    const provider = { __pulumiResource: true, __pulumiType: "pulumi:providers:hcloud", __name: "management-hcloud", urn: "Calling [toJSON] on an [Output<T>] is not supported." };
    const plan = standInPlan([registration(componentTypes.managementCluster, "management", "urn:m", [], { hcloudProvider: provider, list: [provider, 1] })]);
    expect(plan.entries[0]!.inputs).toEqual({ hcloudProvider: "<resource pulumi:providers:hcloud management-hcloud>", list: ["<resource pulumi:providers:hcloud management-hcloud>", 1] });
    expect(plan.resourceReferences).toBe(2);
  });

  it("hands a fleet component's declared children to the stand-in program by entry, dropping what it did not stand in for", () => {
    const component = { ...registration(componentTypes.tenantCluster, "tenant-a", "urn:t"), outputs: { declared: [{ urn: "urn:c", props: { kind: "Cluster" } }, { urn: "urn:gone", props: {} }], version: "v1" } };
    const plan = standInPlan([registration("pulumi:providers:kubernetes", "k", "urn:k"), component, registration("k:Cluster", "a", "urn:c")]);
    expect(plan.entries[0]!.outputs).toEqual({ other: { version: "v1" }, declared: [{ entry: 1, props: { kind: "Cluster" } }] });
    expect(plan.entries[1]!.outputs).toBeUndefined();
  });

  it("is a plain-JS program that parses", () => {
    // Compiles without running.
    expect(() => new Script(readFileSync(standInProgramFile(repoRoot), "utf8"))).not.toThrow();
  });

  it("counts the violations the CLI prints, by level and rule", () => {
    const output = [
      "Policies:",
      "    ❌ capi-fleet@v0.1.0 (local: /tmp/pack)",
      "        - [mandatory]  management-kubernetes-version  (capi-fleet:management:ManagementCluster: management)",
      "          management.k3sVersion v1.30.1+k3s1 is 4 minors behind",
      "        - [mandatory]  management-kubernetes-version  (capi-fleet:management:ManagementCluster: other)",
      "        - [advisory]  fleet-version-drift  (pulumi:pulumi:Stack: capi-fleet-prod)",
    ].join("\n");
    expect(parsePolicyViolations(output)).toEqual({
      mandatory: 2,
      advisory: 1,
      byRule: { "management-kubernetes-version": { level: "mandatory", count: 2 }, "fleet-version-drift": { level: "advisory", count: 1 } },
    });
    expect(parsePolicyViolations("Resources:\n    + 61 to create\n")).toEqual({ mandatory: 0, advisory: 0, byRule: {} });
  });

  it("exits 1 when the real-engine preview failed, even with every target met", () => {
    expect(benchExitCode([{ status: "pass" }], "failed")).toBe(1);
    expect(benchExitCode([{ status: "pass" }], "ran")).toBe(0);
    expect(benchExitCode([{ status: "pass" }], "not run")).toBe(0);
    expect(benchExitCode([{ status: "FAIL" }], "ran")).toBe(1);
  });

  it("shows a failed preview's whole Policies block, not the tail of its output", () => {
    const block = [
      "Policies:",
      "    ❌ capi-fleet@v0.1.0 (local: /tmp/pack)",
      "        - [mandatory]  tenant-upgrade-path  (kubernetes:cluster.x-k8s.io/v1beta2:Cluster: tenant-payments)",
      "          tenant \"payments\": cannot go from the deployed v1.35.3 to v1.34.6",
    ].join("\n");
    const output = ["Previewing update (prod):", "    + 61 to create", "", block, "", "Outputs:", "    tenantVersions: {}", "Resources:", "    + 61 to create"].join("\n");
    expect(policyReport(output)).toBe(block);
    expect(policyReport("Resources:\n    + 61 to create\n")).toBe("");
  });

  it("takes the policy share from the medians, never below zero", () => {
    expect(policyShare([4, 5, 100], [3, 3.5, 4])).toBeCloseTo(0.3);
    expect(policyShare([2, 2, 2], [3, 3, 3])).toBe(0);
  });

  it("runs the real program when the toolchain is complete, else the stand-in; real and force as before", () => {
    const complete = { ready: true, pulumi: "/bin/pulumi" };
    const noPlugins = { ready: false, pulumi: "/bin/pulumi" };
    const noCli = { ready: false };
    expect([complete, noPlugins, noCli].map((preflight) => choosePreview("auto", preflight))).toEqual(["real", "stand-in", undefined]);
    expect([complete, noPlugins, noCli].map((preflight) => choosePreview("real", preflight))).toEqual(["real", undefined, undefined]);
    expect([complete, noPlugins, noCli].map((preflight) => choosePreview("force", preflight))).toEqual(["real", "real", undefined]);
    expect([complete, noPlugins, noCli].map((preflight) => choosePreview("stand-in", preflight))).toEqual(["stand-in", "stand-in", undefined]);
  });

  it("labels the preview target as an upper bound when the stand-in ran", () => {
    const share = new Map([[1, 0.04], [50, 0.06]]);
    const [standIn] = checkTargets({ ...emptyInputs, previewPolicyShare: share, previewStandIn: true }).filter((check) => check.name.startsWith("policy share"));
    expect(standIn).toMatchObject({ name: "policy share of preview time (worst; stand-in program: upper bound)", measured: "6.0%", status: "FAIL" });
  });
});
