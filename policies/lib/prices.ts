import { readFileSync } from "node:fs";
import { parsePriceTable, priceTable, type PriceTable } from "../../infra/model/costs/price-table";

/** The environment variable that names another price table (as `npm run plan -- --prices` takes it). */
export const priceTableVariable = "CAPI_FLEET_PRICES";

/**
 * The prices the budget rule judges with: the committed table (infra/model/costs/hcloud-prices.json),
 * or the file CAPI_FLEET_PRICES names (a table `npm run prices -- --from` wrote, e.g. with a
 * contract's prices). Read once per pack run.
 */
export function budgetPrices(env: NodeJS.ProcessEnv = process.env): PriceTable {
  const file = env[priceTableVariable];
  if (!file) return priceTable;
  return parsePriceTable(JSON.parse(readFileSync(file, "utf8")) as unknown);
}
