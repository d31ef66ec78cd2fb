import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFleetConfig } from "../infra/config";
import { planTenantUpgradesOrStop } from "../infra/deployed-state";
import { createFleet } from "../infra/fleet";
import { catalog } from "../infra/model/catalog";
import { parseK3sVersion } from "../infra/model/kubernetes-version";
import { declaredOutputName, deployedManagementK3sVersionOutputName, deployedVersionsOutputName, type DeclaredResource } from "../infra/model/policy-facts";
import { resourceTypes } from "../policies/lib/fleet-resources";
import { allRules } from "../policies/rules";
import { evaluate, type Violation } from "../policies/testing/harness";
import { settle } from "./fleet-run";
import { offlineEngineScratch } from "./legacy-policy-pack";
import { engineViewOfRegistrations } from "./policy-resources";
import { installRecordingMocks, valueOf, type Registration } from "./pulumi-mocks";
import { readStackConfig, repoRoot } from "./stack-files";

/**
 * The policy pack judged by the real Pulumi engine, on what the fleet's program registers.
 *
 * The fleet's program cannot run here as it is: the Go module proxy refuses the hcloud and
 * command plugins (and every Kubernetes provider release but one). So the program runs under
 * the test mocks, and tests/policy-engine-replay/index.cjs registers the same resources again in
 * the real engine (CLI from scripts/toolchain) with the real Kubernetes provider 4.25.0 (built
 * by scripts/toolchain from the Go module proxy), behind a provider whose kubeconfig is unknown
 * at preview, exactly as on a fresh Hetzner stack. Stand-ins, named as such: hcloud and command
 * resources and Helm releases are components there (see the replay program).
 *
 * Each scenario goes to both the engine and the mock harness (policies/testing/harness.ts), and
 * the two must report the same violations: the harness may never pass what the engine fails.
 */

const execFileAsync = promisify(execFile);
/** The one Kubernetes provider release the Go module proxy serves (scripts/toolchain pins block). */
const kubernetesPlugin = "kubernetes@4.25.0";
const kubernetesVersion = kubernetesPlugin.split("@")[1]!;
const toolchain = path.join(repoRoot, "scripts", "toolchain");
const scratchRoot = path.join(repoRoot, "node_modules", ".cache", "policy-pack-real-engine");
let scratch = "";
let env: NodeJS.ProcessEnv = {};

async function run(command: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { cwd: path.join(scratch, "program"), env: { ...env, ...extra }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout = "", stderr = "" } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === "number" ? code : 1, output: stdout + stderr };
  }
}

/** Runs a committed stack's program under the mocks (as infra/index.ts does) and records it. */
async function registrationsOf(stack: string, deployed: Record<string, string> = {}): Promise<Registration[]> {
  const tenantVersions = Object.fromEntries(Object.entries(deployed).map(([tenant, version]) => [tenant, { deployed: version, target: version, controlPlaneSteps: [], workerSteps: [] }]));
  const registrations = await installRecordingMocks("capi-fleet", stack, true, { tenantVersions });
  const { values, secretKeys } = readStackConfig(stack);
  pulumi.runtime.setAllConfig(values, secretKeys);
  const config = loadFleetConfig();
  const outputs = createFleet(config, `capi-fleet-${stack}`, planTenantUpgradesOrStop(config, new Map(Object.entries(deployed))));
  await valueOf(outputs.managementKubeconfig);
  await settle(registrations);
  // A JSON copy: component inputs may hold resource objects (functions, Outputs), which JSON drops as the engine would.
  return JSON.parse(JSON.stringify(registrations)) as Registration[];
}

const policyConfigPath = (stack: string) => path.join(repoRoot, "policies", "config", `${stack}.json`);

/**
 * `type::name` of a URN: the same resource in the mock run and in the engine. A stack-wide
 * violation has no URN in the harness; the engine files it under the stack resource.
 */
const resourceOf = (urn: string): string => {
  const [, , qualifiedType = "", name = ""] = urn.split("::");
  const type = qualifiedType.split("$").pop() ?? "";
  return urn && type !== "pulumi:pulumi:Stack" ? `${type}::${name}` : "";
};

/** A violation as both sides can state it. */
interface Finding {
  policy: string;
  level: string;
  resource: string;
  message: string;
}

const normalise = (findings: Finding[]): Finding[] =>
  [...findings].sort((a, b) => `${a.policy}${a.resource}${a.message}`.localeCompare(`${b.policy}${b.resource}${b.message}`));

/** The engine prints each violation as the rule's description, a newline, then the message. */
function withoutDescription(policy: string, message: string): string {
  const description = allRules.find((rule) => rule.name === policy)?.description;
  return description !== undefined && message.startsWith(`${description}\n`) ? message.slice(description.length + 1) : message;
}

/** The engine's policy events (`--event-log`), markup and the rule's description stripped. */
function engineFindings(eventLog: string): Finding[] {
  return eventLog
    .split("\n")
    .filter((line) => line.trim())
    .flatMap((line) => {
      const event = (JSON.parse(line) as { policyEvent?: { resourceUrn?: string; message: string; policyName: string; enforcementLevel: string } }).policyEvent;
      if (!event) return [];
      // eslint-disable-next-line no-control-regex
      const message = event.message.replace(/<\{%[^%]*%\}>/g, "").replace(/\u001b\[[0-9;]*m/g, "").trim();
      return [{ policy: event.policyName, level: event.enforcementLevel, resource: resourceOf(event.resourceUrn ?? ""), message: withoutDescription(event.policyName, message) }];
    });
}

const harnessFindings = (violations: Violation[]): Finding[] =>
  violations.map((violation) => ({ policy: violation.policy, level: violation.level, resource: resourceOf(violation.urn), message: violation.message }));

/** Previews `registrations` as `stack` in the real engine, with that stack's policy config. */
async function enginePreview(stack: string, registrations: readonly Registration[]): Promise<{ code: number; output: string; findings: Finding[] }> {
  const dir = mkdtempSync(path.join(scratch, "preview-"));
  const replay = path.join(dir, "registrations.json");
  const eventLog = path.join(dir, "events.jsonl");
  writeFileSync(replay, JSON.stringify(registrations), { mode: 0o600 });
  const result = await run(
    "pulumi",
    ["preview", "--stack", stack, "--non-interactive", "--policy-pack", path.join(scratch, "pack"), "--policy-pack-config", policyConfigPath(stack), "--event-log", eventLog],
    { CAPI_FLEET_REPLAY: replay, CAPI_FLEET_REPLAY_KUBERNETES_VERSION: kubernetesVersion },
  );
  let log = "";
  try {
    log = readFileSync(eventLog, "utf8");
  } catch {
    // no event log: the preview did not start; the output says why
  }
  return { ...result, findings: engineFindings(log) };
}

async function harness(stack: string, registrations: readonly Registration[]): Promise<Finding[]> {
  const config = JSON.parse(readFileSync(policyConfigPath(stack), "utf8")) as Record<string, unknown>;
  return harnessFindings(await evaluate(allRules, engineViewOfRegistrations(registrations), config));
}

/** The registration of a custom resource by type and name. */
function find(registrations: Registration[], type: string, name?: (candidate: string) => boolean): Registration {
  const found = registrations.filter((registration) => registration.type === type && (name === undefined || name(registration.name)));
  expect(found.length, type).toBeGreaterThan(0);
  return found[0]!;
}

/**
 * Edits what a component declared for one of its children, and the child's inputs alike: a
 * hand-edited program, seen the same way by resource and stack rules.
 */
function editDeclared(registrations: Registration[], child: Registration, edit: (props: Record<string, unknown>) => void): void {
  edit(child.inputs);
  const parent = registrations.find((registration) => registration.urn === child.parent);
  const declared = parent?.outputs?.[declaredOutputName] as DeclaredResource[] | undefined;
  const entry = declared?.find((candidate) => candidate.urn === child.urn);
  expect(entry, `declared ${child.name}`).toBeDefined();
  edit(entry!.props);
}

type Props = Record<string, Record<string, unknown>>;

/** Seeds one violation of every other stack rule into prod's registrations (deployed: payments v1.35.3). */
function seedViolations(registrations: Registration[]): void {
  // provider-contracts: a Cluster API older than CAPH's range; kubelet-api-admin-patches: with a
  // class version that needs system:kubelet-api-admin (catalog.kubeletApiAdminRule).
  editDeclared(registrations, find(registrations, resourceTypes.coreProvider), (props) => ((props as Props).spec!.version = "v1.9.0"));
  editDeclared(registrations, find(registrations, resourceTypes.clusterClass), (props) => {
    const spec = (props as Props).spec!;
    spec.kubernetesVersions = [...(spec.kubernetesVersions as string[]), "v1.36.9"];
  });
  // tenant-worker-lag: planning handed to an extension, with an upgrade under way (payments).
  editDeclared(registrations, find(registrations, resourceTypes.clusterClass), (props) => ((props as Props).spec!.upgrade = { external: { generateUpgradePlanExtension: "plan.example" } }));
  // fleet-version-drift (advisory): edge three minors behind the newest tenant.
  editDeclared(registrations, find(registrations, resourceTypes.cluster, (name) => name.endsWith("edge")), (props) => {
    ((props as Props).spec!.topology as { version: string }).version = "v1.32.0";
  });
  // tenant-version-in-cluster-class: analytics' version dropped from the class.
  const analytics = find(registrations, resourceTypes.cluster, (name) => name.endsWith("analytics"));
  editDeclared(registrations, find(registrations, resourceTypes.clusterClass), (props) => {
    const spec = (props as Props).spec!;
    const version = ((analytics.inputs as Props).spec!.topology as { version: string }).version;
    spec.kubernetesVersions = (spec.kubernetesVersions as string[]).filter((candidate) => candidate !== version);
  });
  // tenant-has-hcloud-ccm: payments' CCM selects no Cluster.
  editDeclared(registrations, find(registrations, resourceTypes.helmChartProxy, (name) => name.includes("payments") && name.includes("ccm")), (props) => {
    (props as Props).spec!.clusterSelector = { matchLabels: { "example.com/nothing": "selected" } };
  });
  // lb-drain-before-cluster-delete: edge's drain runs something else.
  editDeclared(registrations, find(registrations, resourceTypes.localCommand, (name) => name.includes("edge") && name.includes("drain")), (props) => (props.delete = "true"));
  // cluster-waits-for-caren: CAREN's gate names another ExtensionConfig.
  editDeclared(registrations, find(registrations, resourceTypes.extensionConfigPatch), (props) => ((props as Props).metadata!.name = "another-extension"));
}

beforeAll(async () => {
  await execFileAsync(toolchain, ["build", "cli", kubernetesPlugin], { cwd: repoRoot, timeout: 50 * 60_000, maxBuffer: 16 * 1024 * 1024 });
  const cache = /^cache: (.+)$/m.exec((await execFileAsync(toolchain, ["pins"], { cwd: repoRoot })).stdout)?.[1] ?? "";
  const plugin = (await execFileAsync(toolchain, ["plugin-path", kubernetesPlugin], { cwd: repoRoot })).stdout.trim();
  ({ scratch, env } = offlineEngineScratch(repoRoot, scratchRoot, cache, "policy-pack-real-engine"));
  writeFileSync(path.join(scratch, "program", "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
  writeFileSync(path.join(scratch, "program", "package.json"), '{ "name": "policy-engine-replay", "main": "index.cjs" }\n');
  symlinkSync(path.join(repoRoot, "tests", "policy-engine-replay", "index.cjs"), path.join(scratch, "program", "index.cjs"));
  // preview's --event-log (machine-readable policy events) exists only with debug commands on
  // (pulumi/pkg/v3@v3.248.0: cmd/pulumi/operations/preview.go).
  env.PULUMI_DEBUG_COMMANDS = "true";
  const installed = await run("pulumi", ["plugin", "install", "resource", "kubernetes", kubernetesVersion, "--file", plugin]);
  expect(installed.code, installed.output).toBe(0);
  for (const stack of ["dev", "prod"]) {
    const created = await run("pulumi", ["stack", "init", stack]);
    expect(created.code, created.output).toBe(0);
  }
}, 55 * 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the policy pack in the real engine, on the fleet's resources behind an unknown provider", () => {
  it.each(["dev", "prod"])("%s, fresh stack: no violation, and the mock harness agrees", async (stack) => {
    const registrations = await registrationsOf(stack);
    const engine = await enginePreview(stack, registrations);
    expect(engine.output).toContain("capi-fleet@v0.1.0");
    expect(engine.findings, engine.output).toEqual([]);
    expect(engine.code, engine.output).toBe(0);
    expect(await harness(stack, registrations)).toEqual([]);
  }, 300_000);

  it("prod with a violation of every stack rule: each fires, the preview fails, and the mock harness reports the same", async () => {
    const registrations = await registrationsOf("prod");
    const deployed = registrations.find((registration) => registration.type === resourceTypes.deployedState)!;
    // tenant-not-removed: "retired" runs, but the program no longer declares it.
    // management-k3s-upgrade-path: the servers run a newer minor than the Plan asks for (a downgrade).
    const k3s = parseK3sVersion(catalog.k3s.version)!;
    deployed.outputs = {
      [deployedVersionsOutputName]: { payments: "v1.35.3", retired: "v1.34.6" },
      [deployedManagementK3sVersionOutputName]: `v${k3s.major}.${k3s.minor + 1}.0+k3s1`,
    };
    seedViolations(registrations);
    const engine = await enginePreview("prod", registrations);
    expect(engine.code, engine.output).not.toBe(0);
    const fired = new Set(engine.findings.map((finding) => finding.policy));
    for (const rule of [
      "provider-contracts",
      "kubelet-api-admin-patches",
      "tenant-upgrade-path",
      "tenant-worker-lag",
      "tenant-version-in-cluster-class",
      "tenant-has-hcloud-ccm",
      "lb-drain-before-cluster-delete",
      "cluster-waits-for-caren",
      "fleet-version-drift",
      "tenant-not-removed",
      "management-k3s-upgrade-path",
    ]) {
      expect(fired, `${rule} in:\n${engine.output}`).toContain(rule);
    }
    expect(normalise(engine.findings)).toEqual(normalise(await harness("prod", registrations)));
  }, 300_000);
});
