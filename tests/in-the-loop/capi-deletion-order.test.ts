import { afterAll, beforeAll, describe, expect } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { conditionOf, dependencyOrder, eventually, isPatch, objectOf, responseMessage, startCapiInTheLoop, type CapiInTheLoop, type KubeObject } from "../support/capi-in-the-loop";
import { loopTest } from "../support/capi-loop-test";
import { runStack } from "../support/fleet-run";
import { deletePropagationPolicy } from "../support/pulumi-kubernetes-delete";
import { sourceOfGroup } from "../support/upstream-crds";

// The order in which a tenant's objects are deleted, with Cluster API's own controllers and the API
// server's garbage collector running (tests/support/capi-in-the-loop.ts with `garbageCollector`), for each
// DeleteOptions.propagationPolicy pulumi-kubernetes may send for the Cluster (tests/support/pulumi-kubernetes-delete.ts).
//
// CAPI's order (sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/cluster/cluster_controller.go,
// reconcileDelete): nothing until the BeforeClusterDelete hook says ok-to-delete; then the Cluster's
// own descendants (MachineDeployments, MachineSets, MachinePools, worker Machines) are deleted, and
// while any of them still exists it requeues; only then is the control plane deleted, and only once the
// control plane is gone the infrastructure cluster; the Cluster's finalizer goes last.
//
// Foreground propagation hands the Cluster's dependents (everything CAPI's topology gave an
// ownerReference to the Cluster) to the garbage collector instead, which deletes them together.

/** First run on a clean machine builds kube-apiserver + etcd, the CAPI managers and kube-controller-manager. */
const buildTimeoutMs = 90 * 60_000;
const reconcileTimeoutMs = 120_000;
/** How long the BeforeClusterDelete hook is held after its first call. */
const holdMs = 6000;
/**
 * The longest the hook waits, under Foreground, for the garbage collector: three of its 30 s discovery
 * syncs (two were not enough on a machine with a load average near 20). It ends as soon as the collector acted.
 */
const gcHoldMs = 95_000;
const pollMs = 100;
/**
 * What BeforeClusterDelete must keep: the control plane and the infrastructure cluster (the load
 * balancer's owner). Under Foreground the negative control waits for the garbage collector to mark
 * these. MachineDeployments are left out of that wait: on a busy machine (two test files in
 * parallel) the collector once had not marked one 95 s after the control plane, and CAPI deleted it
 * after the release; what breaks CAPI's order is already the control plane going first.
 */
const heldByTheHook = (s: { kind: Kind }): boolean => s.kind !== "MachineDeployment";

let loop: CapiInTheLoop | undefined;
let failed = false;
let skipReason: string | undefined;
const report: string[] = [];
let tenants: KubeObject[] = [];

const L = (): CapiInTheLoop => {
  if (!loop) throw new Error("Cluster API did not start (see beforeAll)");
  return loop;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Kind = "MachineDeployment" | "KubeadmControlPlane" | "HetznerCluster";
const kinds: { kind: Kind; apiVersion: string }[] = [
  // Listed infrastructure first, then control plane, then workers: within one poll, a later kind is
  // read after an earlier one, so "X marked while Y still existed" is never an artefact of the poll.
  { kind: "HetznerCluster", apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1" },
  { kind: "KubeadmControlPlane", apiVersion: "controlplane.cluster.x-k8s.io/v1beta2" },
  { kind: "MachineDeployment", apiVersion: "cluster.x-k8s.io/v1beta2" },
];

/** What the poller saw of one object: when (ms after the DELETE) it was first seen deleting or gone. */
interface Seen {
  kind: Kind;
  name: string;
  /** First poll that saw a deletionTimestamp, or the object gone. */
  markedMs?: number;
  /** The server's deletionTimestamp (second resolution), when a poll caught it. */
  deletionTimestamp?: string;
  goneMs?: number;
}

interface Run {
  tenant: string;
  policy: string;
  seen: Seen[];
  releasedMs: number;
  clusterGoneMs?: number;
}

/** Where CAPI's order was broken: the control plane marked while a MachineDeployment existed, the infrastructure while the control plane did. */
function orderViolations(seen: Seen[]): string[] {
  const of = (kind: Kind) => seen.filter((s) => s.kind === kind);
  const problems: string[] = [];
  const lastGone = (kind: Kind) => Math.max(...of(kind).map((s) => s.goneMs ?? Infinity));
  for (const [later, earlier] of [
    ["KubeadmControlPlane", "MachineDeployment"],
    ["HetznerCluster", "KubeadmControlPlane"],
  ] as const) {
    for (const object of of(later)) {
      const before = lastGone(earlier);
      if (object.markedMs === undefined || object.markedMs < before) {
        problems.push(`${later} ${object.name} marked at ${object.markedMs ?? "?"} ms, while a ${earlier} still existed (last gone at ${before} ms)`);
      }
    }
  }
  return problems;
}

const describeRun = (run: Run) =>
  `${run.tenant} (${run.policy}): ${[...run.seen]
    .sort((a, b) => (a.markedMs ?? Infinity) - (b.markedMs ?? Infinity))
    .map((s) => `${s.kind} ${s.name} marked ${s.markedMs ?? "never"} ms${s.deletionTimestamp ? ` (deletionTimestamp ${s.deletionTimestamp})` : " (gone before a poll saw a deletionTimestamp)"}, gone ${s.goneMs ?? "never"} ms`)
    .join("; ")}; BeforeClusterDelete released at ${run.releasedMs} ms; Cluster gone ${run.clusterGoneMs ?? "not yet"} ms`;

/**
 * Copies `base` under a new name, waits for TopologyReconciled, then deletes it with `policy` (the
 * DeleteOptions pulumi-kubernetes sends), holding BeforeClusterDelete for `holdMs` after its first
 * call, and polls the generated objects until they and the Cluster are gone (Background) or until every
 * object was marked and the hook released (Foreground: what follows is not the question here).
 */
async function deleteAndWatch(base: KubeObject, suffix: string, policy: ReturnType<typeof deletePropagationPolicy>): Promise<Run> {
  const cluster = structuredClone(base);
  cluster.metadata = { name: `${base.metadata.name!}-${suffix}`, namespace: base.metadata.namespace, labels: base.metadata.labels, annotations: base.metadata.annotations };
  const name = cluster.metadata.name!;
  const namespace = cluster.metadata.namespace!;
  const created = await L().apply(cluster);
  expect(created.status, responseMessage(created)).toBeLessThan(300);
  await eventually(
    `Cluster ${name} TopologyReconciled=True`,
    reconcileTimeoutMs,
    async () => (conditionOf(await L().get(cluster.apiVersion, "Cluster", name, namespace), "TopologyReconciled")?.status === "True" ? true : undefined),
    async () => JSON.stringify((await L().get(cluster.apiVersion, "Cluster", name, namespace))?.status ?? {}).slice(0, 2000),
  );
  const selector = `cluster.x-k8s.io/cluster-name=${name}`;
  const snapshot = async () => {
    const found: { kind: Kind; object: KubeObject }[] = [];
    for (const { kind, apiVersion } of kinds) for (const object of await L().list(apiVersion, kind, namespace, selector)) found.push({ kind, object });
    return found;
  };
  // Every object present before the delete (MachineDeployments appear a moment after TopologyReconciled at most).
  const initial = await eventually(`${name}: a HetznerCluster, a KubeadmControlPlane and MachineDeployments`, reconcileTimeoutMs, async () => {
    const found = await snapshot();
    return kinds.every(({ kind }) => found.some((f) => f.kind === kind)) ? found : undefined;
  });
  const seen: Seen[] = initial.map(({ kind, object }) => ({ kind, name: object.metadata.name! }));

  const isOurs = (request: { hook: string; body: Record<string, unknown> }) => request.hook === "BeforeClusterDelete" && (request.body.cluster as KubeObject | undefined)?.metadata.name === name;
  let released = false;
  L().extension.override = (request) => (isOurs(request) && !released ? { retryAfterSeconds: 1 } : undefined);
  const t0 = Date.now();
  const deleted = await L().api.request("DELETE", await L().objectPath(cluster), { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: policy });
  expect(deleted.status, responseMessage(deleted)).toBeLessThan(300);
  // The policy reached the server: foreground deletion shows as the `foregroundDeletion` finalizer.
  const finalizers = ((deleted.json.metadata as { finalizers?: string[] } | undefined)?.finalizers ?? []);
  expect(finalizers.includes("foregroundDeletion"), `finalizers after DELETE: ${finalizers.join(", ")}`).toBe(policy === "Foreground");

  let firstHookMs: number | undefined;
  let releasedMs = -1;
  let clusterGoneMs: number | undefined;
  const deadline = t0 + Math.max(reconcileTimeoutMs, gcHoldMs + 30_000);
  for (;;) {
    const now = Date.now() - t0;
    if (firstHookMs === undefined) {
      const first = L().extension.requests.find(isOurs);
      if (first) firstHookMs = first.at - t0;
    }
    // Under Foreground the hook is held until the garbage collector has acted (bounded): it sees
    // CRD kinds only after its discovery sync, every 30 s (k8s.io/kubernetes@v1.35.4:
    // cmd/kube-controller-manager/app/core.go, garbageCollectorController.Run), so a fixed hold
    // could end before it looked, on a loaded machine.
    const holdFor = policy === "Foreground" && !seen.filter(heldByTheHook).every((s) => s.markedMs !== undefined) ? gcHoldMs : holdMs;
    if (!released && firstHookMs !== undefined && now >= firstHookMs + holdFor) {
      released = true;
      releasedMs = now;
    }
    const present = await snapshot();
    const at = Date.now() - t0;
    for (const entry of seen) {
      const live = present.find((p) => p.kind === entry.kind && p.object.metadata.name === entry.name)?.object;
      const timestamp = live?.metadata.deletionTimestamp as string | undefined;
      if (entry.markedMs === undefined && (!live || timestamp)) entry.markedMs = at;
      if (timestamp) entry.deletionTimestamp ??= timestamp;
      if (!live) entry.goneMs ??= at;
    }
    if ((await L().get(cluster.apiVersion, "Cluster", name, namespace)) === undefined) {
      clusterGoneMs = Date.now() - t0;
      if (seen.every((s) => s.goneMs !== undefined)) break;
    }
    if (policy === "Foreground" && released && seen.every((s) => s.markedMs !== undefined)) break;
    if (Date.now() > deadline) break;
    await sleep(pollMs);
  }
  L().extension.override = undefined;
  const run: Run = { tenant: name, policy, seen, releasedMs, ...(clusterGoneMs === undefined ? {} : { clusterGoneMs }) };
  report.push(describeRun(run));
  if (firstHookMs === undefined) throw new Error(`BeforeClusterDelete never reached the extension for ${name}`);
  return run;
}

describe(`Cluster API ${catalog.clusterApi.version} with the garbage collector: the order in which a tenant's objects are deleted under each propagation policy`, () => {
  beforeAll(async () => {
    const started = Date.now();
    loop = await startCapiInTheLoop({ buildTimeoutMs, garbageCollector: true, progress: (line) => report.push(`  ${seconds(Date.now() - started)}: ${line}`) });
    report.push(
      `${loop.capi.version}: ${loop.capi.buildInfo}; ${loop.api.binaries.kubeApiserverVersion}; garbage collector: kube-controller-manager ${loop.garbageCollector?.version ?? "?"}`,
      `start-up: ${Object.entries(loop.timings).map(([phase, ms]) => `${phase} ${seconds(ms)}`).join(", ")}`,
    );
    // The dev stack's objects, applied as the loop test applies them; CAPH's kinds need its CRDs.
    const { registrations } = await runStack("dev");
    const ordered = dependencyOrder(registrations);
    for (const namespace of new Set(ordered.map((r) => objectOf(r).metadata.namespace).filter((n): n is string => n !== undefined))) {
      await L().api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    }
    for (const registration of ordered) {
      const object = objectOf(registration);
      const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0]! : "";
      const missing = L().sources.find((s) => "unavailable" in s && s.source === sourceOfGroup(group));
      if (missing && "unavailable" in missing) {
        skipReason = `CAPH's CRDs are unavailable (${missing.unavailable}), so CAPI cannot reconcile a tenant's topology`;
        continue;
      }
      const response = isPatch(registration) ? await L().apply(object, { manager: "pulumi-kubernetes-patch", force: false }) : await L().apply(object);
      if (response.status >= 300) throw new Error(`${object.kind} ${object.metadata.name!}: HTTP ${response.status}: ${responseMessage(response)}`);
      if (object.kind === "Cluster" && !isPatch(registration)) tenants.push(object);
    }
    if (skipReason) report.push(`NOT VERIFIED: ${skipReason}`);
  }, buildTimeoutMs + 10 * 60_000);

  afterAll(async () => {
    const kept = await loop?.stop(failed);
    if (kept) report.push(`logs kept in ${kept}`);
    if (report.length > 0) console.log(`capi deletion order:\n  ${report.join("\n  ")}`);
    tenants = [];
  }, 60_000);

  const test = loopTest({ skipReason: () => skipReason, fail: () => (failed = true), logs: () => L().logs() });
  const track = (name: string, body: () => Promise<void>): void => {
    test(name, body, 3 * reconcileTimeoutMs);
  };

  track("Background (the program's annotation): nothing is deleted while BeforeClusterDelete holds, then MachineDeployments, the KubeadmControlPlane once they are gone, the HetznerCluster once it is gone", async () => {
    const base = tenants[0]!;
    // The policy pulumi-kubernetes sends for the program's Cluster.
    const policy = deletePropagationPolicy(base.metadata.annotations);
    expect(policy).toBe("Background");
    const run = await deleteAndWatch(base, "bg", policy);
    const markedBeforeRelease = run.seen.filter((s) => s.markedMs !== undefined && s.markedMs < run.releasedMs);
    expect(markedBeforeRelease, "deleted while BeforeClusterDelete held").toEqual([]);
    expect(run.seen.every((s) => s.goneMs !== undefined), "every object deleted").toBe(true);
    expect(run.clusterGoneMs, "the Cluster gone").toBeDefined();
    expect(orderViolations(run.seen)).toEqual([]);
    // The first marks, kind by kind, in CAPI's order (equal only when two fell between the same two polls).
    const firstMark = (kind: Kind) => Math.min(...run.seen.filter((s) => s.kind === kind).map((s) => s.markedMs!));
    expect(firstMark("MachineDeployment")).toBeLessThanOrEqual(firstMark("KubeadmControlPlane"));
    expect(firstMark("KubeadmControlPlane")).toBeLessThanOrEqual(firstMark("HetznerCluster"));
  });

  track("Foreground (pulumi-kubernetes' default, negative control): the garbage collector marks the control plane and the infrastructure cluster while BeforeClusterDelete still holds, and CAPI's order does not hold", async () => {
    const base = tenants.at(-1)!;
    const withoutAnnotation = { ...base.metadata.annotations };
    delete withoutAnnotation["pulumi.com/deletionPropagationPolicy"];
    const policy = deletePropagationPolicy(withoutAnnotation);
    expect(policy).toBe("Foreground");
    const run = await deleteAndWatch(base, "fg", policy);
    for (const { kind } of kinds) expect(run.seen.filter((s) => s.kind === kind).length, kind).toBeGreaterThan(0);
    for (const object of run.seen.filter(heldByTheHook)) {
      expect(object.markedMs, `${object.kind} ${object.name} marked before BeforeClusterDelete was released`).toBeLessThan(run.releasedMs);
    }
    const marks = run.seen.filter(heldByTheHook).map((s) => s.markedMs!);
    const workers = run.seen.filter((s) => !heldByTheHook(s)).map((s) => (s.markedMs !== undefined && s.markedMs < run.releasedMs ? "before" : "after"));
    report.push(
      `foreground: the control plane and infrastructure cluster marked within ${Math.max(...marks) - Math.min(...marks)} ms of each other, before the hook's release at ${run.releasedMs} ms; MachineDeployments marked ${workers.join(", ")} it`,
    );
    expect(orderViolations(run.seen).length).toBeGreaterThan(0);
  });
});
