import type { z } from "zod";
import { readManagement, managementProblems, type ExistingManagement, type HetznerManagement } from "../management/validate-management";
import { tenantProblems, type Tenant } from "../tenant/validate-tenants";
import { allowedKeysFromMessage, fleetConfigSchema, type GitOpsSettings, type MirrorSettings, type TenantSettings } from "../config/fleet-config";
import { hcloudNameWarnings, tenantNameWarnings } from "../config/hcloud-names";
import type { SecretValue } from "../config/secret";
import { githubTokenProblem, SecretReader, type RegistryCredentials } from "../config/secret-reader";
import { stackNamePattern, tenantCountVerdict } from "../config/shards";
import { configKeys, decode, FleetConfigError, keyPath, projectName, type ConfigProblem, type StackConfigInput } from "../config/stack-config";
import { closestMatch, formatValue } from "../config/text";

/** The validated fleet config. */
export interface FleetConfig {
  readonly stack: string;
  readonly management: HetznerManagement | ExistingManagement;
  readonly tenants: readonly Tenant[];
  readonly gitops: GitOpsSettings | undefined;
  /** Where charts and providers come from instead of their public sources (`mirrors`); empty: the public ones. */
  readonly mirrors: MirrorSettings;
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
      { path: keyPath(configKeys.managementStack), message: "makes this a shard stack, which parseShardConfig reads; parseFleetConfig reads a stack with a management cluster" },
    ]);
  }
  const problems: ConfigProblem[] = [...unknownKeyProblems(input.values)];
  const raw = {
    management: decode(input.values[configKeys.management]),
    tenants: decode(input.values[configKeys.tenants]),
    gitops: decode(input.values[configKeys.gitops]),
    mirrors: decode(input.values[configKeys.mirrors]),
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
  const tenants = readTenantSecrets(settings.tenants, secrets);
  const githubToken = secrets.optional(configKeys.githubToken, "githubToken", githubTokenProblem);
  if (githubToken && settings.mirrors?.providers) problems.push(githubTokenWithProvidersMirror);
  secrets.checkStoredAsSecrets();
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
    mirrors: settings.mirrors ?? {},
    shards,
    githubToken,
    placeholderSecrets: secrets.placeholders,
    warnings: [...hcloudNameWarnings(settings), ...(count.level === "warning" ? [{ path: "tenants", message: count.message }] : [])],
  };
}

/**
 * A GitHub token only fetches providers from GitHub, but the cluster-api-operator checks any token in
 * a provider's config Secret against GitHub's API before it installs from anywhere, the mirror
 * included, and refuses the provider when that call fails ("Invalid github token";
 * sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/preflight_checks.go). Behind a mirror,
 * where GitHub is often out of reach, that stops every install; the real `up` test found it.
 */
const githubTokenWithProvidersMirror: ConfigProblem = {
  path: "githubToken",
  message:
    "is set together with mirrors.providers; the operator fetches the providers from the mirror, yet still checks the token against GitHub's API before each install and refuses the provider when GitHub cannot be reached. Remove githubToken (pulumi config rm capi-fleet:githubToken), or unset mirrors.providers",
};

/**
 * The tenants with their secrets (hcloud token, registry credentials) and namespace; a tenant
 * whose token is missing or malformed is left out, with its problem recorded by `secrets`.
 */
function readTenantSecrets(settings: readonly TenantSettings[], secrets: SecretReader): Tenant[] {
  const tokens = secrets.tenantTokens(settings.map((tenant) => tenant.name));
  const registryCredentials = secrets.registryCredentials(settings);
  return settings.flatMap((tenant) => {
    const hcloudToken = tokens.get(tenant.name);
    return hcloudToken
      ? [{ ...tenant, namespace: tenant.namespace ?? tenant.name, hcloudToken, registryCredentials: registryCredentials.get(tenant.name) ?? new Map<string, RegistryCredentials>() }]
      : [];
  });
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
    [configKeys.mirrors]: "the management stack's (its tenants read it from there)",
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
    problems.push({ path: keyPath(configKeys.managementStack), message: `${formatValue(managementStack)} is not a stack name; allowed: stack, project/stack or organization/project/stack` });
  } else if (managementStack.split("/").pop() === input.stack && !managementStack.includes("/")) {
    problems.push({ path: keyPath(configKeys.managementStack), message: `${formatValue(managementStack)} names this stack itself; name the stack that holds the management cluster` });
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
  const tenants = readTenantSecrets(settings.tenants, secrets);
  secrets.checkStoredAsSecrets();
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
