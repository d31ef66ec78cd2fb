// The stack file's JSON Schema (stacks/stack-file.schema.json) and the config key table of
// docs/configuration.md, both generated from the zod schemas the program validates with, so the
// editor's checks, the reference and the validation cannot drift apart. `npm run config-schema`
// writes them (write.ts); tests/repo/config-schema.test.ts fails when the committed files differ.
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { fleetConfigSchema } from "../../infra/model/config/fleet-config";
import { stackNamePattern } from "../../infra/model/config/shards";
import { configKeys, projectName, secretKeys } from "../../infra/model/config/stack-config";

export type JsonSchema = Record<string, unknown>;
export type ConfigKeyName = keyof typeof configKeys;

export const schemaPath = "stacks/stack-file.schema.json";
export const docsPath = "docs/configuration.md";
export const beginMarker = "<!-- config-keys:begin (generated from the stack-file schema; do not edit) -->";
export const endMarker = "<!-- config-keys:end -->";
export const regenerateHint = "run `npm run config-schema` and commit the result";

/** A value Pulumi encrypted: the stack file holds `{ secure: <ciphertext> }` in its place. */
const secureValue = z.strictObject({ secure: z.string().min(1) });

/** A secret written whole (`pulumi config set --secret <key>`) or, for mappings, leaf by leaf (`--path`). */
function secret<Shape extends z.ZodType>(description: string, byPath?: Shape) {
  return (byPath ? z.union([secureValue, byPath]) : secureValue).describe(description);
}

/** A mapping whose keys the table shows as `<title>`. */
function mapping<Value extends z.ZodType>(title: string, value: Value) {
  return z.record(z.string().meta({ title }), value);
}

/**
 * The keys validate-fleet-config.ts reads by hand (not through fleetConfigSchema), as the stack
 * file holds them; their checks there (readShards, readTenantsPerStack, parseShardConfig,
 * SecretReader) decide, this only describes what they accept.
 */
const handReadKeys = {
  shards: z
    .array(z.string().regex(stackNamePattern))
    .describe("Management stack only: the shard stacks whose tenants share its management cluster (stack, project/stack or org/project/stack); it then exports fleetPlatform and fleetTenants for them."),
  managementStack: z
    .string()
    .regex(stackNamePattern)
    .describe("Makes the stack a shard: only tenants (and their secrets), on the management cluster and platform of the named stack; management, gitops, shards and the platform's secrets are refused there."),
  tenantsPerStack: z
    .int()
    .min(1)
    .describe("The most tenants this stack may hold, for a CI runner with more memory than the documented limits assume; without it, a warning above the recommended limit and a refusal above the maximum."),
  tenantHcloudTokens: secret(
    "Secret: the hcloud API token of each tenant's own Hetzner project, by tenant name; one per tenant.",
    mapping("tenant", secureValue.describe("Secret: the hcloud API token of the tenant's Hetzner project.")),
  ),
  managementKubeconfig: secret("Secret: the kubeconfig of the management cluster in mode existing."),
  hcloudToken: secret("Secret: the hcloud API token of the management cluster's Hetzner project (the hcloud provider's own key); needed in mode hetzner."),
  githubToken: secret("Secret, optional (recommended): a GitHub token with which cluster-api-operator downloads the providers' releases; without it they share GitHub's unauthenticated rate limit."),
  tenantRegistryCredentials: secret(
    "Secret: registry credentials by tenant and by the name a tenant's imageRegistries[].credentials or globalImageRegistryMirror.credentials uses; an entry no registry uses, or a missing one, is an error.",
    mapping(
      "tenant",
      mapping(
        "name",
        z
          .union([
          secureValue,
          z.strictObject({
            username: secureValue.describe("Secret: the registry user."),
            password: secureValue.describe("Secret: the registry password."),
            caCrt: secureValue.optional().describe("Secret: PEM CA certificate of a registry with a private CA."),
          }),
          ])
          .describe("Secret: the credentials a tenant's registries name this way (username, password, optional caCrt)."),
      ).describe("The tenant's registry credentials, by the name its registries use."),
    ),
  ),
  etcdS3Credentials: secret(
    "Secret: an Object Storage key pair of the management cluster's Hetzner project, for the etcd snapshots (management.backups).",
    z.strictObject({
      accessKey: secureValue.describe("Secret: the Object Storage access key."),
      secretKey: secureValue.describe("Secret: the Object Storage secret key."),
    }),
  ),
};

/** One schema per config key; typed so that a key added to configKeys does not compile until it has one here. */
const keySchemas: Record<ConfigKeyName, z.ZodType> = { ...fleetConfigSchema.shape, ...handReadKeys };

function toJsonSchema(schema: z.ZodType): JsonSchema {
  // zod@4.6.7 v4/core/to-json-schema.d.ts: io "input" leaves fields with defaults optional (users
  // omit them); draft-07 is what editors' YAML language servers and ajv's default export read.
  const json = z.toJSONSchema(schema, { target: "draft-07", io: "input", unrepresentable: "throw" }) as JsonSchema;
  delete json.$schema;
  if ("definitions" in json || "$defs" in json) {
    throw new Error("config-schema: zod extracted shared definitions; the stack-file schema inlines every key's schema");
  }
  return json;
}

/** Whether the schema is exactly a `{ secure: … }` value. */
export function isSecure(schema: JsonSchema): boolean {
  const properties = schema.properties as Record<string, unknown> | undefined;
  return schema.type === "object" && schema.additionalProperties === false && properties !== undefined && Object.keys(properties).join() === "secure";
}

/** The config key as the stack file spells it, and its project-less form (Pulumi and stackConfigFromFile add the project). */
function spellings(fullKey: string): string[] {
  const bare = fullKey.startsWith(`${projectName}:`) ? fullKey.slice(projectName.length + 1) : undefined;
  return bare === undefined ? [fullKey] : [fullKey, bare];
}

/** The JSON Schema of `stacks/Pulumi.<stack>.yaml`. */
export function stackFileSchema(): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  const properties: Record<string, JsonSchema> = {};
  for (const [name, fullKey] of Object.entries(configKeys) as [ConfigKeyName, string][]) {
    const json = toJsonSchema(keySchemas[name]);
    // The secret keys come from the validation's own list; a schema that disagrees is a bug here.
    const takesSecure = keySchemas[name].safeParse({ secure: "v1:ciphertext" }).success;
    if (takesSecure !== secretKeys.includes(fullKey)) {
      throw new Error(`config-schema: ${fullKey} is ${takesSecure ? "" : "not "}written as a secure value here, but stack-config.ts secretKeys says otherwise`);
    }
    definitions[name] = json;
    for (const spelling of spellings(fullKey)) {
      properties[spelling] = { $ref: `#/definitions/${name}` };
    }
  }
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "capi-fleet stack file (stacks/Pulumi.<stack>.yaml)",
    description: "Generated by `npm run config-schema` from infra/model/config/fleet-config.ts and stack-config.ts; do not edit.",
    type: "object",
    // pulumi/pulumi sdk/go/common/workspace/project.go, ProjectStack: the top-level keys Pulumi reads and writes.
    properties: {
      secretsprovider: { type: "string", description: "The stack's secrets provider (pulumi stack change-secrets-provider); absent: the backend's default." },
      encryptedkey: { type: "string", description: "The data key for secrets, encrypted by a cloud secrets provider." },
      encryptionsalt: { type: "string", description: "The passphrase secrets provider's salt." },
      environment: { type: ["array", "object"], description: "Pulumi ESC: the names of the environments the stack imports, or an inline definition." },
      config: {
        type: "object",
        description: `The stack config. ${projectName} keys are written ${projectName}:<key> or, equally, <key>; an unknown ${projectName} key is an error.`,
        properties,
        // Other namespaces (providers, pulumi:tags) are Pulumi's business; the program ignores them.
        patternProperties: { [`^(?!${projectName}:)[^:]+:`]: { description: "Config of another namespace (a provider's, or Pulumi's own)." } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
    definitions,
  };
}

/** The schema file's text: stable key order (the schemas' own), two-space indent, trailing newline. */
export function stackFileSchemaText(): string {
  return `${JSON.stringify(stackFileSchema(), null, 2)}\n`;
}

interface Row {
  key: string;
  type: string;
  default: string;
  required: string;
  description: string;
}

function code(value: unknown): string {
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** "1–16", "at least 1", "at most 32"; zod writes JavaScript's safe-integer limits for z.int(), which bound nothing here. */
function range(low: unknown, high: unknown): string {
  const bound = (value: unknown) => (typeof value === "number" && Math.abs(value) !== Number.MAX_SAFE_INTEGER ? value : undefined);
  const [min, max] = [bound(low), bound(high)];
  if (min !== undefined && max !== undefined) return `${min}–${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max !== undefined ? `at most ${max}` : "";
}

/** The field whose constant tells the alternatives apart (management's `mode`), if there is one. */
function discriminator(options: JsonSchema[]): string | undefined {
  const fieldsOf = (option: JsonSchema) => Object.entries((option.properties as Record<string, JsonSchema> | undefined) ?? {});
  return fieldsOf(options[0] ?? {}).find(([field]) => options.every((option) => ((option.properties as Record<string, JsonSchema> | undefined)?.[field])?.const !== undefined))?.[0];
}

function alternatives(schema: JsonSchema): JsonSchema[] | undefined {
  return (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
}

function recordValue(schema: JsonSchema): JsonSchema | undefined {
  const value = schema.additionalProperties;
  return schema.type === "object" && typeof value === "object" && value !== null && schema.properties === undefined ? (value as JsonSchema) : undefined;
}

/** Objects and mappings of them get rows of their own for their fields. */
function hasFields(schema: JsonSchema): boolean {
  if (isSecure(schema)) return false;
  const value = recordValue(schema);
  if (value) return hasFields(value);
  return schema.properties !== undefined || (alternatives(schema) ?? []).some(hasFields);
}

function typeOf(schema: JsonSchema): string {
  if (isSecure(schema)) return "secret";
  const options = alternatives(schema);
  if (options) {
    const field = discriminator(options);
    if (field === undefined) return options.map(typeOf).join(", or ");
    return `object by ${field}: ${options.map((option) => code((option.properties as Record<string, JsonSchema>)[field]?.const)).join(", ")}`;
  }
  if (schema.const !== undefined) return code(schema.const);
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map(code).join(", ");
  switch (schema.type) {
    case "integer":
    case "number":
      return [schema.type, range(schema.minimum, schema.maximum)].filter(Boolean).join(", ");
    case "array": {
      const count = range(schema.minItems, schema.maxItems);
      return `list of ${typeOf(schema.items as JsonSchema)}${count ? ` (${count})` : ""}`;
    }
    case "object": {
      const value = recordValue(schema);
      if (!value) return "object";
      const title = ((schema.propertyNames as JsonSchema | undefined)?.title as string | undefined) ?? "key";
      return Object.keys(value).length === 0 ? "mapping" : `mapping of ${title} to ${hasFields(value) ? "object" : typeOf(value)}`;
    }
    case undefined:
      return "any";
    default:
      return String(schema.type);
  }
}

/** Prose in a table cell: `|` would end the cell, and `<tenant>` would read as an HTML tag. */
function escapeCell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\n", " ");
}

/** Rows for a field and everything under it. */
function rowsOf(schema: JsonSchema, key: string, required: string): Row[] {
  const rows: Row[] = [
    {
      key,
      type: typeOf(schema),
      default: schema.default === undefined ? "" : code(schema.default),
      required,
      description: typeof schema.description === "string" ? schema.description : "",
    },
  ];
  return [...rows, ...childRows(schema, key, "")];
}

function childRows(schema: JsonSchema, key: string, when: string): Row[] {
  if (isSecure(schema)) return [];
  const options = alternatives(schema);
  if (options) {
    return options.flatMap((option) => {
      // A discriminated union (management by mode): its fields say for which alternative.
      const field = discriminator(options);
      const value = field === undefined ? undefined : (option.properties as Record<string, JsonSchema>)[field]?.const;
      return childRows(option, key, field === undefined ? when : `${field} ${code(value)}`);
    });
  }
  if (schema.type === "array") return childRows(schema.items as JsonSchema, `${key}[]`, when);
  const value = recordValue(schema);
  if (value) {
    const title = ((schema.propertyNames as JsonSchema | undefined)?.title as string | undefined) ?? "key";
    // An entry of a mapping is never required as such; what it holds says what it needs.
    return hasFields(value) || isSecure(value) ? rowsOf(value, `${key}.<${title}>`, "") : [];
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return [];
  const requiredFields = (schema.required as string[] | undefined) ?? [];
  return Object.entries(properties).flatMap(([field, fieldSchema]) => {
    const isRequired = requiredFields.includes(field) ? "yes" : "no";
    return rowsOf(fieldSchema, `${key}.${field}`, when ? `${when}: ${isRequired}` : isRequired);
  });
}

/** The key table: every config key, then its fields (`tenants[].workers[].replicas`). */
export function keyTable(schema: JsonSchema = stackFileSchema()): string {
  const definitions = schema.definitions as Record<ConfigKeyName, JsonSchema>;
  const fleetRequired = (toJsonSchema(fleetConfigSchema).required as string[] | undefined) ?? [];
  const rows = (Object.entries(configKeys) as [ConfigKeyName, string][]).flatMap(([name, fullKey]) => {
    const [display = fullKey] = spellings(fullKey).slice(-1);
    return rowsOf(definitions[name], display, fleetRequired.includes(name) ? "yes" : "no");
  });
  const lines = [
    "| Key | Type / allowed values | Default | Required | Description |",
    "| --- | --- | --- | --- | --- |",
    // Keys, types and defaults are code spans, where Markdown shows `<` as it is.
    ...rows.map((row) => `| ${[code(row.key), row.type, row.default, row.required].map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} | ${escapeCell(row.description)} |`),
  ];
  return `${lines.join("\n")}\n`;
}

/** Puts the table between the markers; fails when they are missing, repeated or out of order. */
export function spliceKeyTable(document: string, table: string, where = docsPath): string {
  const lines = document.split("\n");
  const begin = lines.indexOf(beginMarker);
  const end = lines.indexOf(endMarker);
  if (begin === -1 || end === -1 || end < begin || lines.lastIndexOf(beginMarker) !== begin || lines.lastIndexOf(endMarker) !== end) {
    throw new Error(`${where} must contain, once each and in this order, the lines\n  ${beginMarker}\n  ${endMarker}\n(the generated key table goes between them)`);
  }
  return [...lines.slice(0, begin + 1), "", table, ...lines.slice(end)].join("\n");
}

/** What differs between the committed files and what the schemas generate now (empty: in step). */
export function driftProblems(repoRoot: string, generated = { schema: stackFileSchemaText(), table: keyTable() }): string[] {
  const problems: string[] = [];
  if (readFileSync(path.join(repoRoot, schemaPath), "utf8") !== generated.schema) {
    problems.push(`${schemaPath} differs from what the zod schemas generate; ${regenerateHint}`);
  }
  const document = readFileSync(path.join(repoRoot, docsPath), "utf8");
  if (spliceKeyTable(document, generated.table) !== document) {
    problems.push(`the key table in ${docsPath} differs from what the zod schemas generate; ${regenerateHint}`);
  }
  return problems;
}
