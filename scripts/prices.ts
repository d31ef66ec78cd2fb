// `npm run prices`: the price table the cost of the fleet is computed from
// (infra/model/costs/hcloud-prices.json): its source, date and what it prices, and which server
// and load-balancer types the config accepts that it does not price.
//
// `HCLOUD_TOKEN=… npm run prices -- --refresh` reads the current prices from the Hetzner Cloud
// API (GET /v1/pricing; any project's token can read them, read-only suffices) and writes the
// table. `--from <file>` writes it from a saved response instead (`curl -H "Authorization: Bearer
// $HCLOUD_TOKEN" https://api.hetzner.cloud/v1/pricing > pricing.json`).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { catalog } from "../infra/model/versions/catalog";
import { PricingResponseError, priceTableFromPricing } from "../infra/model/costs/hcloud-pricing";
import { priceTable, type PriceTable } from "../infra/model/costs/price-table";
import { isUnrefreshed } from "../infra/model/costs/stack-cost";
import { loadBalancerTypes } from "../infra/model/facts/hetzner";

const usage = `usage: npm run prices [-- --refresh | --from <pricing.json>] [--write <file>]

  (no option)  prints the price table's source, date and coverage
  --refresh    reads GET /v1/pricing from the Hetzner Cloud API (HCLOUD_TOKEN; HCLOUD_ENDPOINT
               overrides https://api.hetzner.cloud/v1) and writes the table
  --from       writes the table from a saved GET /v1/pricing response
  --write      where to write (default infra/model/costs/hcloud-prices.json)`;

/** scripts/plan runs this from the repository root. */
const tableFile = path.resolve("infra", "model", "costs", "hcloud-prices.json");
/** The API's answer must come in this long, or the command fails (never a hang). */
const requestTimeoutMs = 30_000;

class UsageError extends Error {}
class RequestError extends Error {}

const header =
  "Hetzner Cloud monthly net prices (infra/model/costs/price-table.ts says how they are used). Written by `npm run prices -- --refresh` from the Hetzner Cloud API's GET /v1/pricing; do not edit by hand.";

/** What the config accepts and the table does not price (the catalog's server types, every load-balancer type). */
function coverage(table: PriceTable): string[] {
  const missing = [
    ...catalog.hcloud.serverTypes.filter((type) => !(type in table.serverTypes)).map((type) => `server type ${type}`),
    ...loadBalancerTypes.filter((type) => !(type in table.loadBalancerTypes)).map((type) => `load-balancer type ${type}`),
    ...(table.primaryIpv4 ? [] : ["primary IPv4"]),
  ];
  return missing;
}

function describe(table: PriceTable): string {
  if (isUnrefreshed(table)) {
    return "The price table holds no prices yet: refresh it with HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).";
  }
  const entries = [...Object.values(table.serverTypes), ...Object.values(table.loadBalancerTypes), ...(table.primaryIpv4 ? [table.primaryIpv4] : [])];
  const sources = [...new Set(entries.map((entry) => `${entry.source} on ${entry.date}`))];
  const missing = coverage(table);
  return [
    `Prices in ${table.currency}, from ${sources.join("; ")}:`,
    `  ${Object.keys(table.serverTypes).length} server types, ${Object.keys(table.loadBalancerTypes).length} load-balancer types, primary IPv4 ${table.primaryIpv4 ? "priced" : "not priced"}`,
    missing.length === 0 ? "  every type the config accepts is priced" : `  not priced, though the config accepts them: ${missing.join(", ")}`,
  ].join("\n");
}

async function fetchPricing(): Promise<unknown> {
  const token = process.env.HCLOUD_TOKEN;
  if (!token) throw new UsageError("--refresh needs HCLOUD_TOKEN (a Hetzner Cloud project token; read-only is enough)");
  const endpoint = (process.env.HCLOUD_ENDPOINT ?? "https://api.hetzner.cloud/v1").replace(/\/$/, "");
  const response = await fetch(`${endpoint}/pricing`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(requestTimeoutMs) });
  if (!response.ok) {
    const hint = response.status === 401 ? " (HCLOUD_TOKEN is not a valid project token)" : "";
    throw new RequestError(`GET ${endpoint}/pricing: HTTP ${response.status} ${response.statusText}${hint}`);
  }
  return (await response.json());
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { refresh: { type: "boolean" }, from: { type: "string" }, write: { type: "string" }, date: { type: "string" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.refresh && values.from) throw new UsageError("--refresh and --from exclude each other");
  if (!values.refresh && !values.from) {
    console.log(describe(priceTable));
    return 0;
  }
  const response = values.refresh ? await fetchPricing() : (JSON.parse(readFileSync(values.from ?? "", "utf8")) as unknown);
  // --date is for tests (a fixed day); a refresh is dated the day it ran.
  const date = values.date ?? new Date().toISOString().slice(0, 10);
  const table = priceTableFromPricing(response, date);
  const file = path.resolve(values.write ?? tableFile);
  writeFileSync(file, `${JSON.stringify({ "//": header, ...table }, undefined, 2)}\n`);
  console.log(`Wrote ${path.relative(process.cwd(), file) || file}.\n${describe(table)}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof PricingResponseError) {
      console.error(`prices: the pricing response is not what hcloud-go's schema describes: ${error.message}`);
      process.exitCode = 1;
    } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`prices: ${(error as Error).message}\n\n${usage}`);
      process.exitCode = 2;
    } else if (error instanceof RequestError || (error as { name?: string }).name === "TimeoutError" || error instanceof TypeError) {
      console.error(`prices: could not read the pricing: ${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause: Error }).cause.message})` : ""}`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  },
);
