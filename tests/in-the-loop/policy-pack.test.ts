import { readFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { loadFleetConfig } from "../../infra/config";
import { planTenantUpgradesOrStop, readDeployedState } from "../../infra/deployed-state";
import { createFleet } from "../../infra/fleet";
import { catalog } from "../../infra/model/versions/catalog";
import { intersectRanges, managementKubernetesConstraints } from "../../infra/model/versions/compatibility";
import { parseK3sVersion } from "../../infra/model/versions/kubernetes-version";
import type { FleetConfig } from "../../infra/model/stack/validate-fleet-config";
import { resourceTypes } from "../../policies/lib/fleet-resources";
import { allRules } from "../../policies/rules";
import { evaluate, type Violation } from "../../policies/testing/harness";
import { settle } from "../support/pulumi-mocks";
import { engineViewOfRegistrations, type RunKind } from "../support/policy-resources";
import { installRecordingMocks, valueOf, type Registration } from "../support/pulumi-mocks";
import { readStackConfig, repoRoot, withKarpenterPool } from "../support/stack-files";
import { stackOutputs } from "../../infra/model/contract/outputs";
import { componentTypes } from "../../infra/model/contract/component-types";

/**
 * The whole pack over the whole program: each stack's program runs under mocks (as
 * infra/index.ts does, including the StackReference to its own last outputs), and every
 * registered resource (type, name, inputs, dependencies; the StackReference's outputs) goes
 * to every rule with that stack's policies/config/<stack>.json.
 */

interface ProgramRun {
  /** The last update's `tenantVersions`, as the StackReference returns it. */
  deployed?: Record<string, string>;
  /** The last update's `managementK3sVersion`, as the StackReference returns it. */
  deployedK3s?: string;
  /** Changes the validated config, as a program change or skipped validation would. */
  tamper?: (config: FleetConfig) => FleetConfig;
  /** Changes the stack file's values before validation, as an edit of the stack file would. */
  edit?: (values: Record<string, string>) => void;
}

async function runProgram(stack: string, run: ProgramRun = {}): Promise<Registration[]> {
  const tenantVersions = Object.fromEntries(
    Object.entries(run.deployed ?? {}).map(([tenant, version]) => [tenant, { deployed: version, target: version, controlPlaneSteps: [], workerSteps: [] }]),
  );
  const registrations = await installRecordingMocks("capi-fleet", stack, false, {
    ...(run.deployed ? { tenantVersions } : {}),
    ...(run.deployedK3s ? { [stackOutputs.managementK3sVersion]: run.deployedK3s } : {}),
  });
  const { values, secretKeys } = readStackConfig(stack);
  run.edit?.(values);
  pulumi.runtime.setAllConfig(values, secretKeys);
  const validated = loadFleetConfig();
  const deployed = await readDeployedState();
  // Tampered configs skip the planner, which would stop the program before the rules see anything.
  // They are planned from the validated config, so the deployed state is still published; the
  // management k3s check is left out of the planner too, as validation bypassed.
  const upgrades = planTenantUpgradesOrStop(validated, deployed.versions);
  const config = run.tamper ? run.tamper(validated) : validated;
  const outputs = createFleet(config, `capi-fleet-${stack}`, upgrades, deployed.managementK3sVersion);
  await valueOf(outputs.managementKubeconfig);
  await settle(registrations);
  return registrations;
}

const policyConfig = (stack: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(repoRoot, "policies", "config", `${stack}.json`), "utf8")) as Record<string, unknown>;

async function violationsOf(stack: string, run?: ProgramRun, kind?: RunKind): Promise<Violation[]> {
  return evaluate(allRules, engineViewOfRegistrations(await runProgram(stack, run), kind), policyConfig(stack));
}

/** A prod fleet that breaks version, upgrade, LB-GC and management rules, the management k3s path included (validation skipped). */
const violatingProd: ProgramRun = {
  deployed: { analytics: "v1.35.3" },
  // The servers run the next minor after the configured k3s: the Plan would downgrade them.
  deployedK3s: (({ major, minor }) => `v${major}.${minor + 1}.0+k3s1`)(parseK3sVersion(catalog.k3s.version)!),
  tamper: (config: FleetConfig): FleetConfig => ({
    ...config,
    management: config.management.mode === "hetzner" ? { ...config.management, deletionProtection: false, adminCidrs: ["0.0.0.0/0"] } : config.management,
    tenants: config.tenants.map((tenant) => {
      switch (tenant.name) {
        case "payments":
          return { ...tenant, kubernetesVersion: "v1.31.14" };
        case "analytics":
          return { ...tenant, kubernetesVersion: "v1.34.6", loadBalancerGarbageCollection: false };
        case "edge":
          return { ...tenant, annotations: { "caren.nutanix.com/loadbalancer-gc": "maybe" } };
        default:
          return tenant;
      }
    }),
  }),
};

const mandatory = (violations: readonly Violation[]) => violations.filter((violation) => violation.level === "mandatory");

describe("the policy pack over each stack's program", () => {
  it.each(["dev", "prod"])("%s: no mandatory violation", async (stack) => {
    const violations = await violationsOf(stack);
    expect(mandatory(violations)).toEqual([]);
    expect(violations).toEqual([]);
  });

  it("prod: a chained two-minor upgrade from the deployed state passes too", async () => {
    expect(mandatory(await violationsOf("prod", { deployed: { analytics: "v1.33.10", payments: "v1.34.6", edge: "v1.33.10" } }))).toEqual([]);
  });

  it("every type token the rules match is one the program registers", async () => {
    const registered = new Set((await runProgram("prod", { deployed: {} })).map((registration) => registration.type));
    expect(Object.values(resourceTypes).filter((type) => !registered.has(type))).toEqual([]);
  });

  it("a violating fleet trips the version, upgrade, LB-GC and management rules by name", async () => {
    const violations = mandatory(await violationsOf("prod", violatingProd));
    const named = (policy: string) => violations.filter((violation) => violation.policy === policy).map((violation) => violation.message);
    expect(named("tenant-version-in-cluster-class")).toEqual([expect.stringContaining("spec.topology.version v1.31.14 is not in ClusterClass")]);
    expect(named("tenant-upgrade-path")).toEqual([expect.stringContaining('tenant "analytics" (Cluster tenant-analytics/analytics): cannot go from the deployed v1.35.3 to v1.34.6')]);
    expect(named("lb-gc-opt-out-exempted")).toEqual([expect.stringContaining('tenant "analytics"')]);
    expect(named("lb-gc-annotation-boolean")).toEqual([expect.stringContaining('tenant "edge" (Cluster tenant-edge/edge): annotation caren.nutanix.com/loadbalancer-gc: "maybe"')]);
    expect(named("management-deletion-protection")).toHaveLength(4); // three servers and the API load balancer
    expect(named("management-k3s-upgrade-path")).toEqual([expect.stringContaining("would downgrade the servers from the deployed")]);
    expect(named("management-admin-ports-closed")).toEqual([expect.stringContaining("opens port 22 to 0.0.0.0/0"), expect.stringContaining("opens port 6443 to 0.0.0.0/0")]);
  });

  it("prod: replicas on the autoscaled pool (validation bypassed) fail the preview by autoscaled-pool-replicas-unpinned", async () => {
    const pinReplicas = (config: FleetConfig): FleetConfig => ({
      ...config,
      tenants: config.tenants.map((tenant) => ({ ...tenant, workers: tenant.workers.map((pool) => (pool.autoscaling ? { ...pool, replicas: 3 } : pool)) })),
    });
    const violations = mandatory(await violationsOf("prod", { tamper: pinReplicas }));
    expect(violations.map((violation) => violation.policy)).toEqual(["autoscaled-pool-replicas-unpinned"]);
    expect(violations[0]!.message).toContain('tenant "analytics" (Cluster tenant-analytics/analytics): MachineDeployment "md-0" has the autoscaler\'s');
  });

  describe("dev with its pool sized by Karpenter (experimental)", () => {
    const karpenterDev = withKarpenterPool;

    it("validates, registers the tenant's Karpenter, and passes the pack", async () => {
      const registrations = await runProgram("dev", { edit: karpenterDev });
      const types = registrations.map((registration) => registration.type);
      expect(types).toContain(componentTypes.karpenter);
      expect(types).toContain("kubernetes:addons.cluster.x-k8s.io/v1beta2:ClusterResourceSet");
      expect(types).not.toContain(componentTypes.clusterAutoscaler);
      expect(await evaluate(allRules, engineViewOfRegistrations(registrations), policyConfig("dev"))).toEqual([]);
    });

    it("with replicas pinned on that pool (validation bypassed) fails it by autoscaled-pool-replicas-unpinned", async () => {
      const pin = (config: FleetConfig): FleetConfig => ({ ...config, tenants: config.tenants.map((tenant) => ({ ...tenant, workers: tenant.workers.map((pool) => ({ ...pool, replicas: 1 })) })) });
      const violations = mandatory(await violationsOf("dev", { edit: karpenterDev, tamper: pin }));
      expect(violations.map((violation) => violation.policy)).toEqual(["autoscaled-pool-replicas-unpinned"]);
      expect(violations[0]!.message).toContain('MachineDeployment "md-0" is sized by Karpenter (annotation capi-fleet.io/karpenter-cpu-limit) and has replicas: 1');
    });
  });

  describe("the management servers' k3s against the deployed release (validation bypassed)", () => {
    const current = parseK3sVersion(catalog.k3s.version)!;
    const release = (minorDelta: number) => `v${current.major}.${current.minor + minorDelta}.0+k3s1`;
    const withK3s = (version: string) => (config: FleetConfig): FleetConfig =>
      config.management.mode === "hetzner" ? { ...config, management: { ...config.management, k3sVersion: version } } : config;

    it("prod: a one-minor upgrade passes", async () => {
      expect(mandatory(await violationsOf("prod", { deployedK3s: release(-1) }))).toEqual([]);
    });

    it.each([
      ["a skip of two minors", { deployedK3s: release(-1), tamper: withK3s(release(1)) }, "skips 1 minor"],
      ["a downgrade", { deployedK3s: release(1) }, `would downgrade the servers from the deployed ${release(1)}`],
    ])("prod: %s fails the preview by policy name", async (_label, run, message) => {
      const violations = mandatory(await violationsOf("prod", run));
      expect(violations.map((violation) => violation.policy)).toEqual(["management-k3s-upgrade-path"]);
      expect(violations[0]!.message).toContain(message);
    });

    it("prod: a target outside the management range fails by management-kubernetes-version", async () => {
      // One minor past the newest the platform supports, reached by a one-minor upgrade, so that only the range rule fires.
      const newest = Number(intersectRanges(managementKubernetesConstraints("hetzner"))!.max.split(".")[1]);
      const beyond = newest + 1 - current.minor;
      const violations = mandatory(await violationsOf("prod", { deployedK3s: release(beyond - 1), tamper: withK3s(release(beyond)) }));
      expect(violations.map((violation) => violation.policy)).toEqual(["management-kubernetes-version"]);
    });
  });

  // Stack rules read what components declared, never a custom resource's own outputs, which are
  // empty on a fresh stack's preview and the provider's object on an update's preview and at up.
  it.each([
    ["dev", {}],
    ["prod", {}],
    ["prod (violating)", violatingProd],
  ] as const)("%s: the same verdicts on a fresh stack's preview, an update's preview and up", async (label, run) => {
    const stack = label.split(" ")[0]!;
    const fresh = await violationsOf(stack, run, "fresh-preview");
    expect(await violationsOf(stack, run, "update-preview-or-up")).toEqual(fresh);
  });
});
