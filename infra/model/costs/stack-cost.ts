/**
 * A stack's monthly cost from its validated config: each tenant's Cluster as the program builds it
 * (`tenantClusterManifest`), and the management cluster's servers and load balancer when the stack
 * creates them (`hetzner` mode). What `npm run plan` prints and the PR comment sums.
 */
import type { ConfigProblem } from "../config/stack-config";
import type { ExistingManagement, HetznerManagement } from "../management/validate-management";
import type { Tenant } from "../tenant/validate-tenants";
import { tenantClusterManifest } from "../tenant/tenant-cluster";
import { clusterCostLines, costOf, managementCostLines, sumCosts, type Cost, type CostLine } from "./fleet-cost";
import { priceEntry, type PriceTable } from "./price-table";

/** What a stack's cost is computed from: its tenants, and its management cluster if it has one. */
export interface CostedStack {
  readonly tenants: readonly Tenant[];
  readonly management?: HetznerManagement | ExistingManagement;
}

/** One stack's cost, by tenant and for its management cluster. */
export interface StackCost {
  /** Tenant name → its lines and cost. */
  readonly tenants: ReadonlyMap<string, { readonly lines: readonly CostLine[]; readonly cost: Cost }>;
  /** The management cluster's (`hetzner` mode only; an existing cluster is not the fleet's to price). */
  readonly management: { readonly lines: readonly CostLine[]; readonly cost: Cost } | undefined;
  readonly total: Cost;
}

/** The stack's cost at `table`'s prices. */
export function stackCostOf(stack: CostedStack, table: PriceTable): StackCost {
  const tenants = new Map(
    stack.tenants.map((tenant) => {
      const lines = clusterCostLines(tenantClusterManifest(tenant));
      return [tenant.name, { lines, cost: costOf(lines, table) }] as const;
    }),
  );
  const management = stack.management?.mode === "hetzner" ? managementCostLines(stack.management) : undefined;
  const managementCost = management ? { lines: management, cost: costOf(management, table) } : undefined;
  return {
    tenants,
    management: managementCost,
    total: sumCosts([...[...tenants.values()].map((entry) => entry.cost), ...(managementCost ? [managementCost.cost] : [])]),
  };
}

/** True when the table holds no prices at all: it was never refreshed. */
export function isUnrefreshed(table: PriceTable): boolean {
  return Object.keys(table.serverTypes).length === 0 && Object.keys(table.loadBalancerTypes).length === 0 && table.primaryIpv4 === null;
}

/**
 * The config paths whose server type, load-balancer type or location the table has no price for,
 * with what it does price: the stack's cost cannot be computed.
 */
export function unpricedProblems(stack: CostedStack, table: PriceTable): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const typesOf = (kind: "server" | "loadBalancer") => Object.keys(kind === "server" ? table.serverTypes : table.loadBalancerTypes).sort();
  const nouns = { server: "server type", loadBalancer: "load-balancer type", primaryIpv4: "primary IPv4" } as const;
  const check = (path: string, kind: keyof typeof nouns, type: string, location: string) => {
    const entry = priceEntry(table, kind, type);
    if (!entry) {
      problems.push({
        path,
        message:
          kind === "primaryIpv4"
            ? `the price table has no price for primary IPv4 addresses; refresh it: npm run prices -- --refresh`
            : `${JSON.stringify(type)} has no price in the price table (infra/model/costs/hcloud-prices.json); allowed: ${typesOf(kind).join(", ") || "none, the table prices no such type"}, or refresh the table: npm run prices -- --refresh`,
      });
    } else if (entry.monthlyNet[location] === undefined) {
      const what = kind === "primaryIpv4" ? nouns[kind] : `${nouns[kind]} ${JSON.stringify(type)}`;
      problems.push({ path, message: `${what} has no price in ${location}; priced there: ${Object.keys(entry.monthlyNet).sort().join(", ")}` });
    }
  };
  stack.tenants.forEach((tenant, index) => {
    const at = `tenants[${index}]`;
    tenant.regions.forEach((region, regionIndex) => {
      check(`${at}.controlPlane.machineType`, "server", tenant.controlPlane.machineType, region);
      check(`${at}.regions[${regionIndex}]`, "primaryIpv4", "ipv4", region);
    });
    // Stryker disable next-line StringLiteral: equivalent, the schema requires a region (min 1)
    check(`${at}.apiLoadBalancerType`, "loadBalancer", tenant.apiLoadBalancerType, tenant.regions[0] ?? "");
    tenant.workers.forEach((pool, poolIndex) => {
      check(`${at}.workers[${poolIndex}].machineType`, "server", pool.machineType, pool.failureDomain);
      check(`${at}.workers[${poolIndex}].failureDomain`, "primaryIpv4", "ipv4", pool.failureDomain);
    });
  });
  if (stack.management?.mode === "hetzner") {
    check("management.serverType", "server", stack.management.serverType, stack.management.location);
    check("management.apiLoadBalancerType", "loadBalancer", stack.management.apiLoadBalancerType, stack.management.location);
    check("management.location", "primaryIpv4", "ipv4", stack.management.location);
  }
  // One problem per path: a control plane in two regions without a price is one fix.
  return [...new Map(problems.map((problem) => [problem.path, problem])).values()];
}
