// What part 5 of `npm run bench` (tools/benchmarks/capi-reconcile.run.ts) reports; a module of
// its own so that tools/bench.ts loads none of the test harness (vitest, which part 5 runs in).

/** One fleet size's samples. */
export interface CapiReconcileRow {
  tenants: number;
  /** Objects applied per sample (the class and its templates once, then every tenant's). */
  objects: number;
  /** From the first apply to every Cluster TopologyReconciled=True, per run. */
  samplesMs: number[];
  /** Of which: applying the objects (server-side apply, admission webhooks included). */
  applySamplesMs: number[];
}

export interface CapiReconcileReport {
  capiVersion: string;
  startupMs: number;
  rows: CapiReconcileRow[];
}
