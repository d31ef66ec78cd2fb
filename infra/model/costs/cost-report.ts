/**
 * A stack's monthly cost before and after a change, by tenant and for the management cluster, as
 * `npm run plan` prints it and as the PR comment sums it across the fleet (the JSON form,
 * `npm run plan -- --cost-report`).
 */
import type { Count } from "./fleet-cost";
import { formatChange, formatRange, notKnownInAdvance } from "./fleet-cost";
import type { PriceTable } from "./price-table";
import { isUnrefreshed, stackCostOf, type CostedStack } from "./stack-cost";

/** One part of a stack (a tenant, or the management cluster) before and after: undefined where it does not exist. */
export interface PartChange {
  readonly now: Count | undefined;
  readonly after: Count | undefined;
}

/** A stack's cost before and after the change, in ten-thousandths of the currency unit. */
export interface StackCostChange {
  readonly stack: string;
  /** Tenant name → its cost before and after ("management" is not a tenant name: it is kept apart). */
  readonly tenants: Readonly<Record<string, PartChange>>;
  readonly management: PartChange;
  readonly total: PartChange;
  /** Why `now` is unknown, when it is (the stack is new, or its old file fails today's validation). */
  readonly nowUnknown?: string;
  /** Lines without a price (the totals are then lower bounds). */
  readonly unpriced: readonly string[];
}

/** The cost of `after` against `now` (undefined: unknown, with `nowUnknown` saying why). */
export function stackCostChange(stack: string, now: CostedStack | undefined, after: CostedStack, table: PriceTable, nowUnknown?: string): StackCostChange {
  const afterCost = stackCostOf(after, table);
  const nowCost = now ? stackCostOf(now, table) : undefined;
  const names = [...new Set([...(nowCost?.tenants.keys() ?? []), ...afterCost.tenants.keys()])].sort();
  const known = nowCost !== undefined;
  return {
    stack,
    tenants: Object.fromEntries(
      names.map((name) => [name, { now: known ? nowCost.tenants.get(name)?.cost.monthly : undefined, after: afterCost.tenants.get(name)?.cost.monthly }]),
    ),
    management: { now: nowCost?.management?.cost.monthly, after: afterCost.management?.cost.monthly },
    total: { now: nowCost?.total.monthly, after: afterCost.total.monthly },
    ...(known ? {} : { nowUnknown: nowUnknown ?? "unknown" }),
    unpriced: [...new Set([...(nowCost?.total.unpriced ?? []), ...afterCost.total.unpriced])].sort(),
  };
}

const zero: Count = { min: 0, max: 0 };

/** The change of one part, counting a part that does not exist on one side as zero. */
export function partDelta(part: PartChange): Count {
  const now = part.now ?? zero;
  const after = part.after ?? zero;
  return { min: after.min - now.min, max: after.max - now.max };
}

/** The text `npm run plan` prints: one row per tenant, the management cluster, the stack. */
export function formatStackCost(change: StackCostChange, table: PriceTable, sides: { now: string; after: string }): string {
  if (isUnrefreshed(table)) {
    return `Monthly cost of stack ${change.stack}: the price table holds no prices yet; refresh it: HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).`;
  }
  // "—": the part does not exist on that side; "?": the side is unknown.
  const show = (range: Count | undefined, known: boolean) => (!known ? "?" : range === undefined ? "—" : formatRange(range));
  const nowKnown = change.nowUnknown === undefined;
  const rows: string[][] = [];
  const row = (name: string, part: PartChange) => {
    rows.push([name, show(part.now, nowKnown), show(part.after, true), nowKnown ? formatChange(part.now ?? zero, part.after ?? zero) : "?"]);
  };
  for (const [name, part] of Object.entries(change.tenants)) row(name, part);
  if (change.management.now !== undefined || change.management.after !== undefined) row("(management cluster)", change.management);
  row("stack total", change.total);
  const header = ["", "now", "after", "change"];
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((cells) => (cells[column] ?? "").length)));
  const line = (cells: string[]) => `  ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join("   ")}`.trimEnd();
  const currency = table.currency;
  return [
    `Monthly cost of stack ${change.stack} (${currency}, net of VAT; an autoscaled pool as min–max):`,
    `  now: ${sides.now}${nowKnown ? "" : ` (${change.nowUnknown ?? ""})`}; after: ${sides.after}`,
    line(header),
    ...rows.map(line),
    ...(change.unpriced.length > 0 ? [`  Not priced (the totals are lower bounds): ${change.unpriced.join(", ")}`] : []),
    `  Not known in advance, not included: ${notKnownInAdvance.join("; ")}.`,
  ].join("\n");
}

/** A stack the cost could not be computed for: config paths whose type or location has no price. */
export interface UnpricedStack {
  readonly stack: string;
  readonly problems: readonly { readonly path: string; readonly message: string }[];
}

/** One row of the report, formatted for people ("12.34–56.78"; "?" where unknown). */
export interface CostRow {
  readonly now: string;
  readonly after: string;
  readonly change: string;
}

/** What the PR comment shows of the fleet's cost (`npm run plan -- --cost-report`). */
export interface FleetCostReport {
  readonly currency: string;
  /** False while the price table holds no prices (nothing below is computed). */
  readonly refreshed: boolean;
  /** The fleet's total over the stacks whose cost is known on both sides. */
  readonly fleet: CostRow;
  /** Tenants whose cost changes, the largest change first (at most `moverCount`). */
  readonly movers: readonly (CostRow & { readonly tenant: string; readonly stack: string })[];
  readonly stacks: readonly (CostRow & { readonly stack: string; readonly nowUnknown?: string; readonly unpriced: readonly string[] })[];
  readonly unpricedStacks: readonly UnpricedStack[];
  readonly notKnownInAdvance: readonly string[];
}

/** How many tenants the comment lists as the largest movers. */
export const moverCount = 5;

function row(part: PartChange, nowKnown: boolean): CostRow {
  return {
    now: nowKnown ? (part.now ? formatRange(part.now) : "—") : "?",
    after: part.after ? formatRange(part.after) : "—",
    change: nowKnown ? formatChange(part.now ?? zero, part.after ?? zero) : "?",
  };
}

/** The fleet's cost report from every stack's change (and the stacks that could not be priced). */
export function fleetCostReport(changes: readonly StackCostChange[], unpricedStacks: readonly UnpricedStack[], table: PriceTable): FleetCostReport {
  const known = changes.filter((change) => change.nowUnknown === undefined);
  const sum = (pick: (change: StackCostChange) => Count | undefined) =>
    known.reduce((total, change) => ({ min: total.min + (pick(change) ?? zero).min, max: total.max + (pick(change) ?? zero).max }), zero);
  const movers = changes
    .filter((change) => change.nowUnknown === undefined)
    .flatMap((change) => Object.entries(change.tenants).map(([tenant, part]) => ({ tenant, stack: change.stack, part, delta: partDelta(part) })))
    .filter(({ delta }) => delta.min !== 0 || delta.max !== 0)
    .sort((a, b) => Math.max(Math.abs(b.delta.min), Math.abs(b.delta.max)) - Math.max(Math.abs(a.delta.min), Math.abs(a.delta.max)) || a.tenant.localeCompare(b.tenant))
    .slice(0, moverCount);
  return {
    currency: table.currency,
    refreshed: !isUnrefreshed(table),
    fleet: row({ now: sum((change) => change.total.now), after: sum((change) => change.total.after) }, true),
    movers: movers.map(({ tenant, stack, part }) => ({ tenant, stack, ...row(part, true) })),
    stacks: changes.map((change) => ({
      stack: change.stack,
      ...row(change.total, change.nowUnknown === undefined),
      ...(change.nowUnknown === undefined ? {} : { nowUnknown: change.nowUnknown }),
      unpriced: change.unpriced,
    })),
    unpricedStacks,
    notKnownInAdvance,
  };
}
