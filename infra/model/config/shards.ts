/**
 * Stack sharding: a fleet that outgrows one stack keeps the management cluster and its platform
 * in one stack (the management stack) and puts groups of tenants in shard stacks of their own,
 * which read what they need from the management stack's outputs (docs/architecture.md,
 * *Scaling out: shard stacks*). Pure: shared by the program, the policy pack and the tests.
 *
 * Why one stack cannot hold hundreds of tenants: every tenant's firewall goes through a provider
 * of its own (its own Hetzner project and token), and the engine starts one plugin process per
 * provider resource (pulumi/pkg/v3@v3.248.0: resource/deploy/providers/registry.go, loadProvider →
 * host/host.go, defaultHost.Provider → plugin.NewProvider, no reuse across provider resources).
 * A Terraform-bridged hcloud plugin holds the whole provider schema, so a stack's plugin memory
 * grows by one hcloud process per tenant (docs/performance.md, *Scale*).
 */
import type { MirrorSettings } from "./fleet-config";
import type { DeclaredResource } from "../contract/policy-facts";
import { stackOutputs } from "../contract/outputs";

/** What the management stack publishes for its shards (no secrets: the kubeconfig is an output of its own). */
export interface FleetPlatform {
  /** The fleet name the management stack's resources are labelled with (`capi-fleet-<stack>`). */
  readonly fleetName: string;
  /** `management.deletionProtection`: every shard protects its tenants when it is on. */
  readonly deletionProtection: boolean;
  /** `management.adminCidrs` (hetzner mode; empty otherwise): SSH sources of tenants with an `sshKeyName`. */
  readonly adminCidrs: readonly string[];
  /** True when the management stack runs Flux with a fleet repository (`gitops`): tenants may have `apps`. */
  readonly gitops: boolean;
  /** What the platform's components declared for the policy pack, as in the management stack. */
  readonly declared: readonly DeclaredResource[];
  /** `mirrors`: where the tenants' add-on charts come from (empty from a management stack without mirrors, or older than them). */
  readonly mirrors: Readonly<MirrorSettings>;
}

/** One tenant of the fleet as the management stack last saw it. */
export interface FleetTenant {
  /** The stack that declares the tenant (fully qualified, `organization/capi-fleet/<stack>`). */
  readonly stack: string;
  readonly namespace: string;
  /** The version its Cluster ran after that stack's last update (absent before its first). */
  readonly version?: string;
}

/**
 * Tenants one stack may hold. Derived from the bench's real-engine scale mode (docs/performance.md,
 * *Scale*): a preview with the pack runs one hcloud plugin process of about 58 MiB per tenant, next
 * to about 160 MiB of other plugins, and the whole process tree grows by about 64 MiB per tenant
 * from about 0.6 GiB. `recommended` keeps the plugins under 4 GB (about 3.5 GiB) and the tree
 * under 5 GiB, so a stack fits a 7 GB hosted runner; above `maximum` the tree passes about 13 GiB
 * and no longer fits a 16 GB runner next to the system.
 */
export const tenantsPerStack = { recommended: 60, maximum: 200 } as const;

/**
 * The validation's verdict on a stack's tenant count: nothing, a warning, or a refusal. `ownLimit`
 * is the stack's `tenantsPerStack` setting (a runner with more memory): refusal above it, no warning.
 */
export function tenantCountVerdict(count: number, ownLimit?: number): { level: "ok" } | { level: "warning" | "error"; message: string } {
  const how = "move tenants into shard stacks (docs/architecture.md, Scaling out: shard stacks)";
  if (ownLimit !== undefined) {
    return count > ownLimit
      ? { level: "error", message: `${count} tenants in one stack; allowed: at most ${ownLimit} (this stack's tenantsPerStack); ${how}, or raise tenantsPerStack for a runner with more memory (docs/performance.md, Scale)` }
      : { level: "ok" };
  }
  if (count > tenantsPerStack.maximum) {
    return {
      level: "error",
      message:
        `${count} tenants in one stack; allowed: at most ${tenantsPerStack.maximum} (each tenant's firewall needs an hcloud plugin process of its own during preview and up, ` +
        `and ${count} of them do not fit a 16 GB CI runner); ${how}, or set tenantsPerStack for a runner with more memory (docs/performance.md, Scale)`,
    };
  }
  if (count > tenantsPerStack.recommended) {
    return {
      level: "warning",
      message:
        `${count} tenants in one stack is above the documented limit of ${tenantsPerStack.recommended} for a 7 GB CI runner (one hcloud plugin process per tenant during preview and up; ` +
        `docs/performance.md, Scale); ${how}`,
    };
  }
  return { level: "ok" };
}

/**
 * A StackReference name for `name`: `organization/project/stack` as given, or `stack` (and
 * `project/stack`) completed with this program's organization and project.
 */
export function qualifiedStackName(name: string, organization: string, project: string): string {
  const parts = name.split("/");
  if (parts.length === 3) return name;
  if (parts.length === 2) return `${organization}/${name}`;
  return `${organization}/${project}/${name}`;
}

/** A stack name as `managementStack` and `shards` accept it: `stack`, `project/stack` or `organization/project/stack`. */
export const stackNamePattern = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+){0,2}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads the management stack's {@link stackOutputs.fleetPlatform} output, or says what is wrong with it. */
export function fleetPlatformFrom(value: unknown): { platform: FleetPlatform } | { problem: string } {
  if (value === undefined || value === null) {
    return { problem: `the stack has no ${stackOutputs.fleetPlatform} output: run \`pulumi up\` on the management stack first (a release older than shard support does not export it)` };
  }
  if (!isRecord(value)) return { problem: `${stackOutputs.fleetPlatform} is not a mapping` };
  const { fleetName, deletionProtection, adminCidrs, gitops, declared } = value;
  if (typeof fleetName !== "string" || typeof deletionProtection !== "boolean" || typeof gitops !== "boolean") {
    return { problem: `${stackOutputs.fleetPlatform} lacks fleetName, deletionProtection or gitops` };
  }
  if (!Array.isArray(adminCidrs) || !adminCidrs.every((cidr) => typeof cidr === "string")) return { problem: `${stackOutputs.fleetPlatform}.adminCidrs is not a list of strings` };
  if (!Array.isArray(declared) || !declared.every((entry) => isRecord(entry) && typeof entry.urn === "string" && isRecord(entry.props))) {
    return { problem: `${stackOutputs.fleetPlatform}.declared is not a list of { urn, props }` };
  }
  return { platform: { fleetName, deletionProtection, adminCidrs, gitops, declared: declared as DeclaredResource[], mirrors: mirrorsFrom(value.mirrors) } };
}

/** The mirrors a management stack published: its string fields only. */
function mirrorsFrom(value: unknown): Readonly<MirrorSettings> {
  if (!isRecord(value)) return {};
  const { charts, providers } = value;
  return { ...(typeof charts === "string" ? { charts } : {}), ...(typeof providers === "string" ? { providers } : {}) };
}

/** Reads the management stack's {@link stackOutputs.fleetTenants} output (tenant name → entry); malformed entries are skipped. */
export function fleetTenantsFrom(value: unknown): Map<string, FleetTenant> {
  const tenants = new Map<string, FleetTenant>();
  if (!isRecord(value)) return tenants;
  for (const [name, entry] of Object.entries(value)) {
    if (!isRecord(entry) || typeof entry.stack !== "string" || typeof entry.namespace !== "string") continue;
    tenants.set(name, { stack: entry.stack, namespace: entry.namespace, ...(typeof entry.version === "string" ? { version: entry.version } : {}) });
  }
  return tenants;
}

/**
 * The fleet's tenants from the stacks that declare them: the management stack's own and each
 * shard's, from that shard's last outputs (its tenantVersions and tenantImmutables).
 */
export function fleetTenantsOf(stacks: readonly { stack: string; tenants: ReadonlyMap<string, { namespace: string; version?: string }> }[]): Record<string, FleetTenant> {
  const fleet: Record<string, FleetTenant> = {};
  for (const { stack, tenants } of stacks) {
    for (const [name, { namespace, version }] of tenants) {
      fleet[name] ??= { stack, namespace, ...(version === undefined ? {} : { version }) };
    }
  }
  return fleet;
}

/**
 * A stack's tenants against the rest of the fleet: a name or namespace another stack declares
 * would put two stacks in charge of the same objects on the one management cluster.
 */
export function ownershipProblems(
  stack: string,
  tenants: readonly { name: string; namespace: string }[],
  fleet: ReadonlyMap<string, FleetTenant>,
): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const others = [...fleet].filter(([, entry]) => entry.stack !== stack);
  tenants.forEach((tenant, index) => {
    const sameName = others.find(([name]) => name === tenant.name);
    const sameNamespace = others.find(([, entry]) => entry.namespace === tenant.namespace);
    if (sameName) {
      problems.push({
        path: `tenants[${index}].name`,
        message: `"${tenant.name}" is a tenant of stack ${sameName[1].stack}; tenant names are unique across the fleet (to move a tenant between stacks: docs/architecture.md, Moving a tenant between shards)`,
      });
    } else if (sameNamespace) {
      problems.push({
        path: `tenants[${index}].namespace`,
        message: `"${tenant.namespace}" is the namespace of tenant "${sameNamespace[0]}" of stack ${sameNamespace[1].stack}; namespaces are unique across the fleet's stacks (they share the management cluster)`,
      });
    }
  });
  return problems;
}

/** The versions of the tenants the other stacks declare (for the pack's fleet-wide rules). */
export function peerTenantVersions(stack: string, fleet: ReadonlyMap<string, FleetTenant>): Record<string, string> {
  return Object.fromEntries([...fleet].flatMap(([name, entry]) => (entry.stack !== stack && entry.version !== undefined ? [[name, entry.version]] : [])));
}
