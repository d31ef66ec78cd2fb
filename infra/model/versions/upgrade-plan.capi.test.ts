// The port against the planner it ports: Cluster API's own upgrade_plan.go, built from the Go module
// cache (tests/go/capi-upgrade-plan; sigs.k8s.io/cluster-api@v1.12.10:
// exp/topology/desiredstate/upgrade_plan.go and util/version/version.go). Random fleets of versions
// (prefixes, patches, k3s builds, unlisted and lagging versions) go through both; the plans must
// be the same, whatever CAPI refuses, the port refuses, and whatever the port refuses, CAPI refuses:
// in its planner or, before the planner runs, in its own Cluster webhooks (tests/go/capi-upgrade-plan/admit.go).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { crdSchema } from "../../../tests/support/cluster-class-patches";
import { crdFiles } from "../../../tests/support/cluster-class-topology";
import { buildGoProgram } from "../../../tests/support/go-programs";
import { repoRoot } from "../../../tests/support/stack-files";
import { crdSources } from "../../../tests/support/upstream-crds";
import { catalog } from "./catalog";
import {
  computeUpgradePlan,
  defaultAndValidateUpgradePlans,
  minimumWorkersVersion,
  UpgradePlanError,
  validateKubernetesVersionsList,
  type UpgradePlan,
} from "./upgrade-plan";

let capiPlanner: string;
beforeAll(() => {
  // CAPI's planner package pulls in client-go and controller-runtime: a cold build takes minutes,
  // and a cold module cache is filled from the Go module proxy.
  capiPlanner = buildGoProgram("capi-upgrade-plan", 900_000).binary;
}, 960_000);

interface CapiAnswer {
  controlPlanePlan: string[] | null;
  workersPlan: string[] | null;
  minWorkers: string;
  comparison: number;
  /** The "admit" op: CAPI's Cluster webhooks let the update through, else why not. */
  allowed?: boolean;
  denials?: string[];
  error?: string;
}

function askCapi(requests: readonly object[]): CapiAnswer[] {
  const result = spawnSync(capiPlanner, [], { input: requests.map((r) => JSON.stringify(r)).join("\n") + "\n", encoding: "utf8", timeout: 60_000 });
  const lines = result.stdout.trimEnd().split("\n");
  expect(lines, result.stderr).toHaveLength(requests.length);
  return lines.map((line) => JSON.parse(line) as CapiAnswer);
}

/**
 * The webhook rule behind each refusal the port makes before planning, by the field error CAPI's
 * Cluster webhook returns (sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/cluster.go,
 * validateTopologyVersionUpdate and ValidateClusterForClusterClass).
 */
const webhookRule = {
  downgrade: /^spec\.topology\.version: .*version cannot be decreased/,
  "version-not-listed": /^spec\.topology\.version: .*version must match one of the versions defined in the ClusterClass/,
} as const;

/** A refusal the port makes before planning, and what CAPI's planner said of the same input. */
interface RefusedBeforePlanning {
  readonly code: keyof typeof webhookRule;
  /** Versions the cluster may have settled at before spec.topology.version was set to `desired`. */
  readonly from: readonly string[];
  readonly desired: string;
  readonly kubernetesVersions: readonly string[];
  readonly plannerRefuses: boolean;
  readonly context: string;
}

/**
 * Asserts that CAPI refuses each of these too: its Cluster webhooks (tests/go/capi-upgrade-plan/admit.go)
 * refuse, by the rule the port names, to set spec.topology.version to `desired` on a cluster settled at
 * one of `from` (so the state cannot be reached), or else its planner refuses the input. Returns how
 * many the webhook refused.
 */
function expectCapiRefuses(refusals: readonly RefusedBeforePlanning[]): { byWebhook: number } {
  const asked = refusals.flatMap((refusal) => refusal.from.map((from) => ({ refusal, from })));
  const answers = askCapi(asked.map(({ refusal, from }) => ({ op: "admit", from, desired: refusal.desired, kubernetesVersions: refusal.kubernetesVersions })));
  let byWebhook = 0;
  for (const refusal of refusals) {
    const verdicts = asked.flatMap((question, i) => (question.refusal === refusal ? [{ from: question.from, allowed: answers[i]!.allowed, denials: answers[i]!.denials, error: answers[i]!.error }] : []));
    const context = `${refusal.code}: ${refusal.context}; CAPI's Cluster webhook: ${JSON.stringify(verdicts)}`;
    expect(verdicts.every((verdict) => verdict.error === undefined), context).toBe(true);
    if (verdicts.some((verdict) => verdict.denials?.some((denial) => webhookRule[refusal.code].test(denial)))) {
      byWebhook++;
      continue;
    }
    // A known divergence, out of the program's reach (its config takes only "v…" versions): CAPI's
    // mutating webhook prepends the "v" before the list is searched (Default, internal/webhooks/cluster.go),
    // the port searches for the text as given.
    if (refusal.code === "version-not-listed" && !refusal.desired.startsWith("v") && refusal.kubernetesVersions.includes(`v${refusal.desired}`)) continue;
    expect(refusal.plannerRefuses, context).toBe(true);
  }
  return { byWebhook };
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

/** The port's answer in the oracle's terms: a plan, or the UpgradePlanError it threw. */
function portAnswer(run: () => UpgradePlan): UpgradePlan | UpgradePlanError {
  try {
    return run();
  } catch (error) {
    if (error instanceof UpgradePlanError) return error;
    throw error;
  }
}

const versionText = fc
  .record({
    prefix: fc.constantFrom("v", "v", ""),
    minor: fc.integer({ min: 28, max: 36 }),
    patch: fc.integer({ min: 0, max: 3 }),
    build: fc.constantFrom("", "", "", "+k3s1", "+k3s2", "+2"),
  })
  .map(({ prefix, minor, patch, build }) => `${prefix}1.${minor}.${patch}${build}`);

/** A ClusterClass list the webhook accepts: minors without gaps, each with ascending patches. */
const kubernetesVersionsList = fc
  .record({
    first: fc.integer({ min: 28, max: 32 }),
    patchesPerMinor: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
    prefix: fc.constantFrom("v", ""),
    build: fc.constantFrom("", "+k3s1"),
  })
  .map(({ first, patchesPerMinor, prefix, build }) =>
    patchesPerMinor.flatMap((patches, i) => [...patches].sort((a, b) => a - b).map((patch) => `${prefix}1.${first + i}.${patch}${build}`)),
  );

/** A cluster to plan for: desired, control plane and workers mostly from the list, sometimes anywhere. */
const planInput = kubernetesVersionsList.chain((list) =>
  fc.record({
    list: fc.constant(list),
    listed: fc.boolean(),
    desired: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...list) }, { weight: 1, arbitrary: versionText }),
    controlPlane: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...list) }, { weight: 1, arbitrary: versionText }),
    workers: fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...list, "") }, { weight: 1, arbitrary: versionText }), { maxLength: 3 }),
  }),
);

describe("the upgrade planner, against Cluster API's own (tests/go/capi-upgrade-plan)", () => {
  it("asks the Cluster API the fleet runs", () => {
    const goMod = readFileSync(path.join(repoRoot, "tests", "go", "capi-upgrade-plan", "go.mod"), "utf8");
    expect(goMod).toMatch(new RegExp(`^\\s*sigs\\.k8s\\.io/cluster-api ${catalog.clusterApi.version.replace(/\./g, "\\.")}$`, "m"));
  });

  it("picks the workers' version CAPI picks: the lowest, unordered builds resolved against the control plane", () => {
    // Few versions, many builds of one patch: the order of k3s1 and k3s2 is unknown to CAPI.
    const nearby = fc.constantFrom("v1.31.0", "1.31.0+k3s1", "v1.31.0+k3s1", "v1.31.0+k3s2", "v1.31.0+2", "v1.31.1+k3s1", "v1.30.5+k3s2", "");
    const inputs = fc.sample(fc.record({ controlPlane: nearby.filter((v) => v !== ""), workers: fc.array(nearby, { maxLength: 4 }) }), { numRuns: 2000, seed: 41 });
    const answers = askCapi(inputs.map((input) => ({ op: "compute", desired: "v1.32.0", controlPlane: input.controlPlane, workers: input.workers })));
    inputs.forEach((input, i) => {
      const answer = answers[i]!;
      // CAPI walks its MachineDeployments map in Go's random order, and with unordered builds the
      // order decides: the port, walking its list, must give CAPI's answer for one of the orders.
      const ours = new Set(permutations(input.workers).map((order) => minimumWorkersVersion(order, input.controlPlane) ?? ""));
      expect([...ours], JSON.stringify({ ...input, capi: answer })).toContain(answer.minWorkers);
    });
  });

  it("plans what CAPI plans, and refuses what CAPI refuses", () => {
    const inputs = fc.sample(planInput, { numRuns: 3000, seed: 42 });
    const answers = askCapi(
      inputs.map((input) => ({
        op: "compute",
        desired: input.desired,
        controlPlane: input.controlPlane,
        workers: input.workers,
        kubernetesVersions: input.listed ? input.list : [],
      })),
    );
    let planned = 0;
    let refusedByBoth = 0;
    const beforePlanning: RefusedBeforePlanning[] = [];
    inputs.forEach((input, i) => {
      const answer = answers[i]!;
      const context = JSON.stringify({ ...input, capi: answer });
      const ours = portAnswer(() =>
        computeUpgradePlan({
          desiredVersion: input.desired,
          controlPlaneVersion: input.controlPlane,
          workersVersion: minimumWorkersVersion(input.workers, input.controlPlane),
          kubernetesVersions: input.listed ? input.list : undefined,
        }),
      );
      if (ours instanceof UpgradePlanError) {
        // CAPI's Cluster webhook stops these before its planner runs: asked below.
        if (ours.code === "downgrade" || ours.code === "version-not-listed") {
          // A version change is admitted only once the control plane and the workers run the old
          // version (validateTopologyVersionUpdate), so a downgrade is one from either of them.
          const workers = minimumWorkersVersion(input.workers, input.controlPlane);
          const from = ours.code === "downgrade" && workers !== undefined ? [input.controlPlane, workers] : [input.controlPlane];
          beforePlanning.push({ code: ours.code, from, desired: input.desired, kubernetesVersions: input.listed ? input.list : [], plannerRefuses: !!answer.error, context });
          return;
        }
        // Upstream wraps a nil error when the workers lag more than 3 minors: no plan, no error (see the port).
        if (ours.code === "invalid-workers-plan" && !answer.error && !answer.workersPlan?.length) return;
        expect(answer.error, context).toBeTruthy();
        refusedByBoth++;
        return;
      }
      expect(answer.error, context).toBeUndefined();
      expect(ours, context).toEqual({ controlPlaneUpgrades: answer.controlPlanePlan ?? [], workersUpgrades: answer.workersPlan ?? [] });
      planned++;
    });
    const downgrades = expectCapiRefuses(beforePlanning.filter((refusal) => refusal.code === "downgrade"));
    const unlisted = expectCapiRefuses(beforePlanning.filter((refusal) => refusal.code === "version-not-listed"));
    // The sample reaches every outcome often, not by luck.
    expect(planned).toBeGreaterThan(500);
    expect(refusedByBoth).toBeGreaterThan(100);
    expect(downgrades.byWebhook).toBeGreaterThan(100);
    expect(unlisted.byWebhook).toBeGreaterThan(100);
  });

  it("accepts and defaults the plans an extension returns exactly as CAPI's DefaultAndValidateUpgradePlans does", () => {
    // Half the plans walk the list forward from the control plane to the desired version, as a
    // well-behaved extension would; the other half are any subsequences of it.
    const plans = kubernetesVersionsList.chain((list) =>
      fc.record({ from: fc.nat(list.length - 1), length: fc.nat(list.length), wellBehaved: fc.boolean() }).chain(({ from, length, wellBehaved }) => {
        const to = Math.min(list.length - 1, from + length);
        const forward = list.slice(from + 1, to);
        return fc.record({
          list: fc.constant(list),
          desired: fc.constant(list[to]!),
          controlPlane: wellBehaved ? fc.constant(list[from]!) : fc.oneof(fc.constantFrom(...list), versionText),
          minWorkers: fc.oneof(fc.constantFrom(...list.slice(0, from + 1)), fc.constantFrom(...list), fc.constant("")),
          controlPlanePlan: wellBehaved ? fc.subarray(forward).map((steps) => (from === to ? [] : [...steps, list[to]!])) : fc.subarray(list),
          workersPlan: fc.oneof(fc.constant([]), fc.subarray([list[from]!, ...forward, list[to]!])),
        });
      }),
    );
    const inputs = fc.sample(plans, { numRuns: 4000, seed: 43 });
    const answers = askCapi(inputs.map((input) => ({ op: "validate", ...input })));
    let accepted = 0;
    let refused = 0;
    const beforePlanning: RefusedBeforePlanning[] = [];
    inputs.forEach((input, i) => {
      const answer = answers[i]!;
      const context = JSON.stringify({ ...input, capi: answer });
      const ours = portAnswer(() =>
        defaultAndValidateUpgradePlans(
          { desiredVersion: input.desired, controlPlaneVersion: input.controlPlane, workersVersion: input.minWorkers || undefined },
          input.controlPlanePlan,
          input.workersPlan,
        ),
      );
      if (ours instanceof UpgradePlanError) {
        // Workers newer than the desired version: asked below of CAPI's Cluster webhook, which
        // admitted the desired version when the workers ran the old one (validateTopologyVersionUpdate).
        if (ours.code === "downgrade") {
          beforePlanning.push({ code: ours.code, from: [input.minWorkers], desired: input.desired, kubernetesVersions: input.list, plannerRefuses: !!answer.error, context });
          return;
        }
        if (ours.code === "invalid-workers-plan" && !answer.error && !answer.workersPlan?.length) return;
        expect(answer.error, context).toBeTruthy();
        refused++;
        return;
      }
      expect(answer.error, context).toBeUndefined();
      expect(ours.workersUpgrades, context).toEqual(answer.workersPlan ?? []);
      accepted++;
    });
    const downgrades = expectCapiRefuses(beforePlanning);
    expect(accepted).toBeGreaterThan(600);
    expect(refused).toBeGreaterThan(1000);
    expect(downgrades.byWebhook).toBeGreaterThan(50);
  });

  it("refuses, as CAPI does, workers whose build the plan cannot order", () => {
    // The workers run a build that is neither the control plane's nor in its plan: CAPI cannot tell
    // whether the target comes after it ("failer to determine version … order").
    const input = { desired: "v1.31.0+k3s3", controlPlane: "v1.31.0+k3s2", workers: ["v1.31.0+k3s1"] };
    const [answer] = askCapi([{ op: "compute", ...input }]);
    expect(answer!.error).toBeTruthy();
    const ours = portAnswer(() => computeUpgradePlan({ desiredVersion: input.desired, controlPlaneVersion: input.controlPlane, workersVersion: input.workers[0] }));
    expect(ours).toBeInstanceOf(UpgradePlanError);
    expect((ours as UpgradePlanError).message).toContain("cannot tell whether v1.31.0+k3s3 comes after v1.31.0+k3s1");
  });

  it("orders a ClusterClass list as CAPI's version.Compare with build tags does", () => {
    const pairs = fc.sample(fc.tuple(versionText, versionText), { numRuns: 3000, seed: 44 });
    const answers = askCapi(pairs.map(([a, b]) => ({ op: "compare", a, b })));
    pairs.forEach(([a, b], i) => {
      // The webhook refuses an entry that is not greater than the one before (comparison -1 or 0).
      const refusedAfter = /must be greater than/.test(validateKubernetesVersionsList([a, b]) ?? "");
      const comparison = answers[i]!.comparison;
      expect(refusedAfter, JSON.stringify({ a, b, comparison })).toBe(comparison === 1 || comparison === 0);
    });
  });
});

// The list's bounds are the ClusterClass CRD's (sigs.k8s.io/cluster-api@v1.12.10:
// config/crd/bases/cluster.x-k8s.io_clusterclasses.yaml, spec.kubernetesVersions), read from the module cache.
describe("validateKubernetesVersionsList, against the ClusterClass CRD's bounds", () => {
  it("reports a count or length problem exactly when the CRD schema refuses the list", () => {
    const capi = crdSources.find((source) => source.module === "sigs.k8s.io/cluster-api")!;
    const crds = crdFiles(capi, ["cluster.x-k8s.io_clusterclasses.yaml"]);
    if ("unavailable" in crds) throw new Error(crds.unavailable);
    const schema = crdSchema(crds, "cluster.x-k8s.io/v1beta2", "ClusterClass") as { properties: { spec: { properties: Record<string, object> } } };
    const spec = schema.properties.spec;
    const field = spec.properties["kubernetesVersions"] as { items: { maxLength: number } };
    const crdAccepts = new Ajv({ strict: false }).compile(field);
    // Ascending, gap-free versions whose only possible problem is a count or a length.
    const lists = fc.sample(
      fc.record({ count: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 98, max: 102 })), padding: fc.integer({ min: 240, max: 260 }) }),
      { numRuns: 300, seed: 45 },
    );
    for (const { count, padding } of lists) {
      const list = Array.from({ length: count }, (_, patch) => `v1.30.${patch}+${"b".repeat(padding - `v1.30.${patch}+`.length)}`);
      const problem = validateKubernetesVersionsList(list);
      expect(problem !== undefined, `${count} versions of ${padding} characters: ${problem}`).toBe(!crdAccepts(list));
      // A too long entry is reported as such (semver alone would call it invalid: it stops at 256 characters too).
      if (count >= 1 && count <= 100 && padding > field.items.maxLength) expect(problem).toContain(`must be 1–${field.items.maxLength} characters long`);
    }
  });
});
