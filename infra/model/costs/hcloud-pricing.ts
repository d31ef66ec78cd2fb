/**
 * The price table from a response of the Hetzner Cloud API's GET /v1/pricing, read as hcloud-go
 * decodes it (github.com/hetznercloud/hcloud-go/v2@v2.53.0: hcloud/schema/pricing.go,
 * `PricingGetResponse`): `pricing.currency`, `pricing.server_types[]` and
 * `pricing.load_balancer_types[]` (`name`, `prices[]` of `location` and `price_monthly.net`), and
 * `pricing.primary_ips[]` (`type` "ipv4", `prices[]` of `location` and `price_monthly.net`).
 * `npm run prices -- --refresh` writes the result to hcloud-prices.json.
 */
import { parseAmount, parsePriceTable, type PriceEntry, type PriceTable } from "./price-table";

/** The paths of the response this module reads, as hcloud-go's schema names them (scripts/prices.test.ts checks them against it). */
export const pricingFieldsRead = [
  "pricing.currency",
  "pricing.server_types[].name",
  "pricing.server_types[].prices[].location",
  "pricing.server_types[].prices[].price_monthly.net",
  "pricing.load_balancer_types[].name",
  "pricing.load_balancer_types[].prices[].location",
  "pricing.load_balancer_types[].prices[].price_monthly.net",
  "pricing.primary_ips[].type",
  "pricing.primary_ips[].prices[].location",
  "pricing.primary_ips[].prices[].price_monthly.net",
] as const;

/** Where a refreshed table says its prices come from. */
export const pricingSource = "Hetzner Cloud API, GET /v1/pricing (net, monthly)";

export class PricingResponseError extends Error {}

type Props = Record<string, unknown>;

function record(value: unknown, at: string): Props {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new PricingResponseError(`${at}: expected an object`);
  return value as Props;
}

function array(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw new PricingResponseError(`${at}: expected a list`);
  return value as unknown[];
}

function text(value: unknown, at: string): string {
  if (typeof value !== "string" || value === "") throw new PricingResponseError(`${at}: expected a non-empty string`);
  return value;
}

/** `prices[]` as location → monthly net price. */
function monthlyNet(prices: unknown, at: string): Record<string, string> {
  const byLocation: Record<string, string> = {};
  array(prices, at).forEach((price, index) => {
    const entry = record(price, `${at}[${index}]`);
    const location = text(entry.location, `${at}[${index}].location`);
    const net = text(record(entry.price_monthly, `${at}[${index}].price_monthly`).net, `${at}[${index}].price_monthly.net`);
    if (parseAmount(net) === undefined) throw new PricingResponseError(`${at}[${index}].price_monthly.net: ${JSON.stringify(net)} is not a decimal price`);
    byLocation[location] = net;
  });
  return byLocation;
}

/** Named types (`server_types`, `load_balancer_types`) as name → entry; names as the API gives them, lower-cased. */
function typed(list: unknown, at: string, date: string): Record<string, PriceEntry> {
  const entries: Record<string, PriceEntry> = {};
  array(list, at).forEach((item, index) => {
    const entry = record(item, `${at}[${index}]`);
    const name = text(entry.name, `${at}[${index}].name`).toLowerCase();
    entries[name] = { source: pricingSource, date, monthlyNet: monthlyNet(entry.prices, `${at}[${index}].prices`) };
  });
  return Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a.localeCompare(b)));
}

/** The price table in a GET /v1/pricing response read on `date` (YYYY-MM-DD). */
export function priceTableFromPricing(response: unknown, date: string): PriceTable {
  const pricing = record(record(response, "response").pricing, "pricing");
  const ipv4 = array(pricing.primary_ips, "pricing.primary_ips")
    .map((entry, index) => ({ entry: record(entry, `pricing.primary_ips[${index}]`), index }))
    .find(({ entry, index }) => text(entry.type, `pricing.primary_ips[${index}].type`) === "ipv4");
  return parsePriceTable({
    currency: text(pricing.currency, "pricing.currency"),
    serverTypes: typed(pricing.server_types, "pricing.server_types", date),
    loadBalancerTypes: typed(pricing.load_balancer_types, "pricing.load_balancer_types", date),
    primaryIpv4: ipv4 ? { source: pricingSource, date, monthlyNet: monthlyNet(ipv4.entry.prices, `pricing.primary_ips[${ipv4.index}].prices`) } : null,
  });
}
