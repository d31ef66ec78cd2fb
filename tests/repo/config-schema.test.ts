import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fleetConfigSchema } from "../../infra/model/config/fleet-config";
import { stackConfigFromFile } from "../../infra/model/config/stack-file";
import { FleetConfigError } from "../../infra/model/config/stack-config";
import { parseFleetConfig } from "../../infra/model/stack/validate-fleet-config";
import {
  beginMarker,
  docsPath,
  driftProblems,
  endMarker,
  isSecure,
  keyTable,
  schemaPath,
  spliceKeyTable,
  stackFileSchema,
  stackFileSchemaText,
  type JsonSchema,
} from "../../tools/config-schema/stack-file-schema";
import { repoRoot } from "../support/stack-files";

type StackFile = { config: Record<string, unknown> } & Record<string, unknown>;

const stackNames = readdirSync(path.join(repoRoot, "stacks"))
  .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
  .filter((stack): stack is string => stack !== undefined)
  .sort();

function stackFile(stack: string): StackFile {
  return parse(readFileSync(path.join(repoRoot, "stacks", `Pulumi.${stack}.yaml`), "utf8")) as StackFile;
}

// ajv@8.20.0: the default export reads draft-07, the generator's target.
const validateStackFile = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(
  JSON.parse(readFileSync(path.join(repoRoot, schemaPath), "utf8")) as JsonSchema,
);

/** The JSON Schema's errors for a stack file, as "path message" lines. */
function schemaErrors(document: unknown): string[] {
  return validateStackFile(document) ? [] : (validateStackFile.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
}

/** The real validation's problems for a stack file (what `npm run plan` and the program report). */
function validationProblems(stack: string, document: unknown): string[] {
  try {
    parseFleetConfig(stackConfigFromFile(stack, document));
    return [];
  } catch (error) {
    if (error instanceof FleetConfigError) return error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    throw error;
  }
}

/** Walks every field a user writes; returns the paths without a description, and those of objects that accept unknown keys. */
function undescribedAndLoose(schema: JsonSchema, at: string, found: { undescribed: string[]; loose: string[]; described: number }): void {
  if (typeof schema.description === "string" && schema.description.length > 0) found.described += 1;
  else found.undescribed.push(at);
  visitInside(schema, at, found);
}

function visitInside(schema: JsonSchema, at: string, found: { undescribed: string[]; loose: string[]; described: number }): void {
  if (isSecure(schema)) return;
  for (const option of (schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[]) visitInside(option, at, found);
  if (schema.type === "array") visitInside(schema.items as JsonSchema, `${at}[]`, found);
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    if (schema.additionalProperties !== false) found.loose.push(at);
    for (const [field, inner] of Object.entries(properties)) undescribedAndLoose(inner, `${at}.${field}`, found);
  }
  const value = schema.additionalProperties;
  if (!properties && typeof value === "object" && value !== null && Object.keys(value).length > 0) {
    const entry = value as JsonSchema;
    if (entry.properties || entry.anyOf || entry.additionalProperties || isSecure(entry)) undescribedAndLoose(entry, `${at}.<entry>`, found);
  }
}

describe("the stack-file schema and the config key table", () => {
  it(`are what \`npm run config-schema\` generates now (${schemaPath}, the table in ${docsPath})`, () => {
    const problems = driftProblems(repoRoot);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("are deterministic: two generations are byte for byte the same, and end in a newline", () => {
    expect(stackFileSchemaText()).toBe(stackFileSchemaText());
    expect(keyTable()).toBe(keyTable());
    expect(stackFileSchemaText().endsWith("}\n")).toBe(true);
  });

  it("describe every config key and every field a user writes, and keep every object strict", () => {
    const found = { undescribed: [] as string[], loose: [] as string[], described: 0 };
    for (const [name, schema] of Object.entries(stackFileSchema().definitions as Record<string, JsonSchema>)) undescribedAndLoose(schema, name, found);
    expect(found.undescribed, `no description: ${found.undescribed.join(", ")}`).toEqual([]);
    expect(found.loose, `objects that accept unknown keys: ${found.loose.join(", ")}`).toEqual([]);
    expect(found.described).toBeGreaterThan(100);
    console.log(`config-schema: ${found.described} keys and fields described`);
  });

  it("fails to generate the table, saying which lines it needs, when the markers are missing", () => {
    expect(() => spliceKeyTable("# Configuration\n\nno markers here\n", keyTable())).toThrow(`${docsPath} must contain, once each and in this order, the lines\n  ${beginMarker}\n  ${endMarker}`);
    expect(() => spliceKeyTable(`${endMarker}\n${beginMarker}\n`, keyTable())).toThrow(/must contain, once each and in this order/);
  });

  it("notice a description changed in the zod schema (tenants[].workers[].replicas), and say how to regenerate", () => {
    const replicas = fleetConfigSchema.shape.tenants.unwrap().element.shape.workers.element.shape.replicas;
    const meta = z.globalRegistry.get(replicas);
    expect(meta?.description).toMatch(/^Number of worker servers/);
    try {
      z.globalRegistry.add(replicas, { ...meta, description: "Number of worker servers (tampered)." });
      expect(driftProblems(repoRoot)).toEqual([
        `${schemaPath} differs from what the zod schemas generate; run \`npm run config-schema\` and commit the result`,
        `the key table in ${docsPath} differs from what the zod schemas generate; run \`npm run config-schema\` and commit the result`,
      ]);
    } finally {
      z.globalRegistry.add(replicas, meta!);
    }
    expect(driftProblems(repoRoot)).toEqual([]);
  });

  it("are named by a modeline on the first line of every committed stack file, on its own", () => {
    for (const stack of stackNames) {
      const [first, second] = readFileSync(path.join(repoRoot, "stacks", `Pulumi.${stack}.yaml`), "utf8").split("\n");
      expect(first, stack).toBe("# yaml-language-server: $schema=./stack-file.schema.json");
      // A blank line makes it the document's comment; otherwise it belongs to the first key, and
      // Pulumi's comment-keeping edit drops it with that key (encryptionsalt, on change-secrets-provider).
      expect(second, stack).toBe("");
    }
  });
});

describe("the JSON Schema and the real validation", () => {
  it.each(stackNames)("both accept the committed stack %s", (stack) => {
    expect(stackNames).toEqual(["dev", "prod"]);
    expect(schemaErrors(stackFile(stack))).toEqual([]);
    expect(validationProblems(stack, stackFile(stack))).toEqual([]);
  });

  /** Cases: a change to a committed stack file, and what both must conclude. */
  const cases: { name: string; stack: string; change: (file: StackFile) => void; schema: RegExp | "valid"; validation: RegExp | "valid" }[] = [
    {
      name: "a misspelt config key (capi-fleet:tenant for capi-fleet:tenants)",
      stack: "dev",
      change: (file) => {
        file.config["capi-fleet:tenant"] = file.config["capi-fleet:tenants"];
        delete file.config["capi-fleet:tenants"];
      },
      schema: /^\/config must NOT have additional properties \{"additionalProperty":"capi-fleet:tenant"\}$/m,
      validation: /^tenant: unknown config key; did you mean "tenants"\?/m,
    },
    {
      name: "a misspelt field inside a tenant (namepsace)",
      stack: "prod",
      change: (file) => {
        const [tenant] = file.config["capi-fleet:tenants"] as Record<string, unknown>[];
        tenant!.namepsace = tenant!.namespace;
        delete tenant!.namespace;
      },
      schema: /^\/config\/capi-fleet:tenants\/0 must NOT have additional properties \{"additionalProperty":"namepsace"\}$/m,
      validation: /^tenants\[0\]\.namepsace: unknown key; did you mean "namespace"\?/m,
    },
    {
      name: "a misspelt field inside a worker pool (placementGroups)",
      stack: "dev",
      change: (file) => {
        const [tenant] = file.config["capi-fleet:tenants"] as { workers: Record<string, unknown>[] }[];
        tenant!.workers[0]!.placementGroups = true;
      },
      schema: /^\/config\/capi-fleet:tenants\/0\/workers\/0 must NOT have additional properties \{"additionalProperty":"placementGroups"\}$/m,
      validation: /^tenants\[0\]\.workers\[0\]\.placementGroups: unknown key; did you mean "placementGroup"\?/m,
    },
    {
      name: "a secret in plain text (hcloud:token)",
      stack: "dev",
      change: (file) => {
        file.config["hcloud:token"] = "a".repeat(64);
      },
      schema: /^\/config\/hcloud:token must be object/m,
      validation: /^hcloud:token: is stored in plain text/m,
    },
    {
      name: "an unknown management mode",
      stack: "dev",
      change: (file) => {
        (file.config["capi-fleet:management"] as Record<string, unknown>).mode = "kind";
      },
      schema: /^\/config\/capi-fleet:management must match exactly one schema in oneOf/m,
      validation: /^management\.mode: mode "kind" is not supported; allowed: hetzner, existing/m,
    },
    {
      name: "tenantsPerStack 0",
      stack: "dev",
      change: (file) => {
        file.config["capi-fleet:tenantsPerStack"] = 0;
      },
      schema: /^\/config\/capi-fleet:tenantsPerStack must be >= 1/m,
      validation: /^tenantsPerStack: 0 is not allowed/m,
    },
    {
      name: "the project-less spelling of a key (tenants for capi-fleet:tenants)",
      stack: "dev",
      change: (file) => {
        file.config.tenants = file.config["capi-fleet:tenants"];
        delete file.config["capi-fleet:tenants"];
      },
      schema: "valid",
      validation: "valid",
    },
    {
      name: "another namespace's key (hcloud:pollInterval), which the program ignores",
      stack: "dev",
      change: (file) => {
        file.config["hcloud:pollInterval"] = "500ms";
      },
      schema: "valid",
      validation: "valid",
    },
  ];

  it.each(cases)("agree on $name", ({ stack, change, schema, validation }) => {
    const file = stackFile(stack);
    change(file);
    const [fromSchema, fromValidation] = [schemaErrors(file).join("\n"), validationProblems(stack, file).join("\n")];
    if (schema === "valid") expect(fromSchema).toBe("");
    else expect(fromSchema).toMatch(schema);
    if (validation === "valid") expect(fromValidation).toBe("");
    else expect(fromValidation).toMatch(validation);
  });
});
