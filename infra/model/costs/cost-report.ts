/**
 * A stack's monthly cost before and after a change, by tenant and for the management cluster, as
 * `npm run plan` prints it and as the PR comment sums it across the fleet (the JSON form,
 * `npm run plan -- --cost-report`).
 */
import type { Count } from "./fleet-cost";
import { formatChange, formatRange, notKnownInAdvance } from "./fleet-cost";
import type { PriceTable } from "./price-table";
import { isUnrefreshed, stackCostOf, type CostedStack, type StackCost } from "./stack-cost";

/** One part of a stack (a tenant, or the management cluster) before and after: undefined where it does not exist. */
export interface PartChange {
  readonly now: Count | undefined;
  readonly after: Count | undefined;
}

/** A stack's cost before and after the change, in ten-thousandths of the currency unit. */
export interface StackCostChange {
  readonly stack: string;
  /** Tenant name → its cost before and after, by name. */
  readonly tenants: Readonly<Record<string, PartChange>>;
  readonly management: PartChange;
  readonly total: PartChange;
  /** Why `now` is unknown (the stack is new, or its old file fails today's validation); undefined: known. */
  readonly nowUnknown: string | undefined;
  /** Lines without a price (the totals are then lower bounds). */
  readonly unpriced: readonly string[];
}

/** The cost of `after` against `now`; a string for `now` says why it is unknown. */
export function stackCostChange(stack: string, now: CostedStack | string, after: CostedStack, table: PriceTable): StackCostChange {
  const afterCost = stackCostOf(after, table);
  const nowCost: StackCost | undefined = typeof now === "string" ? undefined : stackCostOf(now, table);
  const names = [...new Set([...(nowCost?.tenants.keys() ?? []), ...afterCost.tenants.keys()])].sort();
  return {
    stack,
    tenants: Object.fromEntries(names.map((name) => [name, { now: nowCost?.tenants.get(name)?.cost.monthly, after: afterCost.tenants.get(name)?.cost.monthly }])),
    management: { now: nowCost?.management?.cost.monthly, after: afterCost.management?.cost.monthly },
    total: { now: nowCost?.total.monthly, after: afterCost.total.monthly },
    nowUnknown: typeof now === "string" ? now : undefined,
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

/** One row, formatted for people ("12.34–56.78"). */
export interface CostRow {
  readonly now: string;
  readonly after: string;
  readonly change: string;
}

/** A part's row: "—" where the part does not exist on that side, "?" where that side is unknown. */
function row(part: PartChange, nowKnown: boolean): CostRow {
  return {
    now: nowKnown ? (part.now ? formatRange(part.now) : "—") : "?",
    after: part.after ? formatRange(part.after) : "—",
    change: nowKnown ? formatChange(part.now ?? zero, part.after ?? zero) : "?",
  };
}

/** The text `npm run plan` prints: one row per tenant, the management cluster (when the stack has one), the stack. */
export function formatStackCost(change: StackCostChange, table: PriceTable, sides: { now: string; after: string }): string {
  if (isUnrefreshed(table)) {
    return `Monthly cost of stack ${change.stack}: the price table holds no prices yet; refresh it: HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).`;
  }
  const nowKnown = change.nowUnknown === undefined;
  const management: [string, PartChange][] = change.management.now || change.management.after ? [["(management cluster)", change.management]] : [];
  const parts: [string, PartChange][] = [...Object.entries(change.tenants), ...management, ["stack total", change.total]];
  const cells = [
    ["", "now", "after", "change"],
    ...parts.map(([name, part]) => {
      const { now, after, change: delta } = row(part, nowKnown);
      return [name, now, after, delta];
    }),
  ];
  const widths = cells.reduce<number[]>((most, line) => line.map((value, column) => Math.max(most[column] ?? 0, value.length)), []);
  const line = (values: string[]) => `  ${values.map((value, column) => (column === 0 ? value.padEnd(widths[column] ?? 0) : value.padStart(widths[column] ?? 0))).join("   ")}`.trimEnd();
  return [
    `Monthly cost of stack ${change.stack} (${table.currency}, net of VAT; an autoscaled pool as min–max):`,
    `  now: ${sides.now}${change.nowUnknown === undefined ? "" : ` (${change.nowUnknown})`}; after: ${sides.after}`,
    ...cells.map(line),
    ...(change.unpriced.length > 0 ? [`  Not priced (the totals are lower bounds): ${change.unpriced.join(", ")}`] : []),
    `  Not known in advance, not included: ${notKnownInAdvance.join("; ")}.`,
  ].join("\n");
}

/** A stack the cost could not be computed for: config paths whose type or location has no price. */
export interface UnpricedStack {
  readonly stack: string;
  readonly problems: readonly { readonly path: string; readonly message: string }[];
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
  /** Each stack's total; `nowUnknown` says why its cost now is unknown (undefined: known). */
  readonly stacks: readonly (CostRow & { readonly stack: string; readonly nowUnknown: string | undefined; readonly unpriced: readonly string[] })[];
  readonly unpricedStacks: readonly UnpricedStack[];
  readonly notKnownInAdvance: readonly string[];
}

/** How many tenants the comment lists as the largest movers. */
export const moverCount = 5;

/** The largest of a change's two ends, in size: how far a part moves. */
const reach = (delta: Count) => Math.max(Math.abs(delta.min), Math.abs(delta.max));

/** The fleet's cost report from every stack's change (and the stacks that could not be priced). */
export function fleetCostReport(changes: readonly StackCostChange[], unpricedStacks: readonly UnpricedStack[], table: PriceTable): FleetCostReport {
  const known = changes.filter((change) => change.nowUnknown === undefined);
  const sum = (pick: (change: StackCostChange) => Count | undefined) =>
    known.reduce((total, change) => ({ min: total.min + (pick(change) ?? zero).min, max: total.max + (pick(change) ?? zero).max }), zero);
  const movers = known
    .flatMap((change) => Object.entries(change.tenants).map(([tenant, part]) => ({ tenant, stack: change.stack, part, delta: partDelta(part) })))
    .filter(({ delta }) => reach(delta) > 0)
    .sort((a, b) => reach(b.delta) - reach(a.delta) || a.tenant.localeCompare(b.tenant))
    .slice(0, moverCount);
  return {
    currency: table.currency,
    refreshed: !isUnrefreshed(table),
    fleet: row({ now: sum((change) => change.total.now), after: sum((change) => change.total.after) }, true),
    movers: movers.map(({ tenant, stack, part }) => ({ tenant, stack, ...row(part, true) })),
    stacks: changes.map((change) => ({ stack: change.stack, ...row(change.total, change.nowUnknown === undefined), nowUnknown: change.nowUnknown, unpriced: change.unpriced })),
    unpricedStacks,
    notKnownInAdvance,
  };
}
