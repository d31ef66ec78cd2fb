import type { PolicyResource } from "@pulumi/policy";
import { clusterCostLines, costOf, formatRange, sumCosts, type Cost, type CostLine } from "../../infra/model/costs/fleet-cost";
import { amountOf, formatAmount, type PriceTable } from "../../infra/model/costs/price-table";
import { isUnrefreshed } from "../../infra/model/costs/stack-cost";
import { stackRule } from "../lib/define";
import { clustersIn, ofType, record, resourceTypes, tenantOf } from "../lib/fleet-resources";
import { budgetPrices, priceTableVariable } from "../lib/prices";

interface Config {
  /** The stack's monthly budget in the table's currency, net; 0: none. */
  stackMonthly: number;
  /** Every tenant's monthly budget unless `tenants` names it; 0: none. */
  tenantMonthly: number;
  /** Budgets of single tenants, by name. */
  tenants: Record<string, number>;
}

/** The management cluster's servers (each with its primary IPv4 unless turned off) and load balancers, as the stack declares them. */
function hcloudLines(resources: readonly PolicyResource[]): CostLine[] {
  const servers = ofType(resources, resourceTypes.hcloudServer).flatMap((resource): CostLine[] => {
    const { serverType, location } = resource.props;
    if (typeof serverType !== "string" || typeof location !== "string") return [];
    const count = { min: 1, max: 1 };
    const publicNet = record(Array.isArray(resource.props.publicNets) ? resource.props.publicNets[0] : undefined);
    const ipv4 = publicNet.ipv4Enabled !== false;
    return [{ kind: "server", type: serverType, location, count }, ...(ipv4 ? [{ kind: "primaryIpv4" as const, type: "ipv4", location, count }] : [])];
  });
  const loadBalancers = ofType(resources, resourceTypes.hcloudLoadBalancer).flatMap((resource): CostLine[] => {
    const { loadBalancerType, location } = resource.props;
    return typeof loadBalancerType === "string" && typeof location === "string" ? [{ kind: "loadBalancer", type: loadBalancerType, location, count: { min: 1, max: 1 } }] : [];
  });
  return [...servers, ...loadBalancers];
}

/** "over its budget of 100.00 (cost 90.00–120.00)", or undefined within it; an autoscaled pool counts at its maximum. */
function overBudget(cost: Cost, budget: number): string | undefined {
  return budget > 0 && cost.monthly.max > amountOf(budget) ? `${formatRange(cost.monthly)} a month is over its budget of ${formatAmount(amountOf(budget))}` : undefined;
}

/**
 * What the stack makes Hetzner bill, judged against the monthly budgets its policy config sets:
 * each tenant's Cluster (control plane, worker pools at their autoscaling maximum, the API load
 * balancer, the servers' IPv4 addresses) and, in the management stack, the management servers and
 * load balancer. The same arithmetic as `npm run plan` (infra/model/costs/fleet-cost.ts). A shard
 * judges its own tenants against its own config, like every stack rule.
 */
export const monthlyBudget = stackRule<Config>({
  name: "monthly-budget",
  description: "The stack and each tenant stay within the monthly budgets of the stack's policy config (autoscaled pools at their maximum).",
  enforcementLevel: "advisory",
  remediationSteps:
    'Make the change cheaper (fewer or smaller servers, a lower maxSize), or raise "stackMonthly", "tenantMonthly" or "tenants" of this rule in policies/config/<stack>.json. Set its "enforcementLevel" to "mandatory" there to block such changes.',
  config: {
    stackMonthly: { type: "number", minimum: 0, default: 0 },
    tenantMonthly: { type: "number", minimum: 0, default: 0 },
    tenants: { type: "object", additionalProperties: { type: "number", minimum: 0 }, default: {} },
  },
  validate: (resources, config, report) => {
    const budgeted = config.stackMonthly > 0 || config.tenantMonthly > 0 || Object.keys(config.tenants).length > 0;
    if (!budgeted) return;
    let prices: PriceTable;
    try {
      prices = budgetPrices();
    } catch (error) {
      report(`the budgets cannot be judged: ${priceTableVariable} names an unreadable price table: ${(error as Error).message}`);
      return;
    }
    if (isUnrefreshed(prices)) {
      report("the budgets cannot be judged: the price table holds no prices yet; refresh it with HCLOUD_TOKEN=… npm run prices -- --refresh (docs/operations.md, Costs).");
      return;
    }
    const costs: Cost[] = [];
    for (const { resource, cluster } of clustersIn(resources)) {
      const cost = costOf(clusterCostLines(resource.props), prices);
      costs.push(cost);
      const tenant = tenantOf(cluster);
      const over = overBudget(cost, config.tenants[tenant] ?? config.tenantMonthly);
      if (cost.unpriced.length > 0) {
        report(`${cluster.description}: no price for ${cost.unpriced.join(", ")}; the budget cannot be judged. Refresh the price table (npm run prices -- --refresh).`, resource.urn);
      } else if (over) {
        report(`${cluster.description}: ${over}.`, resource.urn);
      }
    }
    const management = costOf(hcloudLines(resources), prices);
    costs.push(management);
    const total = sumCosts(costs);
    if (management.unpriced.length > 0) {
      report(`the management cluster: no price for ${management.unpriced.join(", ")}; the stack's budget cannot be judged. Refresh the price table (npm run prices -- --refresh).`);
      return;
    }
    const over = overBudget(total, config.stackMonthly);
    if (over) report(`the stack: ${over}.`);
  },
});
