/**
 * The fleet's monthly cost, from the objects that make Hetzner create something:
 * - a tenant's topology Cluster (the manifest `tenantClusterManifest` builds, the same object the
 *   policy pack sees): its control-plane servers, worker servers, their primary IPv4 addresses and
 *   the API load balancer CAPH creates for it;
 * - the management cluster's servers and API load balancer (`hetzner` mode).
 * `npm run plan` and the pack's budget rule both compute through `clusterCostLines`, so what the
 * plan prints is what the rule judges.
 *
 * What cannot be known in advance is listed, never guessed: the load balancers the hcloud CCM
 * creates for LoadBalancer Services inside a workload cluster, and the volumes of the CSI driver.
 */
import { autoscalerAnnotations } from "../platform/cluster-autoscaler";
import { karpenterServerRange } from "../platform/karpenter";
import { classVariables } from "../platform/hetzner-cluster-class";
import { formatAmount, monthlyPrice, type Amount, type PricedKind, type PriceTable } from "./price-table";

/** How many of something, as a range (an autoscaled pool: minSize to maxSize). */
export interface Count {
  readonly min: number;
  readonly max: number;
}

/** One kind of thing in one location, and how many. */
export interface CostLine {
  readonly kind: PricedKind;
  /** Server or load-balancer type; "ipv4" for primary IPv4 addresses. */
  readonly type: string;
  readonly location: string;
  readonly count: Count;
}

/** Things that cost money but whose number is not known before they exist. */
export const notKnownInAdvance = [
  "load balancers of LoadBalancer Services in the workload clusters (one per Service, created by the hcloud CCM)",
  "volumes of the hcloud CSI driver (one per PersistentVolume)",
] as const;

type Props = Record<string, unknown>;

function record(value: unknown): Props {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Props) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/** A topology variable's value: the pool's override, else the Cluster's. */
function variable(variables: unknown[], name: string): unknown {
  return variables.map(record).find((entry) => entry.name === name)?.value;
}

/** The integer in an annotation value, or undefined. */
function annotationInt(value: unknown): number | undefined {
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * The servers and load balancers one tenant's Cluster makes CAPH create. Control-plane servers
 * are spread evenly over the regions (KCP puts each in the failure domain with the fewest
 * machines; CAPH reports the regions as failure domains), workers in their pool's failure domain.
 * Every server has a primary IPv4 address: the class leaves CAPH's `publicNetwork.enableIPv4` at
 * its default, true (syself/cluster-api-provider-hetzner@v1.1.8: the HCloudMachineTemplate CRD).
 * The API load balancer sits in the first region (the class's patch of
 * `controlPlaneLoadBalancer.region`) and includes its own addresses.
 */
export function clusterCostLines(cluster: unknown): CostLine[] {
  const topology = record(record(record(cluster).spec).topology);
  const variables = list(topology.variables);
  const regions = list(variable(variables, classVariables.regions)).filter((region): region is string => typeof region === "string");
  const lines: CostLine[] = [];
  const servers = (type: unknown, location: string, count: Count) => {
    if (typeof type !== "string" || count.max === 0) return;
    lines.push({ kind: "server", type, location, count }, { kind: "primaryIpv4", type: "ipv4", location, count });
  };
  const controlPlane = record(topology.controlPlane).replicas;
  if (typeof controlPlane === "number" && regions.length > 0) {
    regions.forEach((region, index) => {
      const here = Math.floor(controlPlane / regions.length) + (index < controlPlane % regions.length ? 1 : 0);
      servers(variable(variables, classVariables.controlPlaneMachineType), region, { min: here, max: here });
    });
  }
  for (const deployment of list(record(topology.workers).machineDeployments).map(record)) {
    const overrides = list(record(deployment.variables).overrides);
    const type = variable(overrides, classVariables.workerMachineType) ?? variable(variables, classVariables.workerMachineType);
    const annotations = record(record(deployment.metadata).annotations);
    const min = annotationInt(annotations[autoscalerAnnotations.minSize]);
    const max = annotationInt(annotations[autoscalerAnnotations.maxSize]);
    const replicas = typeof deployment.replicas === "number" ? deployment.replicas : undefined;
    // A Karpenter pool has no bounds but its CPU limit (karpenter.ts).
    const count = replicas !== undefined ? { min: replicas, max: replicas } : (karpenterServerRange(annotations) ?? { min: min ?? 0, max: max ?? min ?? 0 });
    // A pool without a failure domain: CAPI places it, in one of the regions; the first stands for them.
    // Stryker disable next-line StringLiteral: equivalent, with no region there is no location to price ("" has no price)
    const location = typeof deployment.failureDomain === "string" ? deployment.failureDomain : (regions[0] ?? "");
    servers(type, location, count);
  }
  const loadBalancerType = variable(variables, classVariables.apiLoadBalancerType);
  const [firstRegion] = regions;
  if (typeof loadBalancerType === "string" && firstRegion !== undefined) {
    lines.push({ kind: "loadBalancer", type: loadBalancerType, location: firstRegion, count: { min: 1, max: 1 } });
  }
  return lines;
}

/** The management cluster's servers (each with its primary IPv4) and API load balancer, `hetzner` mode. */
export function managementCostLines(management: { servers: number; serverType: string; location: string; apiLoadBalancerType: string }): CostLine[] {
  const count = { min: management.servers, max: management.servers };
  return [
    { kind: "server", type: management.serverType, location: management.location, count },
    { kind: "primaryIpv4", type: "ipv4", location: management.location, count },
    { kind: "loadBalancer", type: management.apiLoadBalancerType, location: management.location, count: { min: 1, max: 1 } },
  ];
}

/** A monthly cost range, and the lines the table has no price for. */
export interface Cost {
  readonly monthly: Count;
  /** "cx23 in fsn1 (server)" for each line without a price: the cost is then a lower bound. */
  readonly unpriced: readonly string[];
}

/** The monthly cost of `lines` at `table`'s prices. */
export function costOf(lines: readonly CostLine[], table: PriceTable): Cost {
  let min: Amount = 0;
  let max: Amount = 0;
  const unpriced = new Set<string>();
  for (const line of lines) {
    const price = monthlyPrice(table, line.kind, line.type, line.location);
    if (price === undefined) {
      unpriced.add(`${line.kind === "primaryIpv4" ? "primary IPv4" : line.type} in ${line.location} (${line.kind === "loadBalancer" ? "load balancer" : line.kind === "server" ? "server" : "address"})`);
      continue;
    }
    min += price * line.count.min;
    max += price * line.count.max;
  }
  return { monthly: { min, max }, unpriced: [...unpriced].sort() };
}

/** Sums costs. */
export function sumCosts(costs: readonly Cost[]): Cost {
  return {
    monthly: { min: costs.reduce((sum, cost) => sum + cost.monthly.min, 0), max: costs.reduce((sum, cost) => sum + cost.monthly.max, 0) },
    unpriced: [...new Set(costs.flatMap((cost) => cost.unpriced))].sort(),
  };
}

/** "12.34" or "12.34–56.78". */
export function formatRange(range: Count): string {
  return range.min === range.max ? formatAmount(range.min) : `${formatAmount(range.min)}–${formatAmount(range.max)}`;
}

/** "+12.34", "-1.00", "±0.00" or "+1.00–+20.00": the change from `before` to `after` (min to min, max to max). */
export function formatChange(before: Count, after: Count): string {
  const signed = (amount: Amount) => (amount > 0 ? `+${formatAmount(amount)}` : amount < 0 ? formatAmount(amount) : "±0.00");
  const low = after.min - before.min;
  const high = after.max - before.max;
  return low === high ? signed(low) : `${signed(low)}–${signed(high)}`;
}
