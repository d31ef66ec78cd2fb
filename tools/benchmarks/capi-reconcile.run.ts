// Part 5 of `npm run bench`: how long CAPI's own topology controller takes to reconcile the fleet.
// Starts Cluster API in the loop once (tests/support/capi-in-the-loop.ts: kube-apiserver, CAPI's managers
// and webhooks, the recording stand-in for CAREN), then for each fleet size and run applies the
// program's objects for N generated tenants (the generator of parts 1 and 2, registered under the
// test mocks) and measures the time from the first apply to every Cluster TopologyReconciled=True;
// the tenants are deleted (and awaited) before the next sample. Not part of `npm test`: run by
// tools/bench.ts through vitest with tools/benchmarks/capi-reconcile.vitest.config.mjs, which
// reads CAPI_BENCH_TENANTS, CAPI_BENCH_RUNS and CAPI_BENCH_OUT and writes one JSON report.
import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { conditionOf, eventually, responseMessage, startCapiInTheLoop, type CapiInTheLoop, type KubeObject } from "../../tests/support/capi-in-the-loop";
import { runStack } from "../../tests/support/fleet-run";
import type { Registration } from "../../tests/support/pulumi-mocks";
import { fakeHcloudToken } from "../../tests/support/stack-files";
import type { CapiReconcileReport, CapiReconcileRow } from "./capi-reconcile-report";
import { generatedStackConfig } from "./fleet-generator";

const sizes = (process.env.CAPI_BENCH_TENANTS ?? "1,10,50").split(",").map(Number);
const runs = Number(process.env.CAPI_BENCH_RUNS ?? "3");
const buildTimeoutMs = 75 * 60_000;
const label = "capi-fleet.io/bench-sample";

let loop: CapiInTheLoop | undefined;
let startupMs = 0;

beforeAll(async () => {
  const started = Date.now();
  loop = await startCapiInTheLoop({ buildTimeoutMs });
  startupMs = Date.now() - started;
}, buildTimeoutMs + 5 * 60_000);

afterAll(async () => {
  await loop?.stop(false);
}, 60_000);

/**
 * A read (`<Resource>.get(name, id)`: an object something else created, e.g. CAPI's kubeconfig
 * Secret) is not declared by the program: its inputs are empty, so there is nothing to apply.
 */
const isRead = (registration: Registration) => (registration as { readId?: string }).readId !== undefined || !("apiVersion" in registration.inputs);

function objectOf(registration: Registration): KubeObject {
  const object = structuredClone(registration.inputs) as unknown as KubeObject;
  if (!object.metadata.name) {
    object.metadata = { ...object.metadata, name: `${registration.name}-${createHash("sha256").update(registration.urn).digest("hex").slice(0, 8)}` };
  }
  return object;
}

/** The ClusterClass, its templates and every tenant's objects of a generated fleet, in the program's registration order. */
async function fleetObjects(count: number): Promise<{ shared: KubeObject[]; tenants: KubeObject[] }> {
  const { registrations } = await runStack("prod", (values, secretKeys) => {
    const generated = generatedStackConfig({ values: { ...values }, secretKeys: [...secretKeys] }, count, fakeHcloudToken);
    Object.assign(values, generated.values);
    secretKeys.splice(0, secretKeys.length, ...generated.secretKeys);
  });
  const kubernetes = registrations.filter((r) => r.type.startsWith("kubernetes:") && r.type !== "kubernetes:helm.sh/v3:Release" && !/Patch$/.test(r.type) && !isRead(r));
  const inTenants = (r: Registration) => r.parent.includes("capi-fleet:tenants:TenantCluster::");
  const inClass = (r: Registration) => r.parent.includes("capi-fleet:tenants:HetznerClusterClass::");
  return { shared: kubernetes.filter(inClass).map(objectOf), tenants: kubernetes.filter(inTenants).map(objectOf) };
}

it(`reconciles generated fleets of ${sizes.join(", ")} tenants (${runs} runs each)`, async () => {
  if (!loop) throw new Error("Cluster API did not start (see beforeAll)");
  const L = loop;
  const fleets: { row: CapiReconcileRow; shared: KubeObject[]; tenants: KubeObject[] }[] = [];
  for (const count of sizes) fleets.push({ row: { tenants: count, objects: 0, samplesMs: [], applySamplesMs: [] }, ...(await fleetObjects(count)) });
  // Rounds go through every size, so drift on a shared machine spreads over all of them.
  for (let run = 1; run <= runs; run++) {
    for (const { row, shared, tenants } of fleets) {
      const count = row.tenants;
      const sample = `s${count}-r${run}`;
      // Every sample in fresh namespaces: nothing left from the previous one can speed it up.
      const renamed = tenants.map((object) => {
        const copy = structuredClone(object);
        if (copy.kind === "Namespace") copy.metadata.name = `${copy.metadata.name ?? ""}-${sample}`;
        else if (copy.metadata.namespace) copy.metadata.namespace = `${copy.metadata.namespace}-${sample}`;
        if (copy.kind === "Cluster") copy.metadata.labels = { ...copy.metadata.labels, [label]: sample };
        return copy;
      });
      const clusters = renamed.filter((o) => o.kind === "Cluster");
      expect(clusters).toHaveLength(count);
      const started = Date.now();
      for (const object of [...shared, ...renamed]) {
        const response = await L.apply(object);
        expect(response.status, `${object.kind} ${object.metadata.name ?? ""}: ${responseMessage(response)}`).toBeLessThan(300);
      }
      const applied = Date.now();
      const collection = `/apis/cluster.x-k8s.io/v1beta2/clusters?labelSelector=${encodeURIComponent(`${label}=${sample}`)}`;
      await eventually(`${count} Clusters TopologyReconciled=True`, 15 * 60_000, async () => {
        const items = ((await L.api.request("GET", collection)).json.items ?? []) as KubeObject[];
        return items.length === clusters.length && items.every((c) => conditionOf(c, "TopologyReconciled")?.status === "True") ? true : undefined;
      });
      const done = Date.now();
      row.objects = shared.length + renamed.length;
      row.samplesMs.push(done - started);
      row.applySamplesMs.push(applied - started);
      process.stderr.write(`bench: CAPI reconcile ${count} tenants, run ${run}/${runs}: ${((done - started) / 1000).toFixed(2)} s (apply ${((applied - started) / 1000).toFixed(2)} s)\n`);
      // Delete the sample's Clusters and wait until CAPI removed them, so the next sample starts quiet.
      for (const cluster of clusters) await L.api.request("DELETE", await L.objectPath(cluster));
      await eventually(`${count} Clusters deleted`, 15 * 60_000, async () =>
        (((await L.api.request("GET", collection)).json.items ?? []) as unknown[]).length === 0 ? true : undefined,
      );
    }
  }
  const report: CapiReconcileReport = { capiVersion: L.capi.version, startupMs, rows: fleets.map((fleet) => fleet.row) };
  const out = process.env.CAPI_BENCH_OUT;
  if (out) writeFileSync(out, `${JSON.stringify(report)}\n`);
  else console.log(JSON.stringify(report));
}, 4 * 60 * 60_000);
