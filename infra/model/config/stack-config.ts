// The stack config as the Pulumi runtime hands it over: its keys, and how a problem with it is
// reported.
/** The Pulumi project name, which is also the namespace of its config keys. */
export const projectName = "capi-fleet";

/** Every config key the program reads, by role. Secrets are separate keys so each can be checked for `--secret`. */
export const configKeys = {
  management: `${projectName}:management`,
  tenants: `${projectName}:tenants`,
  gitops: `${projectName}:gitops`,
  /** Where charts and providers come from instead of their public sources. */
  mirrors: `${projectName}:mirrors`,
  /** A management stack's shard stacks, whose tenants it lists in its `fleetTenants` output (docs/architecture.md, *Scaling out*). */
  shards: `${projectName}:shards`,
  /** Makes the stack a shard: the management stack whose cluster and platform its tenants use (instead of `management`). */
  managementStack: `${projectName}:managementStack`,
  /** The most tenants this stack may hold, for a CI runner with more memory than the documented limits assume. */
  tenantsPerStack: `${projectName}:tenantsPerStack`,
  /** Secret mapping tenant name → hcloud API token of that tenant's Hetzner project. */
  tenantHcloudTokens: `${projectName}:tenantHcloudTokens`,
  /** Secret kubeconfig of the management cluster in `existing` mode. */
  managementKubeconfig: `${projectName}:managementKubeconfig`,
  /** Secret hcloud API token of the management cluster's Hetzner project (the hcloud provider's own key). */
  hcloudToken: "hcloud:token",
  /** Optional secret GitHub token with which cluster-api-operator fetches the provider releases. */
  githubToken: `${projectName}:githubToken`,
  /** Secret mapping tenant name → credentials name → registry credentials (`username`, `password`, optional `caCrt`). */
  tenantRegistryCredentials: `${projectName}:tenantRegistryCredentials`,
  /** Secret Object Storage credentials (`accessKey`, `secretKey`) for the etcd snapshots (`management.backups`). */
  etcdS3Credentials: `${projectName}:etcdS3Credentials`,
} as const;

/** A key as problems name it: without the project's namespace (`managementStack` for `capi-fleet:managementStack`). */
export function keyPath(key: string): string {
  return key.slice(key.indexOf(":") + 1);
}

export const secretKeys: readonly string[] = [
  configKeys.tenantHcloudTokens,
  configKeys.managementKubeconfig,
  configKeys.hcloudToken,
  configKeys.githubToken,
  configKeys.etcdS3Credentials,
  configKeys.tenantRegistryCredentials,
];

/**
 * Committed stack files carry placeholder secrets starting with this word, so that an
 * offline preview works out of the box. `pulumi up` refuses them.
 */
export const placeholderSecretPrefix = "placeholder";

/** The stack config as the Pulumi runtime hands it over. */
export interface StackConfigInput {
  /** Stack name, for messages. */
  readonly stack: string;
  /** Full key ("capi-fleet:tenants") → value; objects and arrays arrive JSON-encoded. */
  readonly values: Readonly<Record<string, string>>;
  /** Keys stored with `--secret`. */
  readonly secretKeys: ReadonlySet<string>;
  /** Accept placeholder secrets (previews); false for `pulumi up`. */
  readonly allowPlaceholderSecrets: boolean;
}

/** One thing wrong with the config: where (a `pulumi config set --path` path) and why. */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
}

/** Thrown before any resource is registered; lists every problem at once. */
export class FleetConfigError extends Error {
  constructor(
    readonly stackName: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(
      [
        `Invalid config for stack "${stackName}" (stacks/Pulumi.${stackName}.yaml), ${count}:`,
        ...problems.map((problem) => `  - ${problem.path}: ${problem.message}`),
        `Nothing was created. Fix the file, or use: pulumi config set [--secret] --path '<path>' <value>`,
      ].join("\n"),
    );
    this.name = "FleetConfigError";
  }
}

/** Objects and arrays arrive as JSON; anything else stays the raw string for the schema to reject. */
export function decode(value: string | undefined): unknown {
  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, JSON.parse(undefined) throws and the catch returns undefined too
  if (value === undefined) {
    return undefined;
  }
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
