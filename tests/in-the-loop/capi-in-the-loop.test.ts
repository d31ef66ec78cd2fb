import { afterAll, beforeAll, describe, expect } from "vitest";
import { parse as parseYaml } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { carenExtensionNames } from "../../infra/model/platform/caren-extensions";
import { carenCiliumAddonKey, carenHelmAddonsConfigMap, ciliumHelmAddonEntry, helmAddonEntryText } from "../../infra/model/platform/caren-helm-addons";
import { autoscalerAnnotations } from "../../infra/model/platform/cluster-autoscaler";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import { caphServerOwnershipLabel, tenantServerLabelSelector } from "../../infra/model/tenant/tenant-firewall";
import { isUpgradeProblem, planTenantUpgrade } from "../../infra/model/versions/tenant-upgrades";
import { createNamespacesOf, dependencyOrder, eventually, conditionOf, isPatch, objectOf, responseMessage, startCapiInTheLoop, type CapiInTheLoop, type KubeObject } from "../support/capi-in-the-loop";
import { loopTest } from "../support/capi-loop-test";
import { runStack } from "../support/fleet-run";
import { lostLeaves } from "../support/kube-apiserver";
import type { RecordedRequest } from "../support/recording-extension";
import { sourceOfGroup } from "../support/upstream-crds";

// The fleet's ClusterClass and tenant Clusters reconciled by Cluster API's own controllers and
// webhooks (built from sigs.k8s.io/cluster-api at the catalog's version; tests/support/capi-in-the-loop.ts):
// every Kubernetes object the dev and prod stacks declare (collected under mocks, as the conformance
// test does) is applied for real, with server-side apply, in the program's dependency order. Then:
// the class's variables, CAPI's admission of the Clusters (and refusal of broken ones), the topology
// CAPI generates from them, and what reaches the runtime extension.
//
// CAREN's place is taken by a recording Runtime SDK extension (tests/support/recording-extension.ts): a
// stand-in for CAREN's transport, handler names and published variable schemas, not for its logic.
// It registers the handlers CAREN registers, under the ExtensionConfig name CAREN's chart gives,
// answers DiscoverVariables with the schemas CAREN builds from its CRDs (tests/support/caren-variables.ts),
// records every request and answers Success with no patches (unless a test overrides an answer).
// Nothing provisions servers: no CAPH or CAAPH controller runs,
// so a Cluster stops at its generated topology (which is what is checked).

/** First run on a clean machine builds kube-apiserver + etcd and the CAPI managers (minutes each on 2 cores). */
const buildTimeoutMs = 75 * 60_000;
const stacks = ["dev", "prod"] as const;
const reconcileTimeoutMs = 120_000;

let loop: CapiInTheLoop | undefined;
let failed = false;
const report: string[] = [];
const objects: Record<(typeof stacks)[number], KubeObject[]> = { dev: [], prod: [] };
const applyWarnings: string[] = [];
/** Objects whose CRDs no source could provide (a clone without the upstream data copy): not applied. */
const unverified: Record<string, { count: number; reason: string }> = {};
/** Why the topology cannot be checked (its CAPH templates are unverified), if so. */
let topologyUnverified: string | undefined;

const L = (): CapiInTheLoop => {
  if (!loop) throw new Error("Cluster API did not start (see beforeAll)");
  return loop;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const clusterObjects = (stack: (typeof stacks)[number]) => objects[stack].filter((o) => o.kind === "Cluster");
const allClusters = () => stacks.flatMap(clusterObjects);
const classObject = () => objects.dev.find((o) => o.kind === "ClusterClass")!;
const minorOf = (version: string) => Number(version.replace(/^v/, "").split(".")[1]);
/** The dev stack's first tenant: the base of the admission probes. */
const devTenant = () => clusterObjects("dev")[0]!;
/** The tenant the chained upgrade starts from: the lowest version among the stacks' tenants. */
const upgradeTenant = () => [...allClusters()].sort((a, b) => minorOf(topologyOf(a).version) - minorOf(topologyOf(b).version))[0]!;
/** The tenant that gets deleted: a prod tenant other than the upgraded one. */
const deletedTenant = () => clusterObjects("prod").filter((c) => c !== upgradeTenant()).at(-1)!;
/** The newest version the class lists: the target of the chained upgrade. */
const newestListed = () => (classObject().spec as { kubernetesVersions: string[] }).kubernetesVersions.at(-1)!;

interface TopologyVariable {
  name: string;
  value: unknown;
}
interface TopologySpec {
  version: string;
  classRef: { name: string; namespace: string };
  controlPlane: { replicas: number };
  variables: TopologyVariable[];
  workers: { machineDeployments: { name: string; replicas?: number; metadata?: { annotations?: Record<string, string> }; failureDomain: string; variables?: { overrides?: TopologyVariable[] } }[] };
}
const topologyOf = (cluster: KubeObject) => (cluster.spec as { topology: TopologySpec }).topology;
const variablesOf = (list: TopologyVariable[] | undefined) => Object.fromEntries((list ?? []).map((v) => [v.name, v.value]));

/** The names of the objects CAPI generated for a Cluster, and the objects. */
async function generated(cluster: KubeObject) {
  const namespace = cluster.metadata.namespace!;
  const selector = `cluster.x-k8s.io/cluster-name=${cluster.metadata.name!}`;
  const [hetznerCluster] = await L().list("infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster", namespace, selector);
  const [controlPlane] = await L().list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", namespace, selector);
  const machineDeployments = await L().list("cluster.x-k8s.io/v1beta2", "MachineDeployment", namespace, selector);
  const ref = (object: unknown, ...keys: string[]) => keys.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], object) as { name?: string } | undefined;
  const infraTemplate = async (name: string | undefined) =>
    name ? L().get("infrastructure.cluster.x-k8s.io/v1beta1", "HCloudMachineTemplate", name, namespace) : undefined;
  const controlPlaneMachine = await infraTemplate(ref(controlPlane?.spec, "machineTemplate", "spec", "infrastructureRef")?.name);
  const workers = await Promise.all(
    machineDeployments.map(async (md) => ({
      md,
      infrastructure: await infraTemplate(ref(md.spec, "template", "spec", "infrastructureRef")?.name),
      bootstrap: await (async () => {
        const name = ref(md.spec, "template", "spec", "bootstrap", "configRef")?.name;
        return name ? L().get("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", name, namespace) : undefined;
      })(),
    })),
  );
  return { hetznerCluster, controlPlane, controlPlaneMachine, workers };
}

const at = (object: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((node, key) => (node === undefined || node === null ? undefined : (node as Record<string, unknown>)[key]), object);

/**
 * Where the objects CAPI generated for the Cluster `actual` differ from the settings the Cluster
 * `expected` declares (its topology and variables). Empty when they carry that tenant's settings.
 */
async function settingsMismatches(expected: KubeObject, actual: KubeObject): Promise<string[]> {
  const problems: string[] = [];
  const check = (what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  const topology = topologyOf(expected);
  const vars = variablesOf(topology.variables);
  const objects = await generated(actual);
  const hc = objects.hetznerCluster?.spec;
  const regions = vars.hcloudRegions as string[];
  check("HetznerCluster controlPlaneRegions", at(hc, "controlPlaneRegions"), regions);
  check("HetznerCluster controlPlaneLoadBalancer.type", at(hc, "controlPlaneLoadBalancer.type"), vars.hcloudAPILoadBalancerType);
  check("HetznerCluster controlPlaneLoadBalancer.region", at(hc, "controlPlaneLoadBalancer.region"), regions[0]);
  check("HetznerCluster hcloudNetwork", at(hc, "hcloudNetwork"), vars.hcloudNetwork);
  check("HetznerCluster hcloudPlacementGroups", at(hc, "hcloudPlacementGroups") ?? [], vars.hcloudPlacementGroups);
  check("HetznerCluster sshKeys.hcloud", at(hc, "sshKeys.hcloud") ?? [], vars.hcloudSSHKeys);
  // CAPH labels the servers caph-cluster-<HetznerCluster name>=owned; the tenant's firewall selects that label.
  const hetznerClusterName = objects.hetznerCluster?.metadata.name ?? "";
  const label = caphServerOwnershipLabel(hetznerClusterName);
  check("HetznerCluster name, as the firewall's label selector", `${label.key}=${label.value}`, tenantServerLabelSelector(expected.metadata.name!));
  const kcp = objects.controlPlane?.spec;
  check("KubeadmControlPlane replicas", at(kcp, "replicas"), topology.controlPlane.replicas);
  const kcpVersion = at(kcp, "version") as string | undefined;
  const kcpCommands = JSON.stringify(at(kcp, "kubeadmConfigSpec.preKubeadmCommands") ?? []);
  if (!kcpVersion || !kcpCommands.includes(kcpVersion)) problems.push(`KubeadmControlPlane preKubeadmCommands do not install ${kcpVersion ?? "?"}: ${kcpCommands}`);
  const cpm = objects.controlPlaneMachine?.spec;
  check("control-plane HCloudMachineTemplate type", at(cpm, "template.spec.type"), vars.hcloudControlPlaneMachineType);
  check("control-plane HCloudMachineTemplate imageName", at(cpm, "template.spec.imageName"), vars.hcloudControlPlaneImageName);
  // enabledIf: the placement-group patch applies only when the variable is non-empty.
  check("control-plane HCloudMachineTemplate placementGroupName", at(cpm, "template.spec.placementGroupName"), vars.hcloudControlPlanePlacementGroup || undefined);
  check("MachineDeployments", objects.workers.map((w) => w.md.metadata.labels?.["topology.cluster.x-k8s.io/deployment-name"]).sort(), topology.workers.machineDeployments.map((md) => md.name).sort());
  for (const pool of topology.workers.machineDeployments) {
    const worker = objects.workers.find((w) => w.md.metadata.labels?.["topology.cluster.x-k8s.io/deployment-name"] === pool.name);
    if (!worker) continue;
    const overrides = { ...vars, ...variablesOf(pool.variables?.overrides) };
    // An autoscaled pool has no topology replicas: its own track checks them.
    if (pool.replicas !== undefined) check(`MachineDeployment ${pool.name} replicas`, at(worker.md.spec, "replicas"), pool.replicas);
    check(`MachineDeployment ${pool.name} failureDomain`, at(worker.md.spec, "template.spec.failureDomain"), pool.failureDomain);
    check(`worker ${pool.name} HCloudMachineTemplate type`, at(worker.infrastructure?.spec, "template.spec.type"), overrides.hcloudWorkerMachineType);
    check(`worker ${pool.name} HCloudMachineTemplate imageName`, at(worker.infrastructure?.spec, "template.spec.imageName"), overrides.hcloudWorkerImageName);
    check(`worker ${pool.name} HCloudMachineTemplate placementGroupName`, at(worker.infrastructure?.spec, "template.spec.placementGroupName"), overrides.hcloudWorkerPlacementGroup || undefined);
    const mdVersion = at(worker.md.spec, "template.spec.version") as string | undefined;
    const commands = JSON.stringify(at(worker.bootstrap?.spec, "template.spec.preKubeadmCommands") ?? []);
    if (!mdVersion || !commands.includes(mdVersion)) problems.push(`worker ${pool.name} KubeadmConfigTemplate preKubeadmCommands do not install ${mdVersion ?? "?"}: ${commands}`);
  }
  return problems;
}

/** A dry-run create of a copy of a program Cluster under another name, after `mutate`. */
async function probeCluster(base: KubeObject, suffix: string, mutate: (topology: TopologySpec) => void) {
  const copy = structuredClone(base);
  copy.metadata = { name: `${base.metadata.name!}-${suffix}`, namespace: base.metadata.namespace, labels: base.metadata.labels };
  mutate(topologyOf(copy));
  return L().apply(copy, { dryRun: true });
}

const generatePatches = (): RecordedRequest[] => L().extension.requests.filter((r) => r.hook === "GeneratePatches");
/** The class's CAREN patch entries (external, with their discovery handler). */
const carenPatchEntries = () =>
  ((classObject().spec as { patches: { name: string; external?: { generatePatchesExtension: string; discoverVariablesExtension?: string } }[] }).patches).filter(
    (p): p is { name: string; external: { generatePatchesExtension: string; discoverVariablesExtension?: string } } => p.external !== undefined,
  );
/** The first tenant Cluster (of either stack) whose clusterConfig sets `key`. */
const clusterWith = (key: string) => {
  const found = allClusters().find((c) => (variablesOf(topologyOf(c).variables).clusterConfig as Record<string, unknown>)[key] !== undefined);
  if (!found) throw new Error(`no tenant of the stacks sets clusterConfig.${key}`);
  return found;
};
const own = (qualified: string) => qualified.slice(0, qualified.indexOf("."));

describe(`Cluster API ${catalog.clusterApi.version} in the loop: the fleet's ClusterClass and Clusters reconciled by CAPI's own controllers and webhooks`, () => {
  beforeAll(async () => {
    const started = Date.now();
    loop = await startCapiInTheLoop({ buildTimeoutMs, progress: (line) => report.push(`  ${seconds(Date.now() - started)}: ${line}`) });
    report.push(
      `${loop.capi.version}: ${loop.capi.buildInfo}; ${loop.api.binaries.kubeApiserverVersion}; ${loop.crds.installed} CRDs (${loop.crds.converted.length} with conversion webhooks)`,
      `start-up: ${Object.entries(loop.timings).map(([phase, ms]) => `${phase} ${seconds(ms)}`).join(", ")}`,
      ...loop.sources.map((s) => ("unavailable" in s ? `CRDs ${s.source.name}: NOT VERIFIED (${s.unavailable})` : `CRDs ${s.source.name}: ${s.via ?? `${s.source.module}@${s.source.version}`}`)),
      "unavailable" in loop.carenSchemas ? `CAREN variable schemas: NOT VERIFIED (${loop.carenSchemas.unavailable})` : `CAREN variable schemas (the stand-in's DiscoverVariables answers): ${loop.carenSchemas.via}`,
    );
    const applyStarted = Date.now();
    for (const stack of stacks) {
      const { registrations } = await runStack(stack);
      const ordered = dependencyOrder(registrations);
      // Namespaces the program expects to exist (created by charts, the operator, …) before anything else.
      await createNamespacesOf(L(), ordered);
      for (const registration of ordered) {
        const object = objectOf(registration);
        const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0]! : "";
        const carenSchemas = L().carenSchemas;
        if (object.kind === "Cluster" && "unavailable" in carenSchemas) {
          // The class's clusterConfig comes from CAREN's discovery; without its schema CAPI refuses every Cluster.
          const entry = (unverified[`${object.apiVersion} ${object.kind}`] ??= { count: 0, reason: `CAREN's variable schemas are unavailable (${carenSchemas.unavailable})` });
          entry.count += 1;
          topologyUnverified = `CAREN's variable schemas are unavailable (${carenSchemas.unavailable}), so CAPI admits no Cluster of the class`;
          continue;
        }
        const missing = L().sources.find((s) => "unavailable" in s && s.source === sourceOfGroup(group));
        if (missing && "unavailable" in missing) {
          const entry = (unverified[`${object.apiVersion} ${object.kind}`] ??= { count: 0, reason: missing.unavailable });
          entry.count += 1;
          if (group === "infrastructure.cluster.x-k8s.io") topologyUnverified = `CAPH's CRDs are unavailable (${missing.unavailable}), so CAPI cannot reconcile the topology`;
          continue;
        }
        const response = isPatch(registration)
          ? await L().apply(object, { manager: "pulumi-kubernetes-patch", force: false })
          : await L().apply(object);
        const label = `${stack}: ${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name!}`;
        if (response.status >= 300) throw new Error(`${label}: HTTP ${response.status}: ${responseMessage(response)}`);
        if (response.warnings.length > 0) applyWarnings.push(`${label}: ${response.warnings.join(" | ")}`);
        if (!isPatch(registration)) objects[stack].push(object);
      }
    }
    report.push(
      `applied ${objects.dev.length} dev + ${objects.prod.length} prod objects in ${seconds(Date.now() - applyStarted)}`,
      ...applyWarnings.map((w) => `  apply warning: ${w}`),
      ...Object.entries(unverified).map(([kind, { count, reason }]) => `  NOT VERIFIED ${count} × ${kind}: ${reason}`),
      ...(topologyUnverified ? [`NOT VERIFIED: the topology checks below cannot run, and fail unless tests/unverified.json declares them: ${topologyUnverified}`] : []),
    );
  }, buildTimeoutMs + 10 * 60_000);

  afterAll(async () => {
    const kept = await loop?.stop(failed);
    if (kept) report.push(`managers' logs kept in ${kept}`);
    if (report.length > 0) console.log(`capi in the loop:\n  ${report.join("\n  ")}`);
  }, 60_000);

  const test = loopTest({ skipReason: () => topologyUnverified, fail: () => (failed = true), logs: () => L().logs() });
  const track = (name: string, body: () => Promise<void>, timeout = reconcileTimeoutMs + 60_000): void => {
    test(name, body, timeout);
  };

  track("the ClusterClass reaches VariablesReady=True with every declared variable in status (negative control: a patch whose DiscoverVariables handler does not exist)", async () => {
    const declared = classObject();
    const started = Date.now();
    const reconciled = await eventually("ClusterClass VariablesReady=True", reconcileTimeoutMs, async () => {
      const got = await L().get(declared.apiVersion, "ClusterClass", declared.metadata.name!, declared.metadata.namespace);
      return conditionOf(got, "VariablesReady")?.status === "True" ? got : undefined;
    });
    const statusVariables = (reconciled.status as { variables?: { name: string; definitions: { from: string }[] }[] }).variables ?? [];
    const declaredNames = ((declared.spec as { variables: { name: string }[] }).variables).map((v) => v.name);
    report.push(`ClusterClass VariablesReady=True after ${seconds(Date.now() - started)}; status.variables: ${statusVariables.map((v) => `${v.name} (from ${v.definitions.map((d) => d.from).join(",")})`).join(", ")}`);
    // The class's own variables inline; clusterConfig once per CAREN patch entry, from its discovery,
    // the two identical definitions accepted (no conflict).
    const discovering = carenPatchEntries().map((p) => p.name);
    expect(discovering.length).toBe(2);
    expect(statusVariables.map((v) => v.name).sort()).toEqual([...declaredNames, "clusterConfig"].sort());
    for (const variable of statusVariables) {
      expect(variable.definitions.map((d) => d.from), variable.name).toEqual(variable.name === "clusterConfig" ? discovering : ["inline"]);
    }
    expect((statusVariables.find((v) => v.name === "clusterConfig") as { definitionsConflict?: boolean }).definitionsConflict).toBe(false);

    // Negative control: the same class with one more external patch whose variables come from a handler nobody serves.
    const broken = structuredClone(declared);
    broken.metadata = { name: `${declared.metadata.name!}-probe`, namespace: declared.metadata.namespace };
    const names = carenExtensionNames();
    (broken.spec as { patches: unknown[] }).patches.push({
      name: "probe",
      external: { generatePatchesExtension: names.clusterPatches("generic"), discoverVariablesExtension: `nosuchconfigvars-dv.${names.extensionConfig}` },
    });
    const applied = await L().apply(broken);
    expect(applied.status, responseMessage(applied)).toBeLessThan(300);
    const condition = await eventually("probe ClusterClass VariablesReady=False", reconcileTimeoutMs, async () => {
      const got = await L().get(broken.apiVersion, "ClusterClass", broken.metadata.name!, broken.metadata.namespace);
      const c = conditionOf(got, "VariablesReady");
      return c?.status === "False" ? c : undefined;
    });
    report.push(`negative control (unknown DiscoverVariables handler): VariablesReady=False: ${condition.message ?? condition.reason ?? ""}`);
    await L().api.request("DELETE", await L().objectPath(broken));
  });

  track("CAPI's webhooks admitted every tenant Cluster, and reject a version not in kubernetesVersions, a region outside the schema, a missing required variable and a downgrade", async () => {
    const clusters = allClusters();
    expect(clusters.length).toBeGreaterThanOrEqual(2);
    for (const cluster of clusters) {
      expect(await L().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace), cluster.metadata.name).toBeDefined();
    }
    const base = devTenant();
    // Positive control in the same run: the unchanged copy is admitted.
    const unchanged = await probeCluster(base, "probe", () => {});
    expect(unchanged.status, responseMessage(unchanged)).toBeLessThan(300);

    const listed = catalog.tenantKubernetesVersions as readonly string[];
    const version = topologyOf(base).version;
    const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number) as [number, number, number];
    const unlisted = `v${major}.${minor}.${patch + 1}`;
    expect(listed).not.toContain(unlisted);
    const cases: [string, (t: TopologySpec) => void, RegExp][] = [
      [`version ${unlisted} (not in kubernetesVersions)`, (t) => (t.version = unlisted), /kubernetesVersions|not.*(listed|allowed|supported)|version/i],
      ["hcloudRegions [xyz1]", (t) => (t.variables.find((v) => v.name === "hcloudRegions")!.value = ["xyz1"]), /hcloudRegions.*xyz1|xyz1.*supported values/is],
      ["no hcloudControlPlaneMachineType", (t) => (t.variables = t.variables.filter((v) => v.name !== "hcloudControlPlaneMachineType")), /hcloudControlPlaneMachineType/],
    ];
    for (const [what, mutate, pattern] of cases) {
      const response = await probeCluster(base, "probe", mutate);
      report.push(`rejected ${what}: HTTP ${response.status}: ${responseMessage(response)}`);
      expect(response.status, what).toBeGreaterThanOrEqual(400);
      expect(responseMessage(response), what).toMatch(pattern);
    }
    // A downgrade is an update of the live Cluster (dry-run: nothing changes).
    const lower = listed.find((v) => Number(v.replace(/^v/, "").split(".")[1]) < minor);
    expect(lower).toBeDefined();
    const downgrade = structuredClone(base);
    topologyOf(downgrade).version = lower!;
    const response = await L().apply(downgrade, { dryRun: true });
    report.push(`rejected downgrade ${version} → ${lower!}: HTTP ${response.status}: ${responseMessage(response)}`);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(responseMessage(response)).toMatch(/decreas|downgrade|lower/i);
  });

  track("TopologyReconciled=True for every tenant, and what CAPI generated carries that tenant's settings (negative control: another tenant's settings)", async () => {
    const clusters = allClusters();
    const started = Date.now();
    for (const cluster of clusters) {
      await eventually(
        `Cluster ${cluster.metadata.name!} TopologyReconciled=True`,
        reconcileTimeoutMs,
        async () => {
          const got = await L().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace);
          return conditionOf(got, "TopologyReconciled")?.status === "True" ? got : undefined;
        },
        async () => JSON.stringify((await L().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace))?.status ?? {}).slice(0, 2000),
      );
    }
    report.push(`all ${clusters.length} Clusters TopologyReconciled=True ${seconds(Date.now() - started)} after the first check`);
    for (const cluster of clusters) {
      expect(await settingsMismatches(cluster, cluster), cluster.metadata.name).toEqual([]);
    }
    // Both sides of every enabledIf: some tenant has a placement group where another has none.
    const placement = await Promise.all(clusters.map(async (c) => at((await generated(c)).controlPlaneMachine?.spec, "template.spec.placementGroupName")));
    const workerPlacement = (await Promise.all(clusters.map(async (c) => (await generated(c)).workers.map((w) => at(w.infrastructure?.spec, "template.spec.placementGroupName"))))).flat();
    report.push(`enabledIf: control-plane placementGroupName per tenant ${JSON.stringify(placement)}; worker ${JSON.stringify(workerPlacement)}`);
    expect(workerPlacement).toContain(undefined);
    expect(placement.some((p) => p !== undefined)).toBe(true);
    // The other side of each enabledIf, on a real Cluster: a copy of dev-a whose control plane has no
    // placement group and whose workers have one.
    const devA0 = devTenant();
    const flipped = structuredClone(devA0);
    flipped.metadata = { name: `${devA0.metadata.name!}-flipped`, namespace: devA0.metadata.namespace, labels: devA0.metadata.labels };
    const flippedTopology = topologyOf(flipped);
    flippedTopology.variables.find((v) => v.name === "hcloudControlPlanePlacementGroup")!.value = "";
    flippedTopology.variables.find((v) => v.name === "hcloudPlacementGroups")!.value = [{ name: "workers-md-0", type: "spread" }];
    for (const md of flippedTopology.workers.machineDeployments) {
      md.variables!.overrides!.find((v) => v.name === "hcloudWorkerPlacementGroup")!.value = "workers-md-0";
    }
    const created = await L().apply(flipped);
    expect(created.status, responseMessage(created)).toBeLessThan(300);
    await eventually(`${flipped.metadata.name} TopologyReconciled=True`, reconcileTimeoutMs, async () => {
      const got = await L().get(flipped.apiVersion, "Cluster", flipped.metadata.name!, flipped.metadata.namespace);
      return conditionOf(got, "TopologyReconciled")?.status === "True" ? true : undefined;
    });
    expect(await settingsMismatches(flipped, flipped)).toEqual([]);
    const flippedObjects = await generated(flipped);
    report.push(
      `enabledIf flipped (${flipped.metadata.name}): control-plane placementGroupName ${JSON.stringify(at(flippedObjects.controlPlaneMachine?.spec, "template.spec.placementGroupName"))}, worker ${JSON.stringify(flippedObjects.workers.map((w) => at(w.infrastructure?.spec, "template.spec.placementGroupName")))}`,
    );
    expect(at(flippedObjects.controlPlaneMachine?.spec, "template.spec.placementGroupName")).toBeUndefined();
    expect(flippedObjects.workers.map((w) => at(w.infrastructure?.spec, "template.spec.placementGroupName"))).toEqual(["workers-md-0"]);
    await L().api.request("DELETE", await L().objectPath(flipped));
    // Negative control: the dev tenant's generated objects do not carry a prod tenant's settings.
    const devA = devTenant();
    const regionsOf = (c: KubeObject) => JSON.stringify(variablesOf(topologyOf(c).variables).hcloudRegions);
    const other = clusterObjects("prod").find((c) => regionsOf(c) !== regionsOf(devA));
    expect(other, "a prod tenant in other regions than the dev tenant").toBeDefined();
    const mismatches = await settingsMismatches(other!, devA);
    report.push(`negative control (${other!.metadata.name!}'s settings vs ${devA.metadata.name!}'s objects): ${mismatches.length} mismatches, e.g. ${mismatches.slice(0, 3).join("; ")}`);
    expect(mismatches.some((m) => m.startsWith("HetznerCluster controlPlaneRegions"))).toBe(true);
  });

  // What CAPI rendered from the class's templates and patches (Go templates, enabledIf, external
  // patches) replaces any emulation: each generated object, re-applied as it is (server-side apply,
  // dry-run, strict field validation), must be accepted without warnings and keep every field.
  // sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/machinehealthcheck/machinehealthcheck_controller.go
  // resolves `spec.remediation.templateRef` (no namespace field) in the check's own namespace before it
  // remediates; the class lives in another namespace and nothing clones the remediation template.
  track("every MachineHealthCheck CAPI generated finds its remediation template in its own namespace, as its controller looks it up (negative control: the class's namespace only)", async () => {
    const clusters = allClusters();
    let checks = 0;
    for (const cluster of clusters) {
      const namespace = cluster.metadata.namespace!;
      const mhcs = await eventually(
        `MachineHealthChecks of ${cluster.metadata.name!}`,
        reconcileTimeoutMs,
        async () => {
          const found = await L().list("cluster.x-k8s.io/v1beta2", "MachineHealthCheck", namespace, `cluster.x-k8s.io/cluster-name=${cluster.metadata.name!}`);
          return found.length > 0 ? found : undefined;
        },
      );
      for (const mhc of mhcs) {
        const ref = at(mhc.spec, "remediation.templateRef") as { apiVersion: string; kind: string; name: string; namespace?: string } | undefined;
        expect(ref, `${namespace}/${mhc.metadata.name!} remediation.templateRef`).toBeDefined();
        expect(ref!.namespace, "the reference carries no namespace of its own").toBeUndefined();
        expect(await L().get(ref!.apiVersion, ref!.kind, ref!.name, namespace), `${ref!.kind} ${namespace}/${ref!.name} for ${mhc.metadata.name!}`).toBeDefined();
        checks += 1;
      }
    }
    // Negative control: without the tenant's copy, the class's own template (in the class's
    // namespace) is all there is, and the lookup the controller makes finds nothing.
    const probe = clusters[0]!;
    const [mhc] = await L().list("cluster.x-k8s.io/v1beta2", "MachineHealthCheck", probe.metadata.namespace, `cluster.x-k8s.io/cluster-name=${probe.metadata.name!}`);
    const ref = at(mhc!.spec, "remediation.templateRef") as { apiVersion: string; kind: string; name: string };
    const copy = (await L().get(ref.apiVersion, ref.kind, ref.name, probe.metadata.namespace))!;
    const removed = await L().api.request("DELETE", await L().objectPath(copy));
    expect(removed.status, responseMessage(removed)).toBeLessThan(300);
    await eventually(`${ref.kind} ${probe.metadata.namespace!}/${ref.name} gone`, reconcileTimeoutMs, async () =>
      (await L().get(ref.apiVersion, ref.kind, ref.name, probe.metadata.namespace)) === undefined ? true : undefined,
    );
    expect(await L().get(ref.apiVersion, ref.kind, ref.name, classObject().metadata.namespace), "the class's own template").toBeDefined();
    const restored = await L().apply({ apiVersion: copy.apiVersion, kind: copy.kind, metadata: { name: ref.name, namespace: probe.metadata.namespace!, labels: copy.metadata.labels ?? {} }, spec: copy.spec });
    expect(restored.status, responseMessage(restored)).toBeLessThan(300);
    report.push(`${checks} MachineHealthChecks, each with its remediation template in its own namespace`);
  });

  track("every object CAPI generated for the tenants passes strict server-side apply as it is (negative control: a wrongly typed field)", async () => {
    let checked = 0;
    const failures: string[] = [];
    let sample: KubeObject | undefined;
    for (const cluster of allClusters()) {
      const objects = await generated(cluster);
      const all = [objects.hetznerCluster, objects.controlPlane, objects.controlPlaneMachine, ...objects.workers.flatMap((w) => [w.md, w.infrastructure, w.bootstrap])];
      for (const object of all) {
        if (!object) {
          failures.push(`${cluster.metadata.name!}: an object is missing`);
          continue;
        }
        const { name, namespace, labels, annotations } = object.metadata;
        const rendered: KubeObject = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, labels, annotations }, spec: object.spec };
        const response = await L().apply(rendered, { dryRun: true, manager: "rendered-check" });
        const label = `${cluster.metadata.name!}: ${object.kind} ${name!}`;
        if (response.status >= 300) failures.push(`${label}: HTTP ${response.status}: ${responseMessage(response)}`);
        else if (response.warnings.length > 0) failures.push(`${label}: warnings: ${response.warnings.join(" | ")}`);
        else if (lostLeaves(rendered, response.json).length > 0) failures.push(`${label}: pruned or changed: ${lostLeaves(rendered, response.json).join("; ")}`);
        else checked += 1;
        if (object.kind === "KubeadmControlPlane") sample ??= rendered;
      }
    }
    report.push(`CAPI-rendered objects re-applied strictly: ${checked} accepted, ${failures.length} problems`);
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(allClusters().length * 5);
    const broken = structuredClone(sample!);
    (at(broken.spec, "kubeadmConfigSpec") as Record<string, unknown>).preKubeadmCommands = "not a list";
    const refused = await L().apply(broken, { dryRun: true, manager: "rendered-check" });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(responseMessage(refused)).toMatch(/preKubeadmCommands/);
  });

  track("CAPI discovered exactly the handlers CAREN registers, among them every handler the class names (negative control: a name CAREN does not register)", async () => {
    const extensionConfig = await L().get("runtime.cluster.x-k8s.io/v1beta2", "ExtensionConfig", carenExtensionNames().extensionConfig);
    const discovered = ((extensionConfig?.status as { handlers?: { name: string; requestHook: { hook: string } }[] } | undefined)?.handlers ?? []).map(
      (h) => `${h.requestHook.hook} ${h.name}`,
    );
    const expected = L().extension.handlers.map((h) => `${h.hook} ${h.name}.${carenExtensionNames().extensionConfig}`);
    report.push(`discovered ${discovered.length} handlers: ${discovered.map((d) => d.split(" ")[1]!.split(".")[0]).join(", ")}`);
    expect([...discovered].sort()).toEqual([...expected].sort());
    const named = ((classObject().spec as { patches: { external?: { generatePatchesExtension?: string } }[] }).patches)
      .map((p) => p.external?.generatePatchesExtension)
      .filter((n): n is string => n !== undefined);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(discovered).toContain(`GeneratePatches ${name}`);
    expect(discovered).not.toContain(`GeneratePatches ${named[0]!.replace(/v\d+configpatch/, "v99configpatch")}`);
  });

  track("GeneratePatches requests name exactly the class's external patch handlers", async () => {
    // Which Cluster a request is for: the `builtin` variable CAPI always sends (builtin.cluster.name).
    const clusterOf = (request: RecordedRequest) =>
      (((request.body.variables as TopologyVariable[] | undefined) ?? []).find((v) => v.name === "builtin")?.value as { cluster?: { name?: string } } | undefined)?.cluster?.name;
    await eventually("GeneratePatches requests for every Cluster", reconcileTimeoutMs, () => {
      const names = new Set(generatePatches().map(clusterOf));
      return Promise.resolve(allClusters().every((c) => names.has(c.metadata.name)) ? true : undefined);
    });
    const referenced = ((classObject().spec as { patches: { external?: { generatePatchesExtension?: string } }[] }).patches)
      .map((p) => p.external?.generatePatchesExtension)
      .filter((n): n is string => n !== undefined)
      .map(own);
    const requested = [...new Set(generatePatches().map((r) => r.handler))].sort();
    report.push(`GeneratePatches: ${generatePatches().length} requests to ${requested.join(", ")}; lifecycle requests: ${[...new Set(L().extension.requests.filter((r) => r.hook !== "GeneratePatches").map((r) => `${r.hook}/${r.handler}`))].join(", ")}`);
    expect(requested).toEqual([...new Set(referenced)].sort());
    // Negative control: the extension's other registered patch handlers (e.g. CAREN's previous generation) got nothing.
    const unreferenced = L().extension.handlers.filter((h) => h.hook === "GeneratePatches" && !referenced.includes(h.name));
    expect(unreferenced.length).toBeGreaterThan(0);
    expect(generatePatches().filter((r) => unreferenced.some((h) => h.name === r.handler))).toEqual([]);
  });

  track("BeforeClusterCreate reaches CAREN's lifecycle handler for every tenant with the whole Cluster, clusterConfig included", async () => {
    // CAREN's lifecycle handlers read `clusterConfig` (addons.cni among it) from the Cluster's
    // topology by name, whichever schema declared it.
    const byCluster = await eventually("BeforeClusterCreate for every tenant", reconcileTimeoutMs, () => {
      const map = new Map(L().extension.requests.filter((r) => r.hook === "BeforeClusterCreate").map((r) => [(r.body.cluster as KubeObject | undefined)?.metadata.name, r]));
      return Promise.resolve(allClusters().every((c) => map.has(c.metadata.name)) ? map : undefined);
    });
    const requests = L().extension.requests.filter((r) => r.hook === "BeforeClusterCreate");
    for (const cluster of allClusters()) {
      const request = byCluster.get(cluster.metadata.name);
      expect(request, `BeforeClusterCreate for ${cluster.metadata.name!}`).toBeDefined();
      expect(request!.handler).toBe("caren-bcc");
      const sent = variablesOf(topologyOf(request!.body.cluster as KubeObject).variables);
      expect(sent.clusterConfig, cluster.metadata.name).toEqual(variablesOf(topologyOf(cluster).variables).clusterConfig);
    }
    report.push(`BeforeClusterCreate: ${requests.length} requests, each with the Cluster's clusterConfig`);
  });

  // An autoscaled pool (prod's analytics md-0): its MachineDeployment topology has the autoscaler's
  // bounds and no replicas (infra/model/platform/cluster-autoscaler.ts). CAPI copies the topology's
  // annotations onto the MachineDeployment and sets replicas only from the topology
  // (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/desired_state.go,
  // computeMachineDeployment); its webhook defaults a new MachineDeployment's replicas to minSize
  // (internal/webhooks/machinedeployment.go, calculateMachineDeploymentReplicas). Scaling through the
  // scale subresource is what the autoscaler does; the topology controller (field manager
  // `capi-topology`: internal/controllers/topology/cluster/structuredmerge/serversidepathhelper.go)
  // must leave it. CAPI's Cluster webhook refuses replicas next to the bounds. Negative control in the
  // same run: the same pool with replicas instead of the bounds, whose scale the controller resets.
  track("an autoscaled pool: CAPI's MachineDeployment has the autoscaler's bounds, replicas CAPI's topology controller does not own or reset, and the lifecycle hooks do not see addons.clusterAutoscaler (negative control: the pool with replicas instead)", async () => {
    type Md = TopologySpec["workers"]["machineDeployments"][number];
    const boundsOf = (md: Md) => md.metadata?.annotations ?? {};
    const autoscaled = allClusters().flatMap((cluster) => topologyOf(cluster).workers.machineDeployments.filter((md) => autoscalerAnnotations.maxSize in boundsOf(md)).map((md) => ({ cluster, md })));
    expect(autoscaled.length, "a stack tenant with an autoscaled pool").toBeGreaterThan(0);
    const { cluster, md: pool } = autoscaled[0]!;
    const minSize = Number(boundsOf(pool)[autoscalerAnnotations.minSize]);
    expect(pool.replicas).toBeUndefined();
    const namespace = cluster.metadata.namespace!;
    const machineDeployment = async (clusterName: string) =>
      (await L().list("cluster.x-k8s.io/v1beta2", "MachineDeployment", namespace, `cluster.x-k8s.io/cluster-name=${clusterName}`)).find(
        (md) => md.metadata.labels?.["topology.cluster.x-k8s.io/deployment-name"] === pool.name,
      );
    const topologyOwnsReplicas = (md: KubeObject) =>
      ((md.metadata as { managedFields?: { manager: string; fieldsV1?: unknown }[] }).managedFields ?? []).some((entry) => entry.manager === "capi-topology" && at(entry.fieldsV1, "f:spec.f:replicas") !== undefined);
    const reconciled = (name: string) =>
      eventually(`Cluster ${name} TopologyReconciled=True`, reconcileTimeoutMs, async () => {
        const got = await L().get(cluster.apiVersion, "Cluster", name, namespace);
        return conditionOf(got, "TopologyReconciled")?.status === "True" ? true : undefined;
      });
    await reconciled(cluster.metadata.name!);
    const md = await eventually(`MachineDeployment ${pool.name} of ${cluster.metadata.name!}`, reconcileTimeoutMs, () => machineDeployment(cluster.metadata.name!));
    expect(md.metadata.annotations).toMatchObject(boundsOf(pool));
    expect(at(md.spec, "template.metadata.annotations")).toMatchObject(boundsOf(pool));
    expect(at(md.spec, "replicas")).toBe(minSize);
    expect(topologyOwnsReplicas(md)).toBe(false);

    // An edit that pins replicas on the autoscaled pool: CAPI's Cluster webhook refuses it
    // (internal/webhooks/cluster.go, validateAutoscalerAnnotationsForCluster).
    const edited = structuredClone(cluster);
    topologyOf(edited).workers.machineDeployments.find((m) => m.name === pool.name)!.replicas = minSize + 1;
    const refused = await L().apply(edited, { dryRun: true });
    report.push(`replicas on ${cluster.metadata.name!}/${pool.name} (autoscaled): HTTP ${refused.status}: ${responseMessage(refused)}`);
    expect(refused.status).toBe(422);
    expect(responseMessage(refused)).toContain("has autoscaler annotations");

    // The negative control: a copy of the tenant whose pool has replicas instead of the bounds.
    const pinned = structuredClone(cluster);
    pinned.metadata = { name: `${cluster.metadata.name!}-pinned`, namespace, labels: cluster.metadata.labels };
    const pinnedPool = topologyOf(pinned).workers.machineDeployments.find((m) => m.name === pool.name)!;
    delete pinnedPool.metadata;
    pinnedPool.replicas = minSize + 1;
    const created = await L().apply(pinned);
    expect(created.status, responseMessage(created)).toBeLessThan(300);
    await reconciled(pinned.metadata.name!);
    const pinnedMd = await eventually(`MachineDeployment ${pool.name} of ${pinned.metadata.name!}`, reconcileTimeoutMs, () => machineDeployment(pinned.metadata.name!));
    expect(topologyOwnsReplicas(pinnedMd)).toBe(true);

    // Scale both as the autoscaler does (the scale subresource); CAPI resets the pinned one and leaves the autoscaled one.
    const scaledTo = minSize + 2;
    const scale = async (object: KubeObject) => {
      const response = await L().api.request("PATCH", `${await L().objectPath(object)}/scale?fieldManager=cluster-autoscaler`, { spec: { replicas: scaledTo } }, "application/merge-patch+json");
      expect(response.status, responseMessage(response)).toBeLessThan(300);
    };
    await scale(md);
    await scale(pinnedMd);
    const reset = await eventually(`the topology controller resets ${pinned.metadata.name!}'s replicas`, reconcileTimeoutMs, async () => {
      const current = at((await machineDeployment(pinned.metadata.name!))?.spec, "replicas");
      return current === minSize + 1 ? current : undefined;
    });
    // A change to the Cluster makes CAPI reconcile its topology once more.
    const touched = await L().api.request("PATCH", await L().objectPath(cluster), { metadata: { annotations: { "capi-fleet.io/loop-touch": String(Date.now()) } } }, "application/merge-patch+json");
    expect(touched.status, responseMessage(touched)).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await reconciled(cluster.metadata.name!);
    const kept = await machineDeployment(cluster.metadata.name!);
    expect(at(kept?.spec, "replicas")).toBe(scaledTo);
    expect(topologyOwnsReplicas(kept!)).toBe(false);

    // Turning autoscaling on for the pinned pool (what the runbook describes): the topology drops
    // replicas, the topology controller gives the field up, and the MachineDeployment keeps its
    // replicas when they lie within the bounds (the webhook's clamp otherwise).
    const switched = structuredClone(pinned);
    const switchedPool = topologyOf(switched).workers.machineDeployments.find((m) => m.name === pool.name)!;
    delete switchedPool.replicas;
    switchedPool.metadata = { annotations: boundsOf(pool) };
    const switchedResponse = await L().apply(switched);
    expect(switchedResponse.status, responseMessage(switchedResponse)).toBeLessThan(300);
    const released = await eventually(`${pinned.metadata.name!}'s MachineDeployment released by the topology controller`, reconcileTimeoutMs, async () => {
      const current = await machineDeployment(pinned.metadata.name!);
      return current && !topologyOwnsReplicas(current) && current.metadata.annotations?.[autoscalerAnnotations.maxSize] !== undefined ? current : undefined;
    });
    report.push(
      `autoscaled pool ${cluster.metadata.name!}/${pool.name}: MachineDeployment annotations ${JSON.stringify(boundsOf(pool))}, replicas defaulted to ${minSize}, capi-topology owns replicas: ${topologyOwnsReplicas(md)}; ` +
        `scaled to ${scaledTo} as the autoscaler would: kept ${JSON.stringify(at(kept?.spec, "replicas"))}. Pinned copy (replicas ${minSize + 1}, no bounds): capi-topology owns replicas: ${topologyOwnsReplicas(pinnedMd)}, scaled to ${scaledTo}, reset to ${JSON.stringify(reset)}; ` +
        `switched to autoscaling: replicas ${JSON.stringify(at(released.spec, "replicas"))}, capi-topology owns replicas: ${topologyOwnsReplicas(released)}`,
    );
    expect(at(released.spec, "replicas")).toBe(minSize + 1);
    await L().api.request("DELETE", await L().objectPath(pinned));
    await eventually(`Cluster ${pinned.metadata.name!} gone`, reconcileTimeoutMs, async () => ((await L().get(pinned.apiVersion, "Cluster", pinned.metadata.name!, namespace)) === undefined ? true : undefined));

    // CAREN's cluster-autoscaler handler acts on addons.clusterAutoscaler in the Cluster its lifecycle hooks get
    // (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: pkg/handlers/lifecycle/clusterautoscaler/handler.go),
    // and installs the autoscaler into the cluster findTargetCluster picks (clusterautoscaler/utils.go): the management
    // cluster only if its Nodes carry CAPI's cluster-name annotation (common/pkg/capi/utils/utils.go, ManagementCluster),
    // which k3s' do not, else the tenant itself, where the chart's kubeconfig Secret and MachineDeployments are missing.
    // So no tenant asks CAREN for it; the program runs the autoscaler on the management cluster
    // (components/cluster-autoscaler), and the hooks must not see addons.clusterAutoscaler.
    const addonsSent = (name: string) => {
      const request = L().extension.requests.find((r) => r.hook === "BeforeClusterCreate" && (r.body.cluster as KubeObject | undefined)?.metadata.name === name);
      return (variablesOf(topologyOf(request!.body.cluster as KubeObject).variables).clusterConfig as { addons?: Record<string, unknown> } | undefined)?.addons ?? {};
    };
    for (const c of allClusters()) expect(addonsSent(c.metadata.name!), c.metadata.name).not.toHaveProperty("clusterAutoscaler");
    expect(addonsSent(cluster.metadata.name!), "the autoscaled tenant's hooks still carry its other addons").toHaveProperty("cni");
    // NFD, opt-in: the same tenant asks for it in prod.
    const nfd = allClusters().filter((c) => "nfd" in addonsSent(c.metadata.name!)).map((c) => c.metadata.name);
    report.push(`BeforeClusterCreate addons: ${allClusters().map((c) => `${c.metadata.name!} ${Object.keys(addonsSent(c.metadata.name!)).join("+")}`).join(", ")}`);
    expect(nfd.length).toBeGreaterThan(0);
    expect(nfd.length).toBeLessThan(allClusters().length);
  }, 3 * reconcileTimeoutMs);

  // The fleet's Cilium version reaches CAREN through its helm-addons ConfigMap
  // (infra/model/platform/caren-helm-addons.ts), which CAREN's Cilium handler reads only inside its
  // AfterControlPlaneInitialized and BeforeClusterUpgrade hooks
  // (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: pkg/handlers/lifecycle/cni/cilium/handler.go).
  // A ConfigMap is nothing CAPI watches, so changing it calls no hook: running tenants get the new
  // Cilium at their next Kubernetes upgrade, when BeforeClusterUpgrade reaches CAREN (the chained
  // upgrade below shows that hook arriving, with the whole Cluster, before the first step).
  track("the fleet's Cilium version is in CAREN's helm-addons ConfigMap, and a change to it calls no lifecycle hook", async () => {
    const configMapPath = `/api/v1/namespaces/${platformNamespaces.caren}/configmaps/${carenHelmAddonsConfigMap}`;
    const ciliumOf = async () => parseYaml(((await L().api.request("GET", configMapPath)).json.data as Record<string, string>)[carenCiliumAddonKey]!) as { ChartVersion: string };
    expect((await ciliumOf()).ChartVersion).toBe(catalog.cilium.version);
    const before = L().extension.requests.length;
    const bump = (version: string) =>
      L().api.request(
        "PATCH",
        `${configMapPath}?fieldManager=pulumi-kubernetes-patch&force=true`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: carenHelmAddonsConfigMap, namespace: platformNamespaces.caren }, data: { [carenCiliumAddonKey]: helmAddonEntryText(ciliumHelmAddonEntry({ ...catalog.cilium, version })) } },
        "application/apply-patch+yaml",
      );
    const bumped = `${catalog.cilium.version}-next`;
    expect((await bump(bumped)).status).toBeLessThan(300);
    expect((await ciliumOf()).ChartVersion).toBe(bumped);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const since = L().extension.requests.slice(before);
    const tenants = new Set(allClusters().map((c) => c.metadata.name));
    const hooks = since.filter((r) => r.hook !== "GeneratePatches" && tenants.has((r.body.cluster as KubeObject | undefined)?.metadata.name));
    report.push(`Cilium ${catalog.cilium.version} → ${bumped} in CAREN's ConfigMap: ${hooks.length} lifecycle hook requests and ${since.length - hooks.length} GeneratePatches requests in the next 15 s`);
    expect(hooks.map((r) => `${r.hook}/${r.handler}`)).toEqual([]);
    expect((await bump(catalog.cilium.version)).status).toBeLessThan(300);
  });

  // CAPI passes an external patch only the variables that patch's own DiscoverVariables defined
  // (sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/topology/cluster/patches/engine.go,
  // addVariablesForPatch → definitionsForPatch keeps the variables whose status definition has
  // `from` == the patch's name). Each CAREN entry of the class names CAREN's discovery handler, so
  // both handlers get the tenant's clusterConfig, as CAPI holds it (defaulted by CAREN's schema).
  track("GeneratePatches requests carry each tenant's clusterConfig, with every setting the stacks use, to both CAREN patch handlers", async () => {
    const clusterOf = (request: RecordedRequest) =>
      (((request.body.variables as TopologyVariable[] | undefined) ?? []).find((v) => v.name === "builtin")?.value as { cluster?: { name?: string } } | undefined)?.cluster?.name;
    const clusterConfigOf = (request: RecordedRequest) => ((request.body.variables as TopologyVariable[] | undefined) ?? []).find((v) => v.name === "clusterConfig")?.value;
    const handlers = carenPatchEntries().map((p) => own(p.external.generatePatchesExtension));
    const settingsSeen = new Set<string>();
    for (const cluster of allClusters()) {
      const live = await L().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace);
      const held = variablesOf(topologyOf(live!).variables).clusterConfig;
      const declared = variablesOf(topologyOf(cluster).variables).clusterConfig as Record<string, unknown>;
      // What the program declared is what CAPI holds, plus what CAREN's schema defaults.
      expect(held, cluster.metadata.name).toMatchObject(declared);
      const canonical = (value: unknown): string =>
        JSON.stringify(value, (_key, inner: unknown) =>
          inner && typeof inner === "object" && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : inner,
        );
      if (canonical(held) !== canonical(declared)) report.push(`${cluster.metadata.name!}: CAREN's schema defaults changed clusterConfig to ${JSON.stringify(held).slice(0, 400)}`);
      for (const handler of handlers) {
        const requests = await eventually(`GeneratePatches ${handler} for ${cluster.metadata.name!}`, reconcileTimeoutMs, () => {
          const found = generatePatches().filter((r) => r.handler === handler && clusterOf(r) === cluster.metadata.name);
          return Promise.resolve(found.length > 0 ? found : undefined);
        });
        expect(clusterConfigOf(requests.at(-1)!), `${handler} for ${cluster.metadata.name!}`).toEqual(held);
      }
      for (const key of Object.keys(declared)) settingsSeen.add(key);
      for (const key of Object.keys((declared.addons as Record<string, unknown> | undefined) ?? {})) settingsSeen.add(`addons.${key}`);
      if ((declared.addons as { cni?: { values?: unknown } } | undefined)?.cni?.values) settingsSeen.add("addons.cni.values");
    }
    const requests = generatePatches();
    const carrying = requests.filter((r) => clusterConfigOf(r) !== undefined);
    report.push(
      `GeneratePatches carrying clusterConfig: ${carrying.length} of ${requests.length}, to ${[...new Set(carrying.map((r) => r.handler))].join(", ")}; clusterConfig settings the stacks use: ${[...settingsSeen].sort().join(", ")}`,
    );
    expect(carrying.length).toBe(requests.length);
    // The stacks exercise every setting the program maps to CAREN.
    for (const key of ["addons.cni", "addons.cni.values", "kubeProxy", "ntp", "proxy", "imageRegistries", "globalImageRegistryMirror", "users"]) {
      expect([...settingsSeen], key).toContain(key);
    }
  });

  track("CAPI's webhook refuses a wrong value in each CAREN setting, checked against CAREN's schema (negative controls), and a kube-proxy mode change", async () => {
    const base = clusterWith("users");
    const unchanged = await probeCluster(base, "caren", () => {});
    expect(unchanged.status, responseMessage(unchanged)).toBeLessThan(300);
    type Config = Record<string, unknown> & { addons: { cni: Record<string, unknown> } };
    const clusterConfig = (t: TopologySpec) => t.variables.find((v) => v.name === "clusterConfig")!.value as Config;
    const cases: [string, (c: Config) => void, RegExp][] = [
      ["ntp.servers with a name that is no host", (c) => (c.ntp = { servers: ["not a host!"] }), /ntp.servers|valid IP address, hostname/i],
      ["proxy.http empty", (c) => (c.proxy = { http: "" }), /proxy.http/],
      ["proxy.additionalNo not a list", (c) => (c.proxy = { http: "http://proxy.example:3128", additionalNo: "example.com" }), /proxy.additionalNo/],
      ["imageRegistries[0].url not http(s)", (c) => (c.imageRegistries = [{ url: "ftp://registry.example.com" }]), /imageRegistries\[0\].url/],
      ["imageRegistries[0].credentials.secretRef without name", (c) => (c.imageRegistries = [{ url: "https://registry.example.com", credentials: { secretRef: {} } }]), /imageRegistries\[0\].credentials.secretRef.name/],
      ["globalImageRegistryMirror without url", (c) => (c.globalImageRegistryMirror = { credentials: { secretRef: { name: "x" } } }), /globalImageRegistryMirror.url/],
      ["users[0] without name", (c) => (c.users = [{ sshAuthorizedKeys: ["ssh-ed25519 AAAA"] }]), /users\[0\].name/],
      ["kubeProxy.mode ipvs", (c) => (c.kubeProxy = { mode: "ipvs" }), /kubeProxy.mode/],
      ["addons.cni.values.sourceRef kind Secret", (c) => (c.addons.cni.values = { sourceRef: { kind: "Secret", name: "x" } }), /addons.cni.values.sourceRef.kind/],
      ["a misspelled field (ntpServers)", (c) => (c.ntpServers = ["0.pool.ntp.org"]), /ntpServers/],
    ];
    for (const [what, mutate, pattern] of cases) {
      const response = await probeCluster(base, "caren", (t) => {
        mutate(clusterConfig(t));
      });
      // CAPI's message quotes the whole value first; the reason is at its end.
      report.push(`rejected ${what}: HTTP ${response.status}: …${responseMessage(response).slice(-220)}`);
      expect(response.status, what).toBeGreaterThanOrEqual(400);
      expect(responseMessage(response), what).toMatch(pattern);
    }
    // CAREN's kubeProxy.mode is `self == oldSelf`: an update of a live Cluster to another mode is refused.
    const withMode = allClusters().find((c) => (variablesOf(topologyOf(c).variables).clusterConfig as { kubeProxy?: { mode?: string } }).kubeProxy?.mode)!;
    expect(withMode, "a tenant with a kube-proxy mode").toBeDefined();
    const live = (await L().get(withMode.apiVersion, "Cluster", withMode.metadata.name!, withMode.metadata.namespace))!;
    const changed = structuredClone(withMode);
    const mode = (clusterConfig(topologyOf(changed)).kubeProxy as { mode: string });
    const before = mode.mode;
    mode.mode = before === "iptables" ? "nftables" : "iptables";
    topologyOf(changed).version = topologyOf(live).version;
    const response = await L().apply(changed, { dryRun: true });
    report.push(`kube-proxy mode ${before} → ${mode.mode} on live ${withMode.metadata.name!}: HTTP ${response.status}: …${responseMessage(response).slice(-160)}`);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(responseMessage(response)).toMatch(/cannot be changed after cluster creation/);
  });

  // The patch-order hazard: a whole-list `add` of preKubeadmCommands running after CAREN's patches
  // drops CAREN's commands. The stand-in answers CAREN's cluster patch with an appended command, and
  // two probe classes run CAREN's patches *before* the install: with the class's inserts the command
  // stays; with the former whole-list form it is gone (negative control), while TopologyReconciled
  // stays True either way.
  track("CAREN's appended preKubeadmCommands survive the class's install patch in either order (negative control: the whole-list form drops them)", async () => {
    const declared = classObject();
    const marker = "echo caren-stand-in-command";
    const spec = "/spec/template/spec";
    const listPath = { KubeadmControlPlaneTemplate: `${spec}/kubeadmConfigSpec/preKubeadmCommands`, KubeadmConfigTemplate: `${spec}/preKubeadmCommands` } as Record<string, string>;
    const probes = new Set<string>();
    L().extension.override = (request) => {
      const cluster = (((request.body.variables as TopologyVariable[] | undefined) ?? []).find((v) => v.name === "builtin")?.value as { cluster?: { name?: string } } | undefined)?.cluster?.name;
      if (request.hook !== "GeneratePatches" || request.handler !== own(carenPatchEntries()[0]!.external.generatePatchesExtension) || !probes.has(cluster ?? "")) return undefined;
      const items = ((request.body.items as { uid: string; object: { kind: string } }[] | undefined) ?? [])
        .filter((item) => listPath[item.object.kind])
        .map((item) => ({ uid: item.uid, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: `${listPath[item.object.kind]!}/-`, value: marker }])).toString("base64") }));
      return { items };
    };
    try {
      type Patch = { name: string; definitions?: { selector: unknown; jsonPatches: { op: string; path: string; valueFrom: { template: string } }[] }[] };
      const variant = async (suffix: string, wholeList: boolean) => {
        const probeClass = structuredClone(declared);
        probeClass.metadata = { name: `${declared.metadata.name!}-${suffix}`, namespace: declared.metadata.namespace };
        const patches = (probeClass.spec as { patches: Patch[] }).patches;
        const install = patches.find((p) => p.name === "kubernetes-install")!;
        if (wholeList) {
          // The former form: one `add` of the whole list, its commands as a YAML list.
          for (const definition of install.definitions!) {
            const path = definition.jsonPatches[0]!.path.replace(/\/\d+$/, "");
            // The class prepends last command first; the list is in run order.
            const commands = [...definition.jsonPatches].reverse().map((jsonPatch) => `- ${jsonPatch.valueFrom.template}`).join("\n");
            definition.jsonPatches = [{ op: "add", path, valueFrom: { template: commands } }];
          }
        }
        // CAREN's entries first, the install after them.
        const caren = patches.filter((p) => carenPatchEntries().some((entry) => entry.name === p.name));
        (probeClass.spec as { patches: Patch[] }).patches = [...caren, ...patches.filter((p) => !caren.includes(p))];
        const applied = await L().apply(probeClass);
        expect(applied.status, responseMessage(applied)).toBeLessThan(300);
        await eventually(`${probeClass.metadata.name!} VariablesReady=True`, reconcileTimeoutMs, async () => {
          const got = await L().get(probeClass.apiVersion, "ClusterClass", probeClass.metadata.name!, probeClass.metadata.namespace);
          return conditionOf(got, "VariablesReady")?.status === "True" && (got?.metadata as { generation?: number }).generation === (got?.status as { observedGeneration?: number } | undefined)?.observedGeneration ? true : undefined;
        });
        const base = devTenant();
        const cluster = structuredClone(base);
        cluster.metadata = { name: `${base.metadata.name!}-${suffix}`, namespace: base.metadata.namespace, labels: base.metadata.labels };
        topologyOf(cluster).classRef = { ...topologyOf(cluster).classRef, name: probeClass.metadata.name! };
        probes.add(cluster.metadata.name!);
        const created = await L().apply(cluster);
        expect(created.status, responseMessage(created)).toBeLessThan(300);
        await eventually(`${cluster.metadata.name!} TopologyReconciled=True`, reconcileTimeoutMs, async () => {
          const got = await L().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace);
          return conditionOf(got, "TopologyReconciled")?.status === "True" ? true : undefined;
        });
        const objects = await generated(cluster);
        const commands = {
          controlPlane: (at(objects.controlPlane?.spec, "kubeadmConfigSpec.preKubeadmCommands") ?? []) as string[],
          workers: objects.workers.map((w) => (at(w.bootstrap?.spec, "template.spec.preKubeadmCommands") ?? []) as string[]),
        };
        await L().api.request("DELETE", await L().objectPath(cluster));
        return commands;
      };
      const inserts = await variant("caren-first", false);
      const wholeList = await variant("whole-list", true);
      report.push(`CAREN's patches first: with inserts, KCP preKubeadmCommands ${JSON.stringify(inserts.controlPlane)}; with the whole-list form ${JSON.stringify(wholeList.controlPlane)}`);
      for (const commands of [inserts.controlPlane, ...inserts.workers]) {
        expect(commands).toContain(marker);
        expect(commands[0]).toMatch(/install-kubernetes\.sh v\d+\.\d+\.\d+ /);
      }
      expect(inserts.controlPlane[1]).toMatch(/advertise-private-address\.sh/);
      // Negative control: the whole-list form, run after CAREN's patch, dropped the appended command.
      expect(wholeList.controlPlane).not.toContain(marker);
      expect(wholeList.workers.flat()).not.toContain(marker);
    } finally {
      L().extension.override = undefined;
    }
  }, 4 * reconcileTimeoutMs);

  // A chained upgrade, observed. Nothing here runs machines, so the test reports completion the way
  // CAPI's own topology tests do with a fake control plane (sigs.k8s.io/cluster-api@v1.12.10:
  // exp/topology/desiredstate/desired_state_test.go builds control planes WithStatusFields
  // "status.version"): it writes the control plane's `status.version` (the contract field the
  // topology controller reads: internal/contract/controlplane.go, IsProvisioning/IsUpgrading) once
  // `spec.version` changed. The
  // KCP controller keeps a status.version it did not compute (controlplane/kubeadm/internal/controllers/
  // status.go sets it only from Machines, and there are none). MachineDeployments complete by
  // themselves: a MachineDeployment is "upgrading" only while one of its Machines has another
  // version (exp/topology/scope/state.go, IsUpgrading), and no Machine exists (no infrastructure
  // provider makes the HetznerCluster ready).
  track("a chained upgrade over two minors or more: the KCP and MachineDeployment versions CAPI sets equal the program's planner, and BeforeClusterUpgrade reaches the extension first", async () => {
    const listed = ((classObject().spec as { kubernetesVersions: string[] }).kubernetesVersions);
    const tenant = upgradeTenant();
    const from = topologyOf(tenant).version;
    const target = newestListed();
    expect(minorOf(target) - minorOf(from)).toBeGreaterThanOrEqual(2);
    const namespace = tenant.metadata.namespace!;
    const selector = `cluster.x-k8s.io/cluster-name=${tenant.metadata.name!}`;
    const kcp = async () => (await L().list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", namespace, selector))[0]!;
    const mdVersions = async () =>
      (await L().list("cluster.x-k8s.io/v1beta2", "MachineDeployment", namespace, selector)).map((md) => at(md.spec, "template.spec.version") as string);
    /** Fake control-plane completion: status.version := spec.version. */
    const completeControlPlane = async () => {
      const current = await kcp();
      const specVersion = at(current.spec, "version") as string;
      if (at(current.status, "version") === specVersion) return specVersion;
      const response = await L().api.request(
        "PATCH",
        `${await L().objectPath(current)}/status`,
        { status: { version: specVersion } },
        "application/merge-patch+json",
      );
      expect(response.status, responseMessage(response)).toBeLessThan(300);
      return specVersion;
    };
    // The control plane "finished" provisioning at its first version; without it CAPI's webhook
    // refuses any version change ("control plane is currently provisioning").
    const probe = structuredClone(tenant);
    topologyOf(probe).version = target;
    const refused = await L().apply(probe, { dryRun: true });
    report.push(`upgrade before the control plane reported a version: HTTP ${refused.status}: ${responseMessage(refused)}`);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    await completeControlPlane();
    const beforeUpgrade = L().extension.requests.length;
    const upgraded = structuredClone(tenant);
    topologyOf(upgraded).version = target;
    const started = Date.now();
    const response = await L().apply(upgraded);
    expect(response.status, responseMessage(response)).toBeLessThan(300);

    const observed: { component: "control-plane" | "workers"; version: string; at: number }[] = [];
    let lastCp = from;
    let lastWorkers = from;
    await eventually(`${tenant.metadata.name!} upgraded to ${target}`, 4 * reconcileTimeoutMs, async () => {
      const cpVersion = at((await kcp()).spec, "version") as string;
      if (cpVersion !== lastCp) {
        observed.push({ component: "control-plane", version: cpVersion, at: Date.now() });
        lastCp = cpVersion;
      }
      const workers = await mdVersions();
      const lowest = [...workers].sort()[0]!;
      if (workers.every((v) => v === workers[0]) && lowest !== lastWorkers) {
        observed.push({ component: "workers", version: lowest, at: Date.now() });
        lastWorkers = lowest;
      }
      await completeControlPlane();
      return lastCp === target && lastWorkers === target ? true : undefined;
    });
    // What `npm run plan` prints for the same inputs (deployed version, target, the class's list).
    const plan = planTenantUpgrade(tenant.metadata.name!, from, target, listed);
    if (isUpgradeProblem(plan)) throw new Error(`the planner refuses ${from} → ${target}: ${plan.reason}`);
    const cpSeen = observed.filter((o) => o.component === "control-plane").map((o) => o.version);
    const workersSeen = observed.filter((o) => o.component === "workers").map((o) => o.version);
    const show = (steps: readonly { component: string; version: string }[]) => steps.map((step) => `${step.component} ${step.version}`).join(" → ");
    report.push(`chained upgrade ${from} → ${target} in ${seconds(Date.now() - started)}: CAPI set ${show(observed)}; npm run plan: ${show(plan.campaign)}`);
    expect(cpSeen).toEqual(plan.controlPlaneSteps);
    expect(workersSeen).toEqual(plan.workerSteps);
    // The interleaving too: the campaign's order of control-plane and worker steps.
    const steps = observed.map(({ component, version }) => ({ component, version }));
    expect(steps).toEqual(plan.campaign.map(({ component, version }) => ({ component, version })));
    // Negative control: the naive campaign (workers follow every control-plane step) is not what CAPI did.
    expect(steps).not.toEqual(plan.controlPlaneSteps.flatMap((version) => [{ component: "control-plane", version }, { component: "workers", version }]));
    // Hooks: CAPI v1.12.10 calls BeforeClusterUpgrade, then per step BeforeControlPlaneUpgrade,
    // AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade, and AfterClusterUpgrade
    // (exp/topology/desiredstate/desired_state.go, computeControlPlaneVersion/computeMachineDeploymentVersion;
    // api/runtime/hooks/v1alpha1/lifecyclehooks_types.go). Of these CAREN registers BeforeClusterUpgrade only,
    // so only it may reach the extension, once, and before the first control-plane step.
    const hooks = L().extension.requests.slice(beforeUpgrade).filter((r) => r.hook !== "GeneratePatches" && ((r.body.cluster as KubeObject | undefined)?.metadata.name ?? "") === tenant.metadata.name);
    report.push(`upgrade hooks received for ${tenant.metadata.name!}: ${hooks.map((h) => `${h.hook}/${h.handler}`).join(", ")}`);
    expect(hooks.map((h) => h.hook)).toEqual(["BeforeClusterUpgrade"]);
    expect(hooks[0]!.at).toBeLessThanOrEqual(observed[0]!.at);
    const carried = (hooks[0]!.body as { fromKubernetesVersion?: string; toKubernetesVersion?: string });
    expect([carried.fromKubernetesVersion, carried.toKubernetesVersion]).toEqual([from, target]);
  }, 6 * reconcileTimeoutMs);

  track("deleting a tenant Cluster calls BeforeClusterDelete before CAPI deletes its infrastructure", async () => {
    const victim = deletedTenant();
    const namespace = victim.metadata.namespace!;
    const selector = `cluster.x-k8s.io/cluster-name=${victim.metadata.name!}`;
    const infrastructure = async () => (await L().list("infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster", namespace, selector))[0];
    expect(await infrastructure()).toBeDefined();
    // Hold the hook (retry in 2 s) until the test has looked at the infrastructure.
    L().extension.override = (request) => (request.hook === "BeforeClusterDelete" ? { retryAfterSeconds: 2 } : undefined);
    const deleted = await L().api.request("DELETE", await L().objectPath(victim));
    expect(deleted.status, responseMessage(deleted)).toBeLessThan(300);
    const first = await eventually(`BeforeClusterDelete for ${victim.metadata.name!}`, reconcileTimeoutMs, () =>
      Promise.resolve(L().extension.requests.find((r) => r.hook === "BeforeClusterDelete" && (r.body.cluster as KubeObject | undefined)?.metadata.name === victim.metadata.name)),
    );
    // While the hook holds, the infrastructure is untouched (negative control: once released, it goes).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const held = await infrastructure();
    expect(held).toBeDefined();
    expect(held!.metadata.deletionTimestamp).toBeUndefined();
    L().extension.override = undefined;
    await eventually(`${victim.metadata.name!}'s HetznerCluster deleted`, reconcileTimeoutMs, async () => ((await infrastructure()) === undefined ? true : undefined));
    await eventually(`Cluster ${victim.metadata.name!} gone`, reconcileTimeoutMs, async () => ((await L().get(victim.apiVersion, "Cluster", victim.metadata.name!, namespace)) === undefined ? true : undefined));
    const calls = L().extension.requests.filter((r) => r.hook === "BeforeClusterDelete" && (r.body.cluster as KubeObject | undefined)?.metadata.name === victim.metadata.name);
    report.push(`delete ${victim.metadata.name!}: BeforeClusterDelete/${first.handler} called ${calls.length}× (held ${calls.length - 1}×), then the HetznerCluster and the Cluster were deleted`);
    expect(calls.length).toBeGreaterThanOrEqual(2);
  });
});
