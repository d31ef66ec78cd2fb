import type { z } from "zod";
import { catalog } from "./catalog";
import { cidrContains, cidrsOverlap, familiesCoveredEntirely, firstSubnet, isPrivateIpv4, mustParseCidr, type Cidr } from "./cidr";
import { poolMaxReplicas, scaleFromZeroProblem } from "./cluster-autoscaler";
import {
  allowedKeysFromMessage,
  k3sClusterNetworks,
  fleetConfigSchema,
  networkZoneOf,
  placementGroupServerLimit,
  type ExistingManagementSettings,
  type FleetSettings,
  type GitOpsSettings,
  type HetznerManagementSettings,
  type TenantSettings,
  type WorkerPoolSettings,
} from "./fleet-config";
import { kubeProxyModeOf, registryCredentialNames } from "./caren-cluster-config";
import { kubeconfigServer } from "./kubeconfig";
import { reservedNamespaces } from "./platform-namespaces";
import { SecretValue } from "./secret";
import { stackNamePattern, tenantCountVerdict } from "./shards";
import { tenantNameLabelProblem } from "./tenant-firewall";
import { closestMatch, formatValue } from "./text";

/** The Pulumi project name, which is also the namespace of its config keys. */
export const projectName = "capi-fleet";

/** Every config key the program reads, by role. Secrets are separate keys so each can be checked for `--secret`. */
export const configKeys = {
  management: `${projectName}:management`,
  tenants: `${projectName}:tenants`,
  gitops: `${projectName}:gitops`,
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

export type HetznerManagement = HetznerManagementSettings & {
  /** Token of the management cluster's Hetzner project (`hcloud:token`). */
  readonly hcloudToken: SecretValue;
  /** Object Storage credentials for the etcd snapshots (`etcdS3Credentials`), when `backups` is set. */
  readonly etcdS3Credentials?: EtcdS3Credentials;
};

/** An Object Storage access key pair (Hetzner console: Security → S3 credentials). */
export interface EtcdS3Credentials {
  readonly accessKey: SecretValue;
  readonly secretKey: SecretValue;
}

export type ExistingManagement = ExistingManagementSettings & {
  readonly kubeconfig: SecretValue;
  /** API server URL of the kubeconfig's current context (not secret). */
  readonly apiServerUrl: string;
};

export type Tenant = TenantSettings & {
  /** Namespace of the tenant's Cluster (the tenant name unless set). */
  readonly namespace: string;
  /** Token of the tenant's own Hetzner project. */
  readonly hcloudToken: SecretValue;
  /** Registry credentials by the name the tenant's registries reference (`tenantRegistryCredentials.<tenant>`). */
  readonly registryCredentials: ReadonlyMap<string, RegistryCredentials>;
};

/** One set of registry credentials; the program writes it into a Secret with CAREN's keys. */
export interface RegistryCredentials {
  readonly username: SecretValue;
  readonly password: SecretValue;
  /** PEM CA certificate of a registry with a private CA. */
  readonly caCrt?: SecretValue;
}

/** The validated fleet config. */
export interface FleetConfig {
  readonly stack: string;
  readonly management: HetznerManagement | ExistingManagement;
  readonly tenants: readonly Tenant[];
  readonly gitops: GitOpsSettings | undefined;
  /** Shard stacks whose tenants share this management cluster (`shards`); empty for a fleet in one stack. */
  readonly shards: readonly string[];
  /** GitHub token for cluster-api-operator's release downloads (`githubToken`), when set. */
  readonly githubToken: SecretValue | undefined;
  /** Keys that still hold committed placeholder secrets (only possible in previews). */
  readonly placeholderSecrets: readonly string[];
  /** Values that may be fine but cannot be checked offline (e.g. an hcloud server type this release does not know). */
  readonly warnings: readonly ConfigProblem[];
}

/**
 * Validates the whole stack config and returns it typed, or throws FleetConfigError
 * naming every bad key path, the value (never a secret's) and what is allowed.
 */
export function parseFleetConfig(input: StackConfigInput): FleetConfig {
  if (input.values[configKeys.managementStack] !== undefined) {
    throw new FleetConfigError(input.stack, [
      { path: "managementStack", message: "makes this a shard stack, which parseShardConfig reads; parseFleetConfig reads a stack with a management cluster" },
    ]);
  }
  const problems: ConfigProblem[] = [...unknownKeyProblems(input.values)];
  const raw = {
    management: decode(input.values[configKeys.management]),
    tenants: decode(input.values[configKeys.tenants]),
    gitops: decode(input.values[configKeys.gitops]),
  };
  const parsed = fleetConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    problems.push(...parsed.error.issues.flatMap(schemaIssueProblems));
  }
  const secrets = new SecretReader(input, problems);
  if (!parsed.success) {
    secrets.checkStoredAsSecrets();
    throw new FleetConfigError(input.stack, problems);
  }

  const settings = parsed.data;
  const shards = readShards(input.values[configKeys.shards], problems);
  problems.push(...managementProblems(settings), ...tenantProblems(settings));
  const count = tenantCountVerdict(settings.tenants.length, readTenantsPerStack(input.values[configKeys.tenantsPerStack], problems));
  if (count.level === "error") problems.push({ path: "tenants", message: count.message });
  const management = readManagement(settings.management, secrets, settings.tenants.length > 0);
  const tokens = secrets.tenantTokens(settings.tenants.map((tenant) => tenant.name));
  const registryCredentials = secrets.registryCredentials(settings.tenants);
  const githubToken = secrets.optional(configKeys.githubToken, "githubToken", githubTokenProblem);
  secrets.checkStoredAsSecrets();
  const tenants = settings.tenants.flatMap((tenant) => {
    const hcloudToken = tokens.get(tenant.name);
    return hcloudToken
      ? [{ ...tenant, namespace: tenant.namespace ?? tenant.name, hcloudToken, registryCredentials: registryCredentials.get(tenant.name) ?? new Map<string, RegistryCredentials>() }]
      : [];
  });
  if (problems.length > 0) {
    throw new FleetConfigError(input.stack, problems);
  }
  // A missing secret always came with a problem, so this only narrows the types.
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, never true without a problem above (the "true" variant is killed)
  if (!management || tenants.length !== settings.tenants.length) {
    throw new FleetConfigError(input.stack, problems);
  }
  return {
    stack: input.stack,
    management,
    tenants,
    gitops: settings.gitops,
    shards,
    githubToken,
    placeholderSecrets: secrets.placeholders,
    warnings: [...hcloudNameWarnings(settings), ...(count.level === "warning" ? [{ path: "tenants", message: count.message }] : [])],
  };
}

/** `tenantsPerStack`: a positive integer, or undefined when unset (with a problem when malformed). */
function readTenantsPerStack(value: string | undefined, problems: ConfigProblem[]): number | undefined {
  if (value === undefined) return undefined;
  const limit = decode(value);
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
    problems.push({ path: "tenantsPerStack", message: `${formatValue(limit)} is not allowed; allowed: a whole number of tenants, at least 1` });
    return undefined;
  }
  return limit;
}

/** `shards`: a list of distinct stack names (`stack`, `project/stack` or `organization/project/stack`). */
function readShards(value: string | undefined, problems: ConfigProblem[]): string[] {
  const raw = decode(value);
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problems.push({ path: "shards", message: `expected a list of stack names, got ${formatValue(raw)}` });
    return [];
  }
  const shards: string[] = [];
  raw.forEach((entry, index) => {
    if (typeof entry !== "string" || !stackNamePattern.test(entry)) {
      problems.push({ path: `shards[${index}]`, message: `${formatValue(entry)} is not a stack name; allowed: stack, project/stack or organization/project/stack` });
    } else if (shards.includes(entry)) {
      problems.push({ path: `shards[${index}]`, message: `${formatValue(entry)} is listed twice` });
    } else {
      shards.push(entry);
    }
  });
  return shards;
}

/** A shard stack's validated config: its tenants, and the management stack they run on. */
export interface ShardConfig {
  readonly stack: string;
  /** `managementStack` as written (the program qualifies it with its organization and project). */
  readonly managementStack: string;
  readonly tenants: readonly Tenant[];
  readonly placeholderSecrets: readonly string[];
  readonly warnings: readonly ConfigProblem[];
}

/** The keys a shard stack may set: its tenants and their secrets, and its management stack. */
const shardKeys: readonly string[] = [configKeys.managementStack, configKeys.tenants, configKeys.tenantHcloudTokens, configKeys.tenantRegistryCredentials, configKeys.tenantsPerStack];

/**
 * Validates a shard stack's config (`managementStack` set): the tenants as in any stack, and
 * nothing of the management cluster, its platform or its shards, which the management stack owns.
 * What depends on the management stack (gitops for `apps`, tenants of other stacks) is checked by
 * the program once it has read that stack's outputs (infra/shard.ts).
 */
export function parseShardConfig(input: StackConfigInput): ShardConfig {
  const problems: ConfigProblem[] = [...unknownKeyProblems(input.values)];
  const owner: Record<string, string> = {
    [configKeys.management]: "the management stack's",
    [configKeys.gitops]: "the management stack's (Flux runs on the management cluster)",
    [configKeys.shards]: "the management stack's (it lists its shards)",
    [configKeys.hcloudToken]: "the management stack's",
    [configKeys.managementKubeconfig]: "read from the management stack's outputs",
    [configKeys.githubToken]: "the management stack's (cluster-api-operator runs there)",
    [configKeys.etcdS3Credentials]: "the management stack's",
  };
  for (const key of Object.keys(input.values).filter((candidate) => owner[candidate] !== undefined && !shardKeys.includes(candidate))) {
    const display = key.startsWith(`${projectName}:`) ? key.slice(projectName.length + 1) : key;
    problems.push({ path: display, message: `is not allowed in a shard stack (managementStack is set): it is ${owner[key] ?? ""} setting; remove it: pulumi config rm ${display}` });
  }
  const managementStack = input.values[configKeys.managementStack] ?? "";
  if (!stackNamePattern.test(managementStack)) {
    problems.push({ path: "managementStack", message: `${formatValue(managementStack)} is not a stack name; allowed: stack, project/stack or organization/project/stack` });
  } else if (managementStack.split("/").pop() === input.stack && !managementStack.includes("/")) {
    problems.push({ path: "managementStack", message: `${formatValue(managementStack)} names this stack itself; name the stack that holds the management cluster` });
  }
  const rawTenants = decode(input.values[configKeys.tenants]);
  const parsed = fleetConfigSchema.shape.tenants.safeParse(rawTenants ?? [], { reportInput: true });
  if (!parsed.success) {
    problems.push(...parsed.error.issues.flatMap((issue) => schemaIssueProblems({ ...issue, path: ["tenants", ...issue.path] })));
  }
  const secrets = new SecretReader(input, problems);
  if (!parsed.success) {
    secrets.checkStoredAsSecrets();
    throw new FleetConfigError(input.stack, problems);
  }
  const settings = { tenants: parsed.data, gitops: undefined };
  if (settings.tenants.length === 0) {
    problems.push({ path: "tenants", message: "a shard stack needs at least one tenant (is required: the tenants are what a shard is for)" });
  }
  problems.push(...tenantProblems(settings, { gitopsFromManagementStack: true }));
  const count = tenantCountVerdict(settings.tenants.length, readTenantsPerStack(input.values[configKeys.tenantsPerStack], problems));
  if (count.level === "error") problems.push({ path: "tenants", message: count.message });
  const tokens = secrets.tenantTokens(settings.tenants.map((tenant) => tenant.name));
  const registryCredentials = secrets.registryCredentials(settings.tenants);
  secrets.checkStoredAsSecrets();
  const tenants = settings.tenants.flatMap((tenant) => {
    const hcloudToken = tokens.get(tenant.name);
    return hcloudToken
      ? [{ ...tenant, namespace: tenant.namespace ?? tenant.name, hcloudToken, registryCredentials: registryCredentials.get(tenant.name) ?? new Map<string, RegistryCredentials>() }]
      : [];
  });
  if (problems.length > 0 || tenants.length !== settings.tenants.length) {
    throw new FleetConfigError(input.stack, problems);
  }
  return {
    stack: input.stack,
    managementStack,
    tenants,
    placeholderSecrets: secrets.placeholders,
    warnings: [...tenantNameWarnings(settings.tenants), ...(count.level === "warning" ? [{ path: "tenants", message: count.message }] : [])],
  };
}

/** Objects and arrays arrive as JSON; anything else stays the raw string for the schema to reject. */
function decode(value: string | undefined): unknown {
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

/**
 * `["tenants", 0, "name"]` → `tenants[0].name`; keys that are not plain identifiers (map
 * keys such as annotation names) use the quoted form `pulumi config set --path` accepts:
 * `tenants[0].annotations["example.com/key"]`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === "number") {
      return `${text}[${segment}]`;
    }
    const key = String(segment);
    if (!/^[A-Za-z_$][\w$-]*$/.test(key)) {
      return `${text}[${JSON.stringify(key)}]`;
    }
    return text ? `${text}.${key}` : key;
  }, "");
}

function unknownKeyProblems(values: Readonly<Record<string, string>>): ConfigProblem[] {
  const known: string[] = Object.values(configKeys).filter((key) => key.startsWith(`${projectName}:`));
  const bare = (key: string) => key.slice(projectName.length + 1);
  return Object.keys(values)
    .filter((key) => key.startsWith(`${projectName}:`) && !known.includes(key))
    .map((key) => {
      const suggestion = closestMatch(bare(key), known.map(bare));
      return {
        path: bare(key),
        message: `unknown config key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${known.map(bare).join(", ")}`,
      };
    });
}

function schemaIssueProblems(issue: z.core.$ZodIssue): ConfigProblem[] {
  if (issue.code === "unrecognized_keys") {
    // Stryker disable next-line ArrayDeclaration: equivalent, every object is a strictObject, whose unknown-key message always lists the keys
    const allowed = allowedKeysFromMessage(issue.message) ?? [];
    return issue.keys.map((key) => {
      const suggestion = closestMatch(key, allowed);
      return {
        path: formatPath([...issue.path, key]),
        message: `unknown key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${allowed.join(", ")}`,
      };
    });
  }
  return [{ path: formatPath(issue.path), message: describeIssue(issue) }];
}

/** Our own messages already name value and allowed values; zod's generic ones get both added here. */
function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? `is required (${issue.expected})` : `expected ${issue.expected}, got ${formatValue(issue.input)}`;
    case "too_small":
      // A list is not echoed: its own message says what it needs.
      return issue.origin === "array" ? issue.message : `${formatValue(issue.input)} ${issue.message}`;
    case "too_big":
    case "invalid_format":
      return `${formatValue(issue.input)} ${issue.message}`;
    case "invalid_key":
      // A record key failed its own schema; its messages name the key and what is allowed.
      // Stryker disable next-line StringLiteral: equivalent, the only record key schema (annotationKey) reports at most one issue
      return issue.issues.map((inner) => inner.message).join("; ");
    default:
      return issue.message;
  }
}

/** Reads, format-checks and wraps secrets; records every secret key it touched. */
class SecretReader {
  readonly placeholders: string[] = [];

  constructor(
    private readonly input: StackConfigInput,
    private readonly problems: ConfigProblem[],
  ) {}

  /** A required secret string, or undefined (with a problem) when missing or malformed. */
  read(key: string, display: string, check: (value: string) => string | undefined): SecretValue | undefined {
    const value = this.input.values[key];
    if (value === undefined || value === "") {
      this.problems.push({ path: display, message: `is required; set it with: pulumi config set --secret ${display} <value>` });
      return undefined;
    }
    return this.accept(display, value, check);
  }

  /** An optional secret string: undefined when unset, with a problem when malformed. */
  optional(key: string, display: string, check: (value: string) => string | undefined): SecretValue | undefined {
    const value = this.input.values[key];
    return value === undefined ? undefined : this.accept(display, value, check);
  }

  /** Per-tenant tokens from the secret mapping `tenantHcloudTokens`. */
  tenantTokens(tenantNames: readonly string[]): Map<string, SecretValue> {
    const tokens = new Map<string, SecretValue>();
    const raw = decode(this.input.values[configKeys.tenantHcloudTokens]);
    const mapping = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    if (raw !== undefined && mapping !== raw) {
      this.problems.push({ path: "tenantHcloudTokens", message: "expected a mapping of tenant name to token" });
    }
    for (const name of tenantNames) {
      const path = `tenantHcloudTokens.${name}`;
      const value = mapping[name];
      if (typeof value !== "string" || value === "") {
        this.problems.push({
          path,
          message: `is required: every tenant needs the token of its own Hetzner project; set it with: pulumi config set --secret --path '${path}' <token>`,
        });
        continue;
      }
      const token = this.accept(path, value, hcloudTokenProblem);
      if (token) {
        tokens.set(name, token);
      }
    }
    for (const name of Object.keys(mapping).filter((key) => !tenantNames.includes(key))) {
      const suggestion = closestMatch(name, tenantNames);
      this.problems.push({
        path: `tenantHcloudTokens.${name}`,
        message: `no tenant is named "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""}; tenants: ${tenantNames.join(", ") || "(none)"}`,
      });
    }
    return tokens;
  }

  /** The Object Storage key pair from the secret mapping `etcdS3Credentials`. */
  etcdS3Credentials(): EtcdS3Credentials | undefined {
    const raw = decode(this.input.values[configKeys.etcdS3Credentials]);
    const mapping = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    if (raw !== undefined && mapping !== raw) {
      this.problems.push({ path: "etcdS3Credentials", message: "expected a mapping with accessKey and secretKey" });
    }
    const fields = ["accessKey", "secretKey"] as const;
    for (const key of Object.keys(mapping).filter((candidate) => !(fields as readonly string[]).includes(candidate))) {
      const suggestion = closestMatch(key, fields);
      this.problems.push({
        path: `etcdS3Credentials.${key}`,
        message: `unknown key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${fields.join(", ")}`,
      });
    }
    const read = (field: (typeof fields)[number]): SecretValue | undefined => {
      const path = `etcdS3Credentials.${field}`;
      const value = mapping[field];
      if (typeof value !== "string" || value === "") {
        this.problems.push({
          path,
          message: `is required by management.backups (an Object Storage key of the Hetzner project); set it with: pulumi config set --secret --path '${path}' <value>`,
        });
        return undefined;
      }
      return this.accept(path, value, objectStorageKeyProblem);
    };
    const accessKey = read("accessKey");
    const secretKey = read("secretKey");
    return accessKey && secretKey ? { accessKey, secretKey } : undefined;
  }

  /**
   * Registry credentials from the secret mapping `tenantRegistryCredentials`: every name a
   * tenant's `imageRegistries[].credentials` or `globalImageRegistryMirror.credentials` uses
   * must be there, and nothing else.
   */
  registryCredentials(tenants: readonly TenantSettings[]): Map<string, Map<string, RegistryCredentials>> {
    const key = "tenantRegistryCredentials";
    const result = new Map<string, Map<string, RegistryCredentials>>();
    const raw = decode(this.input.values[configKeys.tenantRegistryCredentials]);
    const mappingOf = (value: unknown) =>
      typeof value === "object" &&
      // Stryker disable next-line ConditionalExpression: equivalent, null would come back as itself, and every caller treats null like undefined (?? {} and !)
      value !== null &&
      !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    const byTenant = mappingOf(raw) ?? {};
    if (raw !== undefined && !mappingOf(raw)) {
      this.problems.push({ path: key, message: "expected a mapping of tenant name to credentials name to { username, password, caCrt }" });
    }
    const tenantNames = tenants.map((tenant) => tenant.name);
    for (const name of Object.keys(byTenant).filter((candidate) => !tenantNames.includes(candidate))) {
      const suggestion = closestMatch(name, tenantNames);
      this.problems.push({ path: `${key}.${name}`, message: `no tenant is named "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""}; tenants: ${tenantNames.join(", ") || "(none)"}` });
    }
    const fields = ["username", "password", "caCrt"] as const;
    for (const tenant of tenants) {
      const used = registryCredentialNames(tenant);
      const given = mappingOf(byTenant[tenant.name]) ?? {};
      if (byTenant[tenant.name] !== undefined && !mappingOf(byTenant[tenant.name])) {
        this.problems.push({ path: `${key}.${tenant.name}`, message: "expected a mapping of credentials name to { username, password, caCrt }" });
      }
      const credentials = new Map<string, RegistryCredentials>();
      for (const name of Object.keys(given).filter((candidate) => !used.includes(candidate))) {
        this.problems.push({
          path: `${key}.${tenant.name}.${name}`,
          message: `no registry of tenant ${tenant.name} uses it; reference it from imageRegistries[].credentials or globalImageRegistryMirror.credentials, or remove it${used.length > 0 ? ` (used: ${used.join(", ")})` : ""}`,
        });
      }
      for (const name of used) {
        const at = `${key}.${tenant.name}.${name}`;
        const entry = mappingOf(given[name]);
        if (!entry) {
          this.problems.push({
            path: at,
            message: `is required: a registry of tenant ${tenant.name} names these credentials; set them with: pulumi config set --secret --path '${at}.username' <user> and '${at}.password' <password> (optional '${at}.caCrt')`,
          });
          continue;
        }
        for (const field of Object.keys(entry).filter((candidate) => !(fields as readonly string[]).includes(candidate))) {
          const suggestion = closestMatch(field, fields);
          this.problems.push({ path: `${at}.${field}`, message: `unknown key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${fields.join(", ")}` });
        }
        const read = (field: (typeof fields)[number], required: boolean): SecretValue | undefined => {
          const value = entry[field];
          if (value === undefined && !required) return undefined;
          if (typeof value !== "string" || value === "") {
            this.problems.push({ path: `${at}.${field}`, message: `is required; set it with: pulumi config set --secret --path '${at}.${field}' <value>` });
            return undefined;
          }
          return this.accept(`${at}.${field}`, value, field === "caCrt" ? pemCertificateProblem : () => undefined);
        };
        const username = read("username", true);
        const password = read("password", true);
        const caCrt = read("caCrt", false);
        if (username && password) credentials.set(name, { username, password, ...(caCrt ? { caCrt } : {}) });
      }
      result.set(tenant.name, credentials);
    }
    return result;
  }

  /** Every secret key present must have been stored with --secret. */
  checkStoredAsSecrets(): void {
    for (const key of secretKeys) {
      if (this.input.values[key] !== undefined && !this.input.secretKeys.has(key)) {
        const display = key.startsWith(`${projectName}:`) ? key.slice(projectName.length + 1) : key;
        this.problems.push({
          path: display,
          message: `is stored in plain text; remove it and set it again with: pulumi config set --secret ${display} <value> (and rotate it: it was committed unencrypted)`,
        });
      }
    }
  }

  /** A secret that the chosen mode does not use is a mistake worth reporting, not ignoring. */
  rejectUnused(key: string, display: string, usedBy: string): void {
    if (this.input.values[key] !== undefined) {
      this.problems.push({ path: display, message: `is only used with ${usedBy}; remove it: pulumi config rm ${display}` });
    }
  }

  private accept(display: string, value: string, check: (value: string) => string | undefined): SecretValue | undefined {
    if (value.toLowerCase().startsWith(placeholderSecretPrefix)) {
      if (!this.input.allowPlaceholderSecrets) {
        this.problems.push({
          path: display,
          message: `still holds the committed placeholder; set the real value before pulumi up: pulumi config set --secret ${display.includes(".") ? `--path '${display}'` : display} <value>`,
        });
        return undefined;
      }
      this.placeholders.push(display);
      return new SecretValue(value);
    }
    const problem = check(value);
    if (problem) {
      this.problems.push({ path: display, message: problem });
      return undefined;
    }
    return new SecretValue(value);
  }
}

/** S3 keys are printable ASCII without spaces; Hetzner's are 20 and 40 characters. */
export function objectStorageKeyProblem(key: string): string | undefined {
  return /^[\x21-\x7e]{16,128}$/.test(key)
    ? undefined
    : `is not an Object Storage key (expected 16 to 128 printable characters without spaces, got ${key.length} characters)`;
}

/** A PEM certificate (what containerd and the kubelet credential provider read as `ca.crt`), LF or CRLF lines as Go's PEM decoder takes them. */
export function pemCertificateProblem(text: string): string | undefined {
  return /^-----BEGIN CERTIFICATE-----\r?\n[\s\S]+\n-----END CERTIFICATE-----$/.test(text.trim())
    ? undefined
    : "is not a PEM certificate (expected -----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)";
}

/** hcloud API tokens are 64 alphanumeric characters. */
export function hcloudTokenProblem(token: string): string | undefined {
  return /^[A-Za-z0-9]{64}$/.test(token)
    ? undefined
    : `is not an hcloud API token (expected 64 letters and digits, got ${token.length} characters)`;
}

/**
 * GitHub tokens as GitHub issues them: `ghp_` (classic), `github_pat_` (fine-grained), `ghs_`
 * / `ghu_` / `gho_` (app and OAuth tokens, e.g. a workflow's GITHUB_TOKEN) or 40 hex digits
 * (older classic tokens). Reading public releases needs no scope; cluster-api-operator's
 * docs/README.md asks for `repo`, as clusterctl's do.
 */
export function githubTokenProblem(token: string): string | undefined {
  return /^(gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244}|[0-9a-f]{40})$/.test(token)
    ? undefined
    : `is not a GitHub token (expected ghp_…, github_pat_…, ghs_… or 40 hex digits, got ${token.length} characters)`;
}

function readManagement(
  settings: FleetSettings["management"],
  secrets: SecretReader,
  hasTenants: boolean,
): HetznerManagement | ExistingManagement | undefined {
  if (settings.mode === "hetzner") {
    const hcloudToken = secrets.read(configKeys.hcloudToken, "hcloud:token", hcloudTokenProblem);
    secrets.rejectUnused(configKeys.managementKubeconfig, "managementKubeconfig", "management.mode: existing");
    if (!settings.backups) {
      secrets.rejectUnused(configKeys.etcdS3Credentials, "etcdS3Credentials", "management.backups");
      return hcloudToken && { ...settings, hcloudToken };
    }
    const etcdS3Credentials = secrets.etcdS3Credentials();
    return hcloudToken && etcdS3Credentials && { ...settings, hcloudToken, etcdS3Credentials };
  }
  secrets.rejectUnused(configKeys.hcloudToken, "hcloud:token", "management.mode: hetzner");
  secrets.rejectUnused(configKeys.etcdS3Credentials, "etcdS3Credentials", "management.mode: hetzner and management.backups");
  // Stryker disable next-line StringLiteral: equivalent, read only after a valid kubeconfig has set it
  let apiServerUrl = "";
  const kubeconfig = secrets.read(configKeys.managementKubeconfig, "managementKubeconfig", (text) => {
    const found = kubeconfigServer(text);
    if ("problem" in found) {
      return found.problem;
    }
    apiServerUrl = found.server;
    if (hasTenants && found.credentials !== "inline") {
      // The tenants' kubeconfig and load-balancer drain scripts call the API themselves.
      return (
        "authenticates its current user with something other than inline credentials (exec plugin, auth provider or files); " +
        "tenants need client-certificate-data and client-key-data, or a token, in the kubeconfig itself (for example a ServiceAccount token kubeconfig)"
      );
    }
    return undefined;
  });
  return kubeconfig && { ...settings, kubeconfig, apiServerUrl };
}

function managementProblems(settings: FleetSettings): ConfigProblem[] {
  const management = settings.management;
  if (management.mode !== "hetzner") {
    return [];
  }
  const problems: ConfigProblem[] = [];
  const everywhere = familiesCoveredEntirely(management.adminCidrs.map(mustParseCidr));
  if (everywhere.length > 0 && !management.allowAdminFromAnywhere) {
    problems.push({
      path: "management.adminCidrs",
      message:
        `${formatValue(management.adminCidrs)} opens SSH and the Kubernetes API on the servers to every ${everywhere.map((family) => (family === "ipv4" ? "IPv4" : "IPv6")).join(" and ")} address; ` +
        "allowed: the ranges you administer from (office, VPN, CI egress); for a throwaway dev stack, set management.allowAdminFromAnywhere: true",
    });
  }
  const network = mustParseCidr(management.network.cidr);
  const subnet = mustParseCidr(management.network.subnetCidr);
  if (!isPrivateIpv4(network)) {
    problems.push({
      path: "management.network.cidr",
      message: `${formatValue(network.text)} is not a private range; allowed: inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (hcloud networks are RFC 1918 only)`,
    });
  }
  for (const [role, text] of Object.entries(k3sClusterNetworks)) {
    if (cidrsOverlap(network, mustParseCidr(text))) {
      problems.push({
        path: "management.network.cidr",
        message: `${formatValue(network.text)} overlaps the k3s ${role} network ${text}; pick a range outside ${Object.values(k3sClusterNetworks).join(" and ")}`,
      });
    }
  }
  if (!cidrContains(network, subnet)) {
    problems.push({
      path: "management.network.subnetCidr",
      message: `${formatValue(subnet.text)} is not inside management.network.cidr ${network.text}`,
    });
  } else if (subnet.prefixLength > 28) {
    problems.push({
      path: "management.network.subnetCidr",
      message: `${formatValue(subnet.text)} is too small; allowed: /28 or larger (the servers and the load balancer take host addresses 10–13)`,
    });
  }
  if (management.initServer > management.servers) {
    problems.push({
      path: "management.initServer",
      message: `${management.initServer} is not one of the ${management.servers} server(s); allowed: 1 to ${management.servers}`,
    });
  }
  const objectStorage: readonly string[] = catalog.hcloud.objectStorageLocations;
  if (management.backups && management.backups.location === undefined && !objectStorage.includes(management.location)) {
    problems.push({
      path: "management.backups.location",
      message: `is required: management.location ${management.location} has no Hetzner Object Storage; allowed: ${objectStorage.join(", ")}`,
    });
  }
  return problems;
}

interface NamedCidr {
  readonly path: string;
  readonly cidr: Cidr;
}

function tenantProblems(settings: Pick<FleetSettings, "tenants" | "gitops">, options: { gitopsFromManagementStack?: boolean } = {}): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const firstTenantWith = new Map<string, number>();
  const firstTenantInNamespace = new Map<string, number>();
  const rangesByRoutingDomain = new Map<string, NamedCidr[]>();
  const reserved = reservedNamespaces();
  // Tenant ranges are not compared with the management cluster's: each tenant has its own
  // Hetzner project and network, and the management cluster reaches a tenant only through
  // the public address of its API load balancer (CAPH's control-plane endpoint), so no
  // route joins them. Tenants that are routed together say so with a shared routingDomain.

  settings.tenants.forEach((tenant, index) => {
    const at = `tenants[${index}]`;
    const previous = firstTenantWith.get(tenant.name);
    if (previous !== undefined) {
      problems.push({ path: `${at}.name`, message: `${formatValue(tenant.name)} is already used by tenants[${previous}]; tenant names must be unique` });
    } else {
      firstTenantWith.set(tenant.name, index);
    }
    const labelProblem = tenantNameLabelProblem(tenant.name);
    if (labelProblem) problems.push({ path: `${at}.name`, message: labelProblem });
    const namespace = tenant.namespace ?? tenant.name;
    const sharing = firstTenantInNamespace.get(namespace);
    if (sharing !== undefined) {
      problems.push({
        path: `${at}.namespace`,
        message: `${formatValue(namespace)} is already the namespace of tenants[${sharing}]; each tenant needs its own namespace (its "hcloud" Secret is per namespace)`,
      });
    } else {
      firstTenantInNamespace.set(namespace, index);
    }
    const owner = reserved.get(namespace);
    if (owner !== undefined) {
      problems.push({
        path: tenant.namespace === undefined ? `${at}.name` : `${at}.namespace`,
        message:
          `${formatValue(namespace)} is the namespace of ${owner} on the management cluster; the tenant would take it over and deleting the tenant would delete it; ` +
          `allowed: any other DNS label${tenant.namespace === undefined ? ` (set ${at}.namespace, which defaults to the name)` : ""}`,
      });
    }
    problems.push(...regionProblems(tenant, at), ...workerProblems(tenant, at));
    problems.push(...carenSettingProblems(tenant, at));

    const ranges: NamedCidr[] = (["nodesCidr", "podsCidr", "servicesCidr"] as const).map((field) => ({
      path: `${at}.network.${field}`,
      cidr: mustParseCidr(tenant.network[field]),
    }));
    const [nodes] = ranges;
    if (nodes && !isPrivateIpv4(nodes.cidr)) {
      problems.push({
        path: nodes.path,
        message: `${formatValue(nodes.cidr.text)} is not a private range; allowed: inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (hcloud networks are RFC 1918 only)`,
      });
    }
    problems.push(...overlapProblems(ranges, ranges, "of the same tenant"), ...rangeSizeProblems(tenant, at));
    const subnet = tenant.network.nodesSubnetCidr;
    if (nodes && subnet !== undefined && !cidrContains(nodes.cidr, mustParseCidr(subnet))) {
      problems.push({
        path: `${at}.network.nodesSubnetCidr`,
        message: `${formatValue(subnet)} is not inside ${at}.network.nodesCidr ${nodes.cidr.text}`,
      });
    }
    if (tenant.apps && !settings.gitops && !options.gitopsFromManagementStack) {
      problems.push({
        path: `${at}.apps`,
        message: "needs the top-level gitops setting (Flux syncs the apps from the fleet repository); set gitops.url or remove apps",
      });
    }
    const domain = tenant.network.routingDomain;
    if (domain) {
      const earlier = rangesByRoutingDomain.get(domain) ?? [];
      problems.push(...overlapProblems(ranges, earlier, `in routing domain "${domain}"`));
      rangesByRoutingDomain.set(domain, [...earlier, ...ranges]);
    }
  });
  return problems;
}

/** Problems for ranges in `candidates` overlapping an earlier range in `existing` (skipping self-pairs). */
function overlapProblems(candidates: readonly NamedCidr[], existing: readonly NamedCidr[], where: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  candidates.forEach((candidate, i) => {
    const clash = existing.find((other, j) => (existing !== candidates || j < i) && cidrsOverlap(candidate.cidr, other.cidr));
    if (clash) {
      problems.push({
        path: candidate.path,
        message: `${formatValue(candidate.cidr.text)} overlaps ${clash.path} ${clash.cidr.text} ${where}; pick a disjoint range`,
      });
    }
  });
  return problems;
}

/**
 * Combinations of CAREN settings that break:
 * - kube-proxy replacement with the ClusterResourceSet strategy: CAREN's Cilium CRS manifest is
 *   static with `kube-proxy-replacement: false` (charts/cluster-api-runtime-extensions-nutanix/
 *   templates/cni/cilium/manifests/cilium-configmap.yaml at v0.50.0), so its hook waits forever
 *   for a kube-proxy replacement that never comes;
 * - Cilium values with the ClusterResourceSet strategy: CAREN reads them for HelmAddon only
 *   (api/v1alpha1/addon_types.go, "when HelmAddon is the strategy");
 * - `cni.kubeProxyReplacement: true` next to another `kubeProxy.mode`;
 * - Cilium values without `kubeProxyReplacement: true` while kube-proxy is disabled (CAREN's webhook
 *   denies the Cluster);
 * - a proxy with neither http nor https.
 */
function carenSettingProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const crs = tenant.cni.strategy === "ClusterResourceSet";
  if (tenant.cni.kubeProxyReplacement && tenant.kubeProxy && tenant.kubeProxy.mode !== "disabled") {
    problems.push({
      path: `${at}.kubeProxy.mode`,
      message: `${formatValue(tenant.kubeProxy.mode)} contradicts ${at}.cni.kubeProxyReplacement: true (which means disabled); allowed: remove one of them, or set disabled`,
    });
  } else if (crs && kubeProxyModeOf(tenant) === "disabled") {
    problems.push({
      path: `${at}.cni.strategy`,
      message:
        `ClusterResourceSet cannot replace kube-proxy: CAREN's Cilium manifest for it is static with kube-proxy-replacement: false, and its hook would wait forever; ` +
        "allowed: strategy HelmAddon with kube-proxy replacement, or keep kube-proxy",
    });
  }
  if (crs && tenant.cni.values) {
    problems.push({ path: `${at}.cni.values`, message: "is used by CAREN with the HelmAddon strategy only; allowed: strategy HelmAddon, or remove the values" });
  } else if (tenant.cni.values && kubeProxyModeOf(tenant) === "disabled" && tenant.cni.values.kubeProxyReplacement !== true) {
    // CAREN's Cluster webhook denies this combination (pkg/webhook/cluster/cilium_configuration_validator.go
    // at v0.50.0): without kube-proxy, Cilium must replace it.
    problems.push({
      path: `${at}.cni.values.kubeProxyReplacement`,
      message: `${formatValue(tenant.cni.values.kubeProxyReplacement)} leaves the cluster without kube-proxy and without its replacement (kube-proxy mode disabled); allowed: true`,
    });
  }
  if (tenant.proxy && !tenant.proxy.http && !tenant.proxy.https) {
    problems.push({ path: `${at}.proxy`, message: "sets no proxy; allowed: http and/or https (additionalNoProxy only adds exceptions), or remove proxy" });
  }
  return problems;
}

function regionProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const [first] = tenant.regions;
  tenant.regions.forEach((region, index) => {
    if (tenant.regions.indexOf(region) !== index) {
      problems.push({ path: `${at}.regions[${index}]`, message: `${formatValue(region)} is listed twice` });
    } else if (first && networkZoneOf[region] !== networkZoneOf[first]) {
      problems.push({
        path: `${at}.regions[${index}]`,
        message: `${formatValue(region)} is in network zone ${networkZoneOf[region]}, but ${first} is in ${networkZoneOf[first]}; a tenant's private network spans one zone`,
      });
    }
  });
  return problems;
}

function workerProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  tenant.workers.forEach((pool, index) => {
    if (seen.has(pool.name)) {
      problems.push({ path: `${at}.workers[${index}].name`, message: `${formatValue(pool.name)} is already a worker pool of this tenant; pool names must be unique` });
    }
    seen.add(pool.name);
    problems.push(...poolSizeProblems(pool, `${at}.workers[${index}]`));
    if (!tenant.regions.includes(pool.failureDomain)) {
      problems.push({
        path: `${at}.workers[${index}].failureDomain`,
        message: `${formatValue(pool.failureDomain)} is not one of the tenant's regions; allowed: ${tenant.regions.join(", ")}`,
      });
    }
  });
  return problems;
}

/**
 * A pool is sized either by `replicas` or by the autoscaler (`autoscaling`), never both: CAPI's
 * topology controller would reset every scale the autoscaler makes (cluster-autoscaler.ts). In
 * a placement group the most servers it can have, plus one rollout surge, fit Hetzner's limit.
 */
function poolSizeProblems(pool: WorkerPoolSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { autoscaling, replicas } = pool;
  if (autoscaling && replicas !== undefined) {
    problems.push({
      path: `${at}.replicas`,
      message: `${replicas} replicas on an autoscaled pool would undo every scale the autoscaler makes (CAPI's topology controller owns replicas when set); allowed: either replicas or autoscaling, so remove replicas`,
    });
  } else if (!autoscaling && replicas === undefined) {
    problems.push({ path: `${at}.replicas`, message: "is missing; allowed: replicas (0 to 100), or autoscaling: { minSize, maxSize } instead" });
  }
  if (autoscaling && autoscaling.minSize > autoscaling.maxSize) {
    problems.push({
      path: `${at}.autoscaling.minSize`,
      message: `${autoscaling.minSize} is above maxSize ${autoscaling.maxSize}; allowed: 0 to ${autoscaling.maxSize}`,
    });
  }
  const fromZero = scaleFromZeroProblem(pool);
  if (fromZero) problems.push({ path: `${at}.autoscaling.minSize`, message: fromZero });
  const largest = poolMaxReplicas(pool);
  if (pool.placementGroup && largest + 1 > placementGroupServerLimit) {
    const field = autoscaling ? "autoscaling.maxSize" : "replicas";
    problems.push({
      path: `${at}.${field}`,
      message:
        `${largest} ${autoscaling ? "as maxSize does" : "replicas do"} not fit a placement group: Hetzner allows ${placementGroupServerLimit} servers per group and a rolling update adds one; ` +
        `allowed: at most ${placementGroupServerLimit - 1}, or set ${at}.placementGroup: false, or split the pool`,
    });
  }
  return problems;
}

/**
 * kubeadm's limits on the ranges (kubernetes/kubernetes@v1.35.4: cmd/kubeadm/app/constants/constants.go,
 * cmd/kubeadm/app/apis/kubeadm/validation/validation.go `ValidateNetworking`; kube-apiserver applies
 * the same service-range limit in cmd/kube-apiserver/app/options/validation.go).
 */
const kubeadmLimits = {
  /** `MaximumBitsForServiceSubnet`: for IPv4 the service range must be /12 or smaller. */
  maximumServiceHostBits: 20,
  /** `MinimumAddressesInServiceSubnet`: the DNS Service takes the tenth address. */
  minimumServiceAddresses: 10,
  /** kube-controller-manager's `--node-cidr-mask-size-ipv4` default, as kubeadm reads it (`getClusterNodeMask`). */
  nodeMask: 24,
  /** `PodSubnetNodeMaskMaxDiff`. */
  podSubnetNodeMaskMaxDiff: 16,
} as const;

/**
 * Servers a tenant can have at once: every control-plane and worker replica, plus the one
 * surge server each KubeadmControlPlane and MachineDeployment rollout adds by default
 * (CAPI: `maxSurge` 1).
 */
function peakServerCount(tenant: TenantSettings): number {
  // An autoscaled pool counts at its maxSize: the autoscaler may grow it that far.
  const workers = tenant.workers.map(poolMaxReplicas).reduce((sum, replicas) => sum + replicas + (replicas > 0 ? 1 : 0), 0);
  return tenant.controlPlane.replicas + 1 + workers;
}

function rangeSizeProblems(tenant: TenantSettings, at: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const limits = kubeadmLimits;
  const services = mustParseCidr(tenant.network.servicesCidr);
  const serviceHostBits = 32 - services.prefixLength;
  // kubeadm refuses a range of fewer addresses than its minimum (ValidateIPNetFromString), so the smallest is a /28.
  const smallestServicePrefix = 32 - Math.ceil(Math.log2(limits.minimumServiceAddresses));
  if (serviceHostBits > limits.maximumServiceHostBits) {
    problems.push({
      path: `${at}.network.servicesCidr`,
      message: `${formatValue(services.text)} is larger than kubeadm and kube-apiserver accept for IPv4 services; allowed: /${32 - limits.maximumServiceHostBits} or smaller (up to /${smallestServicePrefix})`,
    });
  } else if (services.prefixLength > smallestServicePrefix) {
    problems.push({
      path: `${at}.network.servicesCidr`,
      message: `${formatValue(services.text)} is too small: kubeadm needs at least ${limits.minimumServiceAddresses} addresses (the DNS Service takes the tenth); allowed: /${smallestServicePrefix} or larger`,
    });
  }
  const servers = peakServerCount(tenant);
  const pods = mustParseCidr(tenant.network.podsCidr);
  // Read only when the pods range is at least one node's range (the first branch below takes the rest).
  const nodeRanges = 2 ** (limits.nodeMask - pods.prefixLength);
  if (pods.prefixLength > limits.nodeMask) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message: `${formatValue(pods.text)} is smaller than one node's pod range (/${limits.nodeMask}, kube-controller-manager's node mask, which Cilium's kubernetes IPAM uses); allowed: /${limits.nodeMask} or larger`,
    });
  } else if (limits.nodeMask - pods.prefixLength > limits.podSubnetNodeMaskMaxDiff) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message: `${formatValue(pods.text)} is more than ${limits.podSubnetNodeMaskMaxDiff} bits larger than the node mask /${limits.nodeMask}, which kubeadm refuses; allowed: /${limits.nodeMask - limits.podSubnetNodeMaskMaxDiff} or smaller`,
    });
  } else if (nodeRanges < servers) {
    problems.push({
      path: `${at}.network.podsCidr`,
      message:
        `${formatValue(pods.text)} holds ${nodeRanges} node pod ranges of /${limits.nodeMask}, but the tenant can have ${servers} servers at once (replicas plus one rollout surge per pool and control plane); ` +
        `a node without a range gets no pod network; allowed: /${limits.nodeMask - Math.ceil(Math.log2(servers))} or larger`,
    });
  }
  const nodesSubnet = mustParseCidr(tenant.network.nodesSubnetCidr ?? firstSubnet(mustParseCidr(tenant.network.nodesCidr), 24));
  // hcloud keeps the network address, the gateway and the broadcast address of a subnet.
  const usable = 2 ** (32 - nodesSubnet.prefixLength) - 3;
  const needed = servers + 1;
  if (usable < needed) {
    problems.push({
      path: `${at}.network.${tenant.network.nodesSubnetCidr === undefined ? "nodesCidr" : "nodesSubnetCidr"}`,
      message:
        `${formatValue(nodesSubnet.text)} has ${usable} usable addresses, but the tenant needs ${needed} (${servers} servers at once, counting rollout surges, and the API load balancer), plus one per LoadBalancer Service; ` +
        `allowed: /${32 - Math.ceil(Math.log2(needed + 3))} or larger`,
    });
  }
  return problems;
}

/**
 * Server types and images can only be confirmed by Hetzner's API; names outside the catalog's
 * lists are warnings (a new server type, a snapshot or a CAPH image label can be fine). The two
 * checks push into `warnings`.
 */
function hcloudNameChecks(warnings: ConfigProblem[]) {
  const serverTypes: readonly string[] = catalog.hcloud.serverTypes;
  const images: readonly string[] = catalog.hcloud.systemImages;
  return {
    serverType: (path: string, value: string) => {
      if (!serverTypes.includes(value)) {
        warnings.push({
          path,
          message: `${formatValue(value)} is not an hcloud server type this release knows (catalog.ts hcloud.serverTypes); Hetzner's API decides: check \`hcloud server-type list\` and that it is offered in the location`,
        });
      }
    },
    image: (path: string, value: string) => {
      if (!images.includes(value)) {
        warnings.push({
          path,
          message: `${formatValue(value)} is not a system image this release knows (${images.join(", ")}); fine if it names your own snapshot or image label, otherwise servers will not be created`,
        });
      }
    },
  };
}

/** {@link hcloudNameChecks} for the management servers and every tenant. */
function hcloudNameWarnings(settings: FleetSettings): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  const { serverType, image } = hcloudNameChecks(warnings);
  const management = settings.management;
  if (management.mode === "hetzner") {
    serverType("management.serverType", management.serverType);
    image("management.image", management.image);
  }
  return [...warnings, ...tenantNameWarnings(settings.tenants)];
}

/** {@link hcloudNameChecks} for the tenants' server types and images. */
function tenantNameWarnings(tenants: FleetSettings["tenants"]): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  const { serverType, image } = hcloudNameChecks(warnings);
  tenants.forEach((tenant, index) => {
    const at = `tenants[${index}]`;
    serverType(`${at}.controlPlane.machineType`, tenant.controlPlane.machineType);
    image(`${at}.image`, tenant.image);
    tenant.workers.forEach((pool, poolIndex) => {
      serverType(`${at}.workers[${poolIndex}].machineType`, pool.machineType);
      if (pool.image !== undefined) {
        image(`${at}.workers[${poolIndex}].image`, pool.image);
      }
    });
  });
  return warnings;
}
