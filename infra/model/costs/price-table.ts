/**
 * What the fleet pays Hetzner per month, per thing it creates: a server of a type in a location,
 * a load balancer of a type in a location, a server's primary IPv4 address. Pure data and
 * arithmetic: `npm run plan`, the PR comment and the policy pack's budget rule read it.
 *
 * The prices live in `hcloud-prices.json`, one entry per server or load-balancer type (and one for
 * primary IPv4), each with its source and the date it was read, net of VAT, as the monthly cap
 * Hetzner bills a resource that exists the whole month (hourly below it). Only Hetzner's API knows
 * the current prices (GET /v1/pricing, which needs a project token), so the file is written by
 * `npm run prices -- --refresh` from that response, never by hand (`hcloud-pricing.ts`).
 *
 * Amounts are integers in ten-thousandths of the currency unit, parsed from the API's decimal
 * strings, so sums are exact; they are rounded to cents only for display.
 */
import rawTable from "./hcloud-prices.json";

/** One priced thing: where the prices came from, when, and the monthly net price per location. */
export interface PriceEntry {
  /** Where the prices were read, e.g. "Hetzner Cloud API, GET /v1/pricing". */
  readonly source: string;
  /** The day they were read (YYYY-MM-DD). */
  readonly date: string;
  /** Monthly net price per location, as the API's decimal string (e.g. "3.4900"). */
  readonly monthlyNet: Readonly<Record<string, string>>;
}

/** The price table. */
export interface PriceTable {
  readonly currency: string;
  readonly serverTypes: Readonly<Record<string, PriceEntry>>;
  readonly loadBalancerTypes: Readonly<Record<string, PriceEntry>>;
  /** A server's primary IPv4 address (the API's `primary_ips`, type ipv4); null until refreshed. */
  readonly primaryIpv4: PriceEntry | null;
}

/** Ten-thousandths of the currency unit. */
export type Amount = number;

/** What can be priced. */
export type PricedKind = "server" | "loadBalancer" | "primaryIpv4";

const decimal = /^([0-9]+)(?:\.([0-9]+))?$/;

/** An API decimal string ("3.4900000000") as an {@link Amount}, rounded half up at the fourth decimal. */
export function parseAmount(text: string): Amount | undefined {
  const match = decimal.exec(text);
  if (!match) return undefined;
  // Stryker disable next-line StringLiteral: equivalent, the pattern requires digits before the point
  const [, whole = "0", fraction = ""] = match;
  const digits = `${fraction}00000`;
  const units = Number(whole) * 10_000 + Number(digits.slice(0, 4));
  return units + (Number(digits[4]) >= 5 ? 1 : 0);
}

/** An amount for display: "1234.57". */
export function formatAmount(amount: Amount): string {
  const cents = Math.round(amount / 100);
  const sign = cents < 0 ? "-" : "";
  const absolute = Math.abs(cents);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, "0")}`;
}

/** Whole currency units (a budget) as an {@link Amount}. */
export const amountOf = (units: number): Amount => Math.round(units * 10_000);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks a table's shape and its decimal strings; the problems name the entry. */
export function priceTableProblems(table: unknown): string[] {
  const problems: string[] = [];
  if (!isRecord(table)) return ["the price table is not a mapping"];
  if (typeof table.currency !== "string" || table.currency === "") problems.push("currency: missing");
  const entry = (value: unknown, at: string) => {
    if (!isRecord(value)) return problems.push(`${at}: not a mapping with source, date and monthlyNet`);
    if (typeof value.source !== "string" || value.source === "") problems.push(`${at}.source: missing`);
    if (typeof value.date !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value.date)) problems.push(`${at}.date: not YYYY-MM-DD`);
    if (!isRecord(value.monthlyNet)) return problems.push(`${at}.monthlyNet: not a mapping of location to price`);
    for (const [location, price] of Object.entries(value.monthlyNet)) {
      if (typeof price !== "string" || parseAmount(price) === undefined) problems.push(`${at}.monthlyNet.${location}: ${JSON.stringify(price)} is not a decimal price`);
    }
    return undefined;
  };
  for (const key of ["serverTypes", "loadBalancerTypes"] as const) {
    const entries = table[key];
    if (!isRecord(entries)) {
      problems.push(`${key}: not a mapping of type to prices`);
      continue;
    }
    for (const [type, value] of Object.entries(entries)) entry(value, `${key}.${type}`);
  }
  if (table.primaryIpv4 !== null) entry(table.primaryIpv4, "primaryIpv4");
  return problems;
}

/** `value` as a price table, or an error listing what is wrong with it. */
export function parsePriceTable(value: unknown): PriceTable {
  const problems = priceTableProblems(value);
  if (problems.length > 0) throw new Error(`price table: ${problems.join("; ")}`);
  return value as PriceTable;
}

/** The committed table (infra/model/costs/hcloud-prices.json). */
export const priceTable: PriceTable = parsePriceTable(rawTable);

/** The entry that prices `kind` of `type`, if the table has one. */
export function priceEntry(table: PriceTable, kind: PricedKind, type: string): PriceEntry | undefined {
  if (kind === "primaryIpv4") return table.primaryIpv4 ?? undefined;
  return (kind === "server" ? table.serverTypes : table.loadBalancerTypes)[type];
}

/** The monthly net price of one `kind` of `type` in `location`, if the table has it. */
export function monthlyPrice(table: PriceTable, kind: PricedKind, type: string, location: string): Amount | undefined {
  const price = priceEntry(table, kind, type)?.monthlyNet[location];
  return price === undefined ? undefined : parseAmount(price);
}
