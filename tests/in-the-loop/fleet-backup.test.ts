import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { clusterClassNamespace } from "../../infra/model/platform/hetzner-cluster-class";
import { conditionOf, dependencyOrder, eventually, isPatch, objectOf, responseMessage, startCapiInTheLoop, type CapiInTheLoop, type KubeObject } from "../support/capi-in-the-loop";
import { loopTest } from "../support/capi-loop-test";
import { clusterctlLabel } from "../support/clusterctl-install";
import { runStack } from "../support/fleet-run";
import { repoRoot } from "../support/stack-files";
import { sourceOfGroup } from "../support/upstream-crds";

// The fleet backup (`npm run backup`: scripts/fleet-backup.mjs, the real clusterctl built from
// sigs.k8s.io/cluster-api at the catalog's version) and its restore, round trip, with Cluster API's
// own managers and webhooks (tests/support/capi-in-the-loop.ts): management cluster A runs the dev and prod
// stacks' objects, reconciled; the backup is taken from A; A is stopped (lost); a fresh B with the
// same CRDs and managers gets `clusterctl move --from-directory`; every object A had in the
// namespaces the backup covers must be on B with the same content, and B's managers reconcile the
// restored Clusters without generating anything anew.
//
// The CRDs carry the labels the operator's install gives them (tests/support/clusterctl-install.ts):
// clusterctl moves only kinds whose CRD has them.
//
// Stand-in: clusterctl refuses to back up a Cluster whose infrastructure is still provisioning or
// whose control plane is not initialized (sigs.k8s.io/cluster-api@v1.12.10:
// cmd/clusterctl/client/cluster/mover.go, checkProvisioningCompleted). No CAPH controller and no
// machines run here, so the test reports what CAPH and KCP would report once the servers are up,
// through the contract fields CAPI reads: the HetznerCluster's `status.ready` (v1beta1 contract:
// internal/contract/infrastructure_cluster.go, Provisioned) and the KubeadmControlPlane's
// `status.initialization.controlPlaneInitialized` (internal/contract/controlplane.go, Initialized).
// CAPI's Cluster controller keeps both once true (internal/controllers/cluster/cluster_controller_phases.go,
// reconcileInfrastructure/reconcileControlPlane), and KCP, seeing the infrastructure ready, generates
// the tenant's CA, etcd, proxy and service-account Secrets (controlplane/kubeadm/internal/controllers/
// controller.go, reconcileClusterCertificates): the most precious objects a backup carries. Without
// a control-plane endpoint KCP creates no Machine.

const execFileAsync = promisify(execFile);
/** First run on a clean machine builds kube-apiserver + etcd and the CAPI managers (minutes each on 2 cores). */
const buildTimeoutMs = 75 * 60_000;
const stacks = ["dev", "prod"] as const;
const reconcileTimeoutMs = 120_000;
const backupScript = path.join(repoRoot, "scripts", "fleet-backup.mjs");
const moveLabel = `${clusterctlLabel}/move`;
const pausedAnnotation = "cluster.x-k8s.io/paused";

let a: CapiInTheLoop | undefined;
let b: CapiInTheLoop | undefined;
let failed = false;
let skipReason: string | undefined;
const report: string[] = [];
const clusters: KubeObject[] = [];
const work = mkdtempSync(path.join(tmpdir(), "fleet-backup-test-"));
const backupDir = path.join(work, "backup");

const A = (): CapiInTheLoop => {
  if (!a) throw new Error("management cluster A did not start (see beforeAll)");
  return a;
};
const B = (): CapiInTheLoop => {
  if (!b) throw new Error("management cluster B did not start (see the restore test)");
  return b;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const at = (object: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((node, key) => (node === undefined || node === null ? undefined : (node as Record<string, unknown>)[key]), object);
const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value ?? null)).digest("hex").slice(0, 12);
const kubeconfigOf = (loop: CapiInTheLoop) => path.join(loop.logDir, "kubeconfig");

/** An object as the comparison sees it: identity, labels, annotations (minus clusterctl's pause) and content. */
interface Snapshot {
  key: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  content: string;
}

/** The kinds clusterctl can move: those whose CRD carries its label, plus Secrets and ConfigMaps (objectgraph.go, getDiscoveryTypes). */
async function movableKinds(loop: CapiInTheLoop): Promise<{ apiVersion: string; kind: string }[]> {
  const response = await loop.api.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=${encodeURIComponent(clusterctlLabel)}`);
  const crds = (response.json.items ?? []) as { spec: { group: string; names: { kind: string }; scope: string; versions: { name: string; storage: boolean }[] } }[];
  return [
    { apiVersion: "v1", kind: "Secret" },
    { apiVersion: "v1", kind: "ConfigMap" },
    ...crds
      .filter((crd) => crd.spec.scope === "Namespaced")
      .map((crd) => ({ apiVersion: `${crd.spec.group}/${crd.spec.versions.find((v) => v.storage)!.name}`, kind: crd.spec.names.kind })),
  ];
}

/** A list that waits out the API server's 429 while a new CRD's storage initialises. */
async function listSettled(loop: CapiInTheLoop, apiVersion: string, kind: string, namespace: string): Promise<KubeObject[]> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await loop.list(apiVersion, kind, namespace);
    } catch (error) {
      if (attempt >= 40 || !String(error).includes("HTTP 429")) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Every object of a movable kind in `namespaces`, keyed by kind/namespace/name. */
async function snapshot(loop: CapiInTheLoop, namespaces: string[]): Promise<Map<string, Snapshot>> {
  const found = new Map<string, Snapshot>();
  for (const { apiVersion, kind } of await movableKinds(loop)) {
    for (const namespace of namespaces) {
      for (const object of await listSettled(loop, apiVersion, kind, namespace)) {
        const key = `${kind} ${namespace}/${object.metadata.name!}`;
        const annotations = Object.fromEntries(Object.entries(object.metadata.annotations ?? {}).filter(([key]) => key !== pausedAnnotation));
        const spec = structuredClone(object.spec) as Record<string, unknown> | undefined;
        // clusterctl pauses for the backup and resumes after the restore with spec.paused: false.
        if (kind === "Cluster" && spec && !spec.paused) delete spec.paused;
        const content = kind === "Secret" || kind === "ConfigMap" ? { type: object.type, data: object.data } : { spec };
        found.set(key, { key, labels: { ...object.metadata.labels }, annotations, content: digest(content) });
      }
    }
  }
  return found;
}

/** A snapshot once two in a row, a second apart, are the same (CAPI may still be patching what it generated). */
async function settledSnapshot(loop: CapiInTheLoop, namespaces: string[]): Promise<Map<string, Snapshot>> {
  let previous = await snapshot(loop, namespaces);
  const deadline = Date.now() + reconcileTimeoutMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const current = await snapshot(loop, namespaces);
    const changed = [...differences(previous, current), ...differences(current, previous)];
    if (changed.length === 0) return current;
    if (Date.now() > deadline) throw new Error(`objects still changing after ${reconcileTimeoutMs} ms: ${changed.join("; ")}`);
    previous = current;
  }
}

/** What `expected` has that `actual` lacks or holds differently (names and digests only: never a Secret's content). */
function differences(expected: Map<string, Snapshot>, actual: Map<string, Snapshot>): string[] {
  const problems: string[] = [];
  for (const [key, want] of expected) {
    const got = actual.get(key);
    if (!got) problems.push(`${key}: missing`);
    else {
      if (got.content !== want.content) problems.push(`${key}: content differs`);
      if (JSON.stringify(got.labels) !== JSON.stringify(want.labels)) problems.push(`${key}: labels ${JSON.stringify(got.labels)}, want ${JSON.stringify(want.labels)}`);
      if (JSON.stringify(got.annotations) !== JSON.stringify(want.annotations)) problems.push(`${key}: annotations differ`);
    }
  }
  return problems;
}

/** Runs `npm run backup`'s script (with node, as package.json's `backup` does) against a loop. */
async function runBackup(loop: CapiInTheLoop, to: string): Promise<{ stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const { stdout, stderr } = await execFileAsync(
    process.execPath,
    [backupScript, "--to", to, "--kubeconfig", kubeconfigOf(loop), "--clusterctl", loop.capi.clusterctl, "--timeout", "300"],
    { cwd: repoRoot, timeout: 330_000, maxBuffer: 64 * 1024 * 1024 },
  );
  return { stdout, stderr, ms: Date.now() - started };
}

const namespacesOf = () => [...new Set([...clusters.map((c) => c.metadata.namespace!), clusterClassNamespace])].sort();
const filesIn = (dir: string) => readdirSync(dir).sort();

let expected = new Map<string, Snapshot>();
/** Names of what CAPI generated for each Cluster on A (HetznerCluster, KubeadmControlPlane, MachineDeployments). */
const generatedOnA = new Map<string, string[]>();

async function generatedNames(loop: CapiInTheLoop, cluster: KubeObject): Promise<string[]> {
  const namespace = cluster.metadata.namespace!;
  const selector = `cluster.x-k8s.io/cluster-name=${cluster.metadata.name!}`;
  const names: string[] = [];
  for (const [apiVersion, kind] of [
    ["infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster"],
    ["controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"],
    ["cluster.x-k8s.io/v1beta2", "MachineDeployment"],
    ["cluster.x-k8s.io/v1beta2", "Machine"],
  ] as const) {
    for (const object of await loop.list(apiVersion, kind, namespace, selector)) names.push(`${kind} ${object.metadata.name!}`);
  }
  return names.sort();
}

/**
 * Applies the dev and prod stacks' Kubernetes objects that `include` accepts, as the loop test does
 * (server-side apply, the program's dependency order); returns the Clusters applied.
 */
async function applyStacks(loop: CapiInTheLoop, include: (object: KubeObject) => boolean): Promise<KubeObject[]> {
  const applied: KubeObject[] = [];
  for (const stack of stacks) {
    const { registrations } = await runStack(stack);
    const ordered = dependencyOrder(registrations);
    for (const namespace of new Set(ordered.map((r) => objectOf(r).metadata.namespace).filter((n): n is string => n !== undefined))) {
      await loop.api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    }
    for (const registration of ordered) {
      const object = objectOf(registration);
      if (!include(object)) continue;
      const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0]! : "";
      const missing = loop.sources.find((s) => "unavailable" in s && s.source === sourceOfGroup(group));
      if (missing && "unavailable" in missing) {
        skipReason = `CRDs of ${group} are unavailable (${missing.unavailable}), so the fleet cannot be reconciled and backed up`;
        continue;
      }
      const response = isPatch(registration) ? await loop.apply(object, { manager: "pulumi-kubernetes-patch", force: false }) : await loop.apply(object);
      if (response.status >= 300) throw new Error(`${stack}: ${object.kind} ${object.metadata.name!}: HTTP ${response.status}: ${responseMessage(response)}`);
      if (object.kind === "Cluster" && !isPatch(registration)) applied.push(object);
    }
  }
  return applied;
}

describe(`Fleet backup and restore with clusterctl ${catalog.clusterApi.version} and Cluster API's own managers`, () => {
  beforeAll(async () => {
    const started = Date.now();
    // The garbage collector as on a real cluster: it removes the ownerReference to the topology's
    // <cluster>-shim Secret once CAPI deleted the shim, and clusterctl moves nothing that still has it.
    a = await startCapiInTheLoop({ buildTimeoutMs, clusterctlInstall: true, garbageCollector: true, progress: (line) => report.push(`  A ${seconds(Date.now() - started)}: ${line}`) });
    report.push(`A: ${a.capi.version}: ${a.capi.buildInfo}; ${a.crds.installed} CRDs; start-up ${Object.entries(a.timings).map(([phase, ms]) => `${phase} ${seconds(ms)}`).join(", ")}`);
    clusters.push(...(await applyStacks(A(), () => true)));
    report.push(`A: applied the dev and prod stacks' objects: ${clusters.length} Clusters after ${seconds(Date.now() - started)}`);
    if (skipReason) report.push(`NOT VERIFIED: ${skipReason}`);
  }, buildTimeoutMs + 10 * 60_000);

  afterAll(async () => {
    const keptA = await a?.stop(failed);
    const keptB = await b?.stop(failed);
    for (const [name, kept] of [["A", keptA], ["B", keptB]] as const) if (kept) report.push(`${name}: logs kept in ${kept}`);
    rmSync(work, { recursive: true, force: true });
    if (report.length > 0) console.log(`fleet backup:\n  ${report.join("\n  ")}`);
  }, 120_000);

  const test = loopTest({ skipReason: () => skipReason, fail: () => (failed = true), logs: () => [a && !b ? A().logs() : "", b ? B().logs() : ""].join("\n") });

  test("A: every Cluster reconciled and provisioned as CAPH and KCP would report it; the CA Secrets generated", async () => {
    const started = Date.now();
    for (const cluster of clusters) {
      const name = cluster.metadata.name!;
      const namespace = cluster.metadata.namespace!;
      const get = () => A().get(cluster.apiVersion, "Cluster", name, namespace);
      await eventually(`A: ${name} TopologyReconciled=True`, reconcileTimeoutMs, async () => (conditionOf(await get(), "TopologyReconciled")?.status === "True" ? true : undefined));
      const selector = `cluster.x-k8s.io/cluster-name=${name}`;
      const [hetznerCluster] = await A().list("infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster", namespace, selector);
      expect(hetznerCluster, `${name}: HetznerCluster`).toBeDefined();
      const ready = await A().api.request("PATCH", `${await A().objectPath(hetznerCluster!)}/status`, { status: { ready: true } }, "application/merge-patch+json");
      expect(ready.status, responseMessage(ready)).toBeLessThan(300);
      await eventually(`A: ${name} infrastructure provisioned`, reconcileTimeoutMs, async () => (at(await get(), "status.initialization.infrastructureProvisioned") === true ? true : undefined));
      await eventually(`A: ${name}-ca Secret from KCP`, reconcileTimeoutMs, async () => ((await A().get("v1", "Secret", `${name}-ca`, namespace)) ? true : undefined));
      const [kcp] = await A().list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", namespace, selector);
      const initialized = await A().api.request("PATCH", `${await A().objectPath(kcp!)}/status`, { status: { initialization: { controlPlaneInitialized: true } } }, "application/merge-patch+json");
      expect(initialized.status, responseMessage(initialized)).toBeLessThan(300);
      await eventually(`A: ${name} ControlPlaneInitialized=True`, reconcileTimeoutMs, async () => (conditionOf(await get(), "ControlPlaneInitialized")?.status === "True" ? true : undefined));
      // CAPI deletes the shim once the Cluster owns both (internal/controllers/topology/cluster/reconcile_state.go,
      // reconcileClusterShim); the garbage collector then drops the reference to it.
      await eventually(
        `A: ${name}'s HetznerCluster and KubeadmControlPlane owned by the Cluster only (the shim reference collected)`,
        reconcileTimeoutMs,
        async () => {
          const owned = [hetznerCluster!, kcp!].map(async (object) => ((await A().get(object.apiVersion, object.kind, object.metadata.name!, namespace))?.metadata.ownerReferences as { kind: string }[] | undefined) ?? []);
          return (await Promise.all(owned)).every((refs) => refs.length > 0 && refs.every((ref) => ref.kind === "Cluster")) ? true : undefined;
        },
      );
    }
    for (const cluster of clusters) generatedOnA.set(cluster.metadata.name!, await generatedNames(A(), cluster));
    report.push(`A: ${clusters.length} Clusters TopologyReconciled, infrastructure provisioned and control plane initialized in ${seconds(Date.now() - started)}; generated: ${[...generatedOnA].map(([c, names]) => `${c}: ${names.length}`).join(", ")}`);
    expected = await settledSnapshot(A(), namespacesOf());
    const kinds = [...new Set([...expected.keys()].map((key) => key.split(" ")[0]!))].sort();
    report.push(`A: ${expected.size} objects of movable kinds in ${namespacesOf().join(", ")}: ${kinds.map((k) => `${[...expected.keys()].filter((key) => key.startsWith(`${k} `)).length} ${k}`).join(", ")}`);
    for (const cluster of clusters) {
      for (const secret of ["hcloud", `${cluster.metadata.name!}-ca`, `${cluster.metadata.name!}-etcd`, `${cluster.metadata.name!}-sa`]) {
        expect(expected.has(`Secret ${cluster.metadata.namespace!}/${secret}`), `Secret ${cluster.metadata.namespace!}/${secret} on A`).toBe(true);
      }
    }
  }, 4 * reconcileTimeoutMs);

  test("npm run backup writes every object of the fleet into a private directory (negative controls: without the move label on the hcloud Secret, or on the HelmChartProxy CRD, they are left out; a stray owner fails the backup)", async () => {
    const { stdout, stderr, ms } = await runBackup(A(), backupDir);
    report.push(`backup: ${seconds(ms)}: ${stdout.trim()}`);
    expect(stderr).not.toMatch(/BEGIN (RSA |EC )?PRIVATE KEY|client-key-data|token:/);
    expect(statSync(backupDir).mode & 0o777).toBe(0o700);
    const files = filesIn(backupDir);
    for (const file of files) expect(statSync(path.join(backupDir, file)).mode & 0o777, file).toBe(0o600);
    // clusterctl names each file <Kind>_<namespace>_<name>.yaml (objectgraph.go, getFilename).
    const inBackup = new Set(files.map((file) => file.replace(/\.yaml$/, "").split("_")).map(([kind, namespace, ...name]) => `${kind!} ${namespace!}/${name.join("_")}`));
    const left = [...expected.keys()].filter((key) => !inBackup.has(key));
    expect(left, "objects on A that the backup does not hold").toEqual([]);

    // Negative controls, three faults in one more run (each has its own effect and check):
    // 1. one tenant's hcloud Secret without its move label is not taken;
    // 2. without CAAPH's move-hierarchy label on the CRD, no HelmChartProxy is taken;
    // 3. an owner clusterctl does not move keeps an object out silently (as the shim's reference
    //    does until it is collected): the script names it and fails.
    const tenant = clusters[0]!;
    const namespace = tenant.metadata.namespace!;
    const secretPath = await A().objectPath({ apiVersion: "v1", kind: "Secret", metadata: { name: "hcloud", namespace } });
    const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/helmchartproxies.addons.cluster.x-k8s.io";
    const hierarchy = `${clusterctlLabel}/move-hierarchy`;
    const crd = await A().api.request("GET", crdPath);
    expect(((crd.json.metadata as { labels?: Record<string, string> }).labels ?? {})[hierarchy], "CAAPH's kustomize label on the HelmChartProxy CRD").toBeDefined();
    const proxies = [...expected.keys()].filter((key) => key.startsWith("HelmChartProxy "));
    expect(proxies.length).toBeGreaterThan(0);
    const [hetznerCluster] = await A().list("infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster", namespace, `cluster.x-k8s.io/cluster-name=${tenant.metadata.name!}`);
    const hcPath = await A().objectPath(hetznerCluster!);
    const stranger = await A().api.request("POST", `/api/v1/namespaces/${namespace}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "not-moved" } });
    expect(stranger.status, responseMessage(stranger)).toBeLessThan(300);
    const strangerRef = { apiVersion: "v1", kind: "ConfigMap", name: "not-moved", uid: (stranger.json.metadata as { uid: string }).uid };
    const merge = (apiPath: string, body: unknown) => A().api.request("PATCH", apiPath, body, "application/merge-patch+json");
    for (const response of [
      await merge(secretPath, { metadata: { labels: { [moveLabel]: null } } }),
      await merge(crdPath, { metadata: { labels: { [hierarchy]: null } } }),
      await A().api.request("PATCH", hcPath, [{ op: "add", path: "/metadata/ownerReferences/-", value: strangerRef }], "application/json-patch+json"),
    ]) {
      expect(response.status, responseMessage(response)).toBeLessThan(300);
    }
    const faulty = path.join(work, "faulty");
    const refused = await runBackup(A(), faulty).then(
      () => undefined,
      (error: unknown) => error as { code?: number; stderr?: string },
    );
    expect(filesIn(faulty)).toContain(`Cluster_${namespace}_${tenant.metadata.name!}.yaml`);
    expect(filesIn(faulty)).not.toContain(`Secret_${namespace}_hcloud.yaml`);
    expect(filesIn(faulty).filter((file) => file.startsWith("HelmChartProxy_"))).toEqual([]);
    expect(refused?.code, "the backup with a stray owner fails").toBe(1);
    expect(refused?.stderr).toContain(`clusterctl left out HetznerCluster ${namespace}/${hetznerCluster!.metadata.name!}`);
    // Undo the three faults.
    const owners = ((await A().get(hetznerCluster!.apiVersion, "HetznerCluster", hetznerCluster!.metadata.name!, namespace))?.metadata.ownerReferences ?? []) as { uid: string }[];
    const index = owners.findIndex((ref) => ref.uid === strangerRef.uid);
    for (const response of [
      await A().api.request("PATCH", hcPath, [{ op: "test", path: `/metadata/ownerReferences/${index}/uid`, value: strangerRef.uid }, { op: "remove", path: `/metadata/ownerReferences/${index}` }], "application/json-patch+json"),
      await A().api.request("DELETE", `/api/v1/namespaces/${namespace}/configmaps/not-moved`),
      await merge(secretPath, { metadata: { labels: { [moveLabel]: "" } } }),
      await merge(crdPath, { metadata: { labels: { [hierarchy]: "true" } } }),
    ]) {
      expect(response.status, responseMessage(response)).toBeLessThan(300);
    }
    report.push(
      `negative controls: without the move label, Secret ${namespace}/hcloud is not in the backup; without the CRD's move-hierarchy label, none of ${proxies.length} HelmChartProxies is; with a stray owner, the script refuses (${(refused?.stderr ?? "").trim().split("\n").at(-1)!.slice(0, 160)}…)`,
    );

    // The backup left A's Clusters running (clusterctl resumes what it paused).
    for (const cluster of clusters) {
      const live = await A().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace);
      expect(at(live, "spec.paused") ?? false, `${cluster.metadata.name!} paused after the backup`).toBe(false);
    }
  }, 15 * 60_000);

  test("A lost; B rebuilt without the tenants' Clusters (runbook step 2) gets the backup with clusterctl move --from-directory: the same objects, and CAPI reconciles the restored Clusters without generating anything anew", async () => {
    await A().stop(false);
    a = undefined;
    const started = Date.now();
    const startB = () => startCapiInTheLoop({ buildTimeoutMs, clusterctlInstall: true, progress: (line) => report.push(`  B ${seconds(Date.now() - started)}: ${line}`) });
    // A port the harness picked can be taken by another process before a manager binds it: once more then.
    b = await startB().catch((error: unknown) => {
      if (!String(error).includes("address already in use")) throw error;
      report.push("B: a port was taken before a manager bound it; started again");
      return startB();
    });
    report.push(`B: started in ${seconds(Date.now() - started)} (${Object.entries(b.timings).map(([phase, ms]) => `${phase} ${seconds(ms)}`).join(", ")})`);

    // As the runbook's step 2 leaves it: everything the program declares but the tenants' Clusters
    // (the ClusterClass and its templates, each tenant's namespace, hcloud Secret and HelmChartProxies).
    // clusterctl skips what exists already and links the rest to it (mover.go, restoreTargetObject).
    expect(await applyStacks(B(), (object) => object.kind !== "Cluster")).toEqual([]);
    expect((await B().api.request("GET", "/apis/cluster.x-k8s.io/v1beta2/clusters")).json.items).toEqual([]);
    const restoreStarted = Date.now();
    const restored = await execFileAsync(b.capi.clusterctl, ["move", "--from-directory", backupDir, "--to-kubeconfig", kubeconfigOf(b)], {
      timeout: 300_000,
      env: { ...process.env, CLUSTERCTL_DISABLE_VERSIONCHECK: "true" },
    });
    const moveMs = Date.now() - restoreStarted;
    report.push(`restore: clusterctl move --from-directory took ${seconds(moveMs)}: ${(restored.stdout + restored.stderr).trim().split("\n").slice(-3).join(" | ")}`);
    for (const cluster of clusters) {
      const name = cluster.metadata.name!;
      await eventually(
        `B: ${name} TopologyReconciled=True`,
        reconcileTimeoutMs,
        async () => {
          const got = await B().get(cluster.apiVersion, "Cluster", name, cluster.metadata.namespace);
          return conditionOf(got, "TopologyReconciled")?.status === "True" && !at(got, "spec.paused") ? true : undefined;
        },
        async () => JSON.stringify((await B().get(cluster.apiVersion, "Cluster", name, cluster.metadata.namespace))?.status ?? {}).slice(0, 2000),
      );
    }
    const restoreMs = Date.now() - restoreStarted;
    report.push(`restore time: ${seconds(restoreMs)} from clusterctl move --from-directory to every Cluster TopologyReconciled=True on B (clusterctl ${seconds(moveMs)})`);

    const actual = await snapshot(B(), namespacesOf());
    const lost = differences(expected, actual);
    expect(lost, `objects of A missing or changed on B: ${lost.join("; ")}`).toEqual([]);
    // Negative control of the comparison itself: a Secret whose data changed is reported.
    const tampered = new Map(expected);
    const hcloudKey = `Secret ${clusters[0]!.metadata.namespace!}/hcloud`;
    tampered.set(hcloudKey, { ...expected.get(hcloudKey)!, content: "changed" });
    expect(differences(tampered, actual)).toEqual([`${hcloudKey}: content differs`]);

    for (const cluster of clusters) {
      expect(await generatedNames(B(), cluster), `${cluster.metadata.name!}: what CAPI generated on B`).toEqual(generatedOnA.get(cluster.metadata.name!));
      const live = await B().get(cluster.apiVersion, "Cluster", cluster.metadata.name!, cluster.metadata.namespace);
      expect(at(live, "spec.topology.version")).toBe(at(cluster.spec, "topology.version"));
    }
    // The move labels came along where the fleet set them.
    for (const cluster of clusters) {
      const secret = await B().get("v1", "Secret", "hcloud", cluster.metadata.namespace);
      expect(secret?.metadata.labels?.[moveLabel], `Secret ${cluster.metadata.namespace!}/hcloud`).toBe("");
    }
  }, buildTimeoutMs + 10 * 60_000);
});
