// Medians, the bench's targets and the printed table of `npm run bench`. Pure, so
// tools/bench.test.ts checks the arithmetic and the pass/fail decisions.

/** Median of the samples (mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Median of one field over samples. */
export function medianOf<T>(samples: readonly T[], field: (sample: T) => number): number {
  return median(samples.map(field));
}

export const mebibyte = 1024 * 1024;
export const gibibyte = 1024 * mebibyte;

/** The bench's targets (docs/performance.md). */
export const targets = {
  /** time(500 tenants) / time(100 tenants) of mock registration: linear growth gives 5. */
  registrationGrowthMax: 6,
  registrationMsMax: 10_000,
  registrationHeapBytesMax: gibibyte,
  policyMsPerResourceMax: 1,
  policyPreviewShareMax: 0.05,
  plansPerSecondMin: 100_000,
} as const;

export type TargetStatus = "pass" | "FAIL" | "not run";

/** One target with what was measured. */
export interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  status: TargetStatus;
}

/** Medians per fleet size that the targets need. */
export interface TargetInputs {
  /** Median registration time by tenant count. */
  registrationMs: ReadonlyMap<number, number>;
  /** Median peak heap by tenant count. */
  peakHeapBytes: ReadonlyMap<number, number>;
  /** Median policy time per resource by tenant count. */
  policyMsPerResource: ReadonlyMap<number, number>;
  plansPerSecond: number | undefined;
  /** Plans whose worker rollouts differ from the lower bound, plus in-rule triples that failed; undefined = not run. */
  rolloutMisses: number | undefined;
  /** Median policy share of preview time by tenant count; undefined = part 4 not run. */
  previewPolicyShare: ReadonlyMap<number, number> | undefined;
  /** Part 4 ran the stand-in program: no provider time, so its share is an upper bound. */
  previewStandIn?: boolean;
}

const status = (measured: number | undefined, ok: (value: number) => boolean): TargetStatus =>
  measured === undefined || Number.isNaN(measured) ? "not run" : ok(measured) ? "pass" : "FAIL";

const fixed = (value: number | undefined, digits: number, unit = ""): string =>
  value === undefined || Number.isNaN(value) ? "-" : `${value.toFixed(digits)}${unit}`;

/** Checks every target against the medians. */
export function checkTargets(inputs: TargetInputs, large = 500, base = 100): TargetCheck[] {
  const largeMs = inputs.registrationMs.get(large);
  const baseMs = inputs.registrationMs.get(base);
  const growth = largeMs !== undefined && baseMs !== undefined ? largeMs / baseMs : undefined;
  const heap = inputs.peakHeapBytes.get(large);
  const perResource = inputs.policyMsPerResource.size > 0 ? Math.max(...inputs.policyMsPerResource.values()) : undefined;
  const share = inputs.previewPolicyShare && inputs.previewPolicyShare.size > 0 ? Math.max(...inputs.previewPolicyShare.values()) : undefined;
  return [
    { name: `registration time(${large}) / time(${base})`, target: `≤ ${targets.registrationGrowthMax}`, measured: fixed(growth, 2), status: status(growth, (v) => v <= targets.registrationGrowthMax) },
    { name: `registration time, ${large} tenants`, target: `< ${targets.registrationMsMax / 1000} s`, measured: fixed(largeMs === undefined ? undefined : largeMs / 1000, 2, " s"), status: status(largeMs, (v) => v < targets.registrationMsMax) },
    { name: `peak heap, ${large} tenants`, target: "< 1 GiB", measured: fixed(heap === undefined ? undefined : heap / mebibyte, 0, " MiB"), status: status(heap, (v) => v < targets.registrationHeapBytesMax) },
    { name: "policy time per resource (worst fleet size)", target: `< ${targets.policyMsPerResourceMax} ms`, measured: fixed(perResource, 3, " ms"), status: status(perResource, (v) => v < targets.policyMsPerResourceMax) },
    { name: inputs.previewStandIn ? "policy share of preview time (worst; stand-in program: upper bound)" : "policy share of preview time (worst)", target: `< ${targets.policyPreviewShareMax * 100}%`, measured: fixed(share === undefined ? undefined : share * 100, 1, "%"), status: status(share, (v) => v < targets.policyPreviewShareMax) },
    { name: "planner throughput", target: `≥ ${targets.plansPerSecondMin.toLocaleString("en-US")} plans/s`, measured: inputs.plansPerSecond === undefined ? "-" : `${Math.round(inputs.plansPerSecond).toLocaleString("en-US")} plans/s`, status: status(inputs.plansPerSecond, (v) => v >= targets.plansPerSecondMin) },
    { name: "worker rollouts = lower bound", target: "every plan", measured: inputs.rolloutMisses === undefined ? "-" : `${inputs.rolloutMisses} miss(es)`, status: status(inputs.rolloutMisses, (v) => v === 0) },
  ];
}

/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const numeric = (cell: string): boolean => /^[-\d.,]+( ?[%a-zA-Z/µ]+)?$/.test(cell) && cell !== "-";
  const line = (row: readonly string[]): string =>
    row.map((cell, column) => (numeric(cell) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join("  ").trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

/** The same table as GitHub Markdown (for docs/performance.md). */
export function formatMarkdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (row: readonly string[]): string => `| ${row.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The bench's exit code: 1 when a target failed or the real-engine preview failed (a violation, a missing plugin). */
export function benchExitCode(checks: readonly Pick<TargetCheck, "status">[], previewStatus: "ran" | "not run" | "failed"): number {
  return checks.some((check) => check.status === "FAIL") || previewStatus === "failed" ? 1 : 0;
}
