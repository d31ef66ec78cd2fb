import { describe, expect, it } from "vitest";
import { fakeHcloudToken, readStackConfig } from "../../../tests/support/stack-files";
import { shardValues } from "../../../tests/support/fleet-config-fixtures";
import { tenantsPerStack } from "../config/shards";
import { configKeys, FleetConfigError } from "../config/stack-config";
import { parseFleetConfig, parseShardConfig } from "./validate-fleet-config";

// The config of a shard stack (tenants only, on the management stack's cluster), the limit of
// tenants per stack, and a management stack's list of shards (docs/architecture.md, Scaling out).

const prod = readStackConfig("prod");
const prodTenants = JSON.parse(prod.values[configKeys.tenants]!) as { name: string; namespace?: string; apps?: unknown }[];
const edge = prodTenants.find((tenant) => tenant.name === "edge")!;

const parse = (config: { values: Record<string, string>; secretKeys: string[] }, stack = "prod-shard-a") =>
  parseShardConfig({ stack, values: config.values, secretKeys: new Set(config.secretKeys), allowPlaceholderSecrets: true });

const problemsOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof FleetConfigError) return error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    throw error;
  }
  return [];
};

/** `count` copies of edge under other names (each in its own namespace). */
const copiesOfEdge = (count: number) => Array.from({ length: count }, (_, index) => ({ ...edge, name: `edge-${index}`, namespace: `edge-${index}` }));

describe("a shard stack's config", () => {
  it("holds tenants and the management stack's name, nothing of the management cluster", () => {
    const config = parse(shardValues([edge]));
    expect(config.managementStack).toBe("prod");
    expect(config.tenants.map((tenant) => tenant.name)).toEqual(["edge"]);
    const withManagement = shardValues([edge], { [configKeys.management]: prod.values[configKeys.management]!, [configKeys.gitops]: "{}", [configKeys.mirrors]: "{}", [configKeys.shards]: "[]" });
    expect(problemsOf(() => parse(withManagement))).toEqual([
      expect.stringMatching(/^management: is not allowed in a shard stack \(managementStack is set\)/),
      expect.stringMatching(/^gitops: is not allowed in a shard stack/),
      expect.stringMatching(/^mirrors: is not allowed in a shard stack \(managementStack is set\): it is the management stack's \(its tenants read it from there\)/),
      expect.stringMatching(/^shards: is not allowed in a shard stack/),
    ]);
  });

  it("names a bad managementStack, and needs tenants", () => {
    expect(problemsOf(() => parse({ ...shardValues([]), values: { ...shardValues([]).values, [configKeys.managementStack]: "a b" } }))).toEqual([
      'managementStack: "a b" is not a stack name; allowed: stack, project/stack or organization/project/stack',
      expect.stringMatching(/^tenants: a shard stack needs at least one tenant/),
    ]);
    expect(problemsOf(() => parse(shardValues([edge]), "prod"))).toEqual([expect.stringMatching(/^managementStack: "prod" names this stack itself/)]);
  });

  it("is not read as a stack with a management cluster", () => {
    expect(problemsOf(() => parseFleetConfig({ stack: "prod-shard-a", values: shardValues([edge]).values, secretKeys: new Set(), allowPlaceholderSecrets: true }))).toEqual([
      expect.stringMatching(/^managementStack: makes this a shard stack/),
    ]);
  });
});

describe("a shard stack's config: what it refuses and what it leaves to the program", () => {
  it.each([
    [configKeys.hcloudToken, "hcloud:token", "the management stack's"],
    [configKeys.managementKubeconfig, "managementKubeconfig", "read from the management stack's outputs"],
    [configKeys.githubToken, "githubToken", "the management stack's (cluster-api-operator runs there)"],
    [configKeys.etcdS3Credentials, "etcdS3Credentials", "the management stack's"],
    [configKeys.management, "management", "the management stack's"],
    [configKeys.gitops, "gitops", "the management stack's (Flux runs on the management cluster)"],
    [configKeys.shards, "shards", "the management stack's (it lists its shards)"],
  ])("refuses %s, naming whose setting it is", (key, display, owner) => {
    const config = shardValues([edge], { [key]: "{}" });
    // Stored as a secret, where it is one: the refusal is the only problem.
    expect(problemsOf(() => parse({ ...config, secretKeys: [...config.secretKeys, key] }))).toEqual([
      `${display}: is not allowed in a shard stack (managementStack is set): it is ${owner} setting; remove it: pulumi config rm ${display}`,
    ]);
  });

  it("keeps another provider's keys and its own limit, and names an unknown key of the project", () => {
    expect(parse(shardValues([edge], { "hcloud:pollInterval": "1s", [configKeys.tenantsPerStack]: "5" })).tenants).toHaveLength(1);
    expect(problemsOf(() => parse(shardValues([edge], { "capi-fleet:tenantz": "[]" })))).toEqual([expect.stringMatching(/^tenantz: unknown config key; did you mean "tenants"\?/)]);
  });

  it("names a missing managementStack", () => {
    const { [configKeys.managementStack]: _unset, ...values } = shardValues([edge]).values;
    expect(problemsOf(() => parse({ values, secretKeys: [configKeys.tenantHcloudTokens] }))).toEqual([
      'managementStack: "" is not a stack name; allowed: stack, project/stack or organization/project/stack',
    ]);
  });

  it("names a tenant's misspelt field, and a token stored in plain text, together", () => {
    const config = shardValues([{ ...edge, namepsace: "edge" }]);
    expect(problemsOf(() => parse({ ...config, secretKeys: [] }))).toEqual([
      expect.stringMatching(/^tenants\[0\]\.namepsace: unknown key; did you mean "namespace"\?/),
      expect.stringMatching(/^tenantHcloudTokens: is stored in plain text/),
    ]);
    expect(problemsOf(() => parse({ ...shardValues([edge]), secretKeys: [] }))).toEqual([expect.stringMatching(/^tenantHcloudTokens: is stored in plain text/)]);
  });

  it("leaves a tenant's apps to the program, which reads gitops from the management stack", () => {
    expect(parse(shardValues([{ ...edge, apps: { path: "apps/edge" } }])).tenants[0]?.apps).toEqual({ path: "apps/edge" });
  });
});

describe("the limit of tenants per stack", () => {
  it(`warns above ${tenantsPerStack.recommended} tenants and refuses above ${tenantsPerStack.maximum}, in shard stacks and in a stack with the management cluster`, () => {
    expect(parse(shardValues(copiesOfEdge(tenantsPerStack.recommended))).warnings.filter((warning) => warning.path === "tenants")).toEqual([]);
    expect(parse(shardValues(copiesOfEdge(tenantsPerStack.recommended + 1))).warnings.filter((warning) => warning.path === "tenants")).toEqual([
      { path: "tenants", message: expect.stringContaining(`above the documented limit of ${tenantsPerStack.recommended}`) },
    ]);
    expect(problemsOf(() => parse(shardValues(copiesOfEdge(tenantsPerStack.maximum + 1))))).toEqual([expect.stringMatching(new RegExp(`^tenants: ${tenantsPerStack.maximum + 1} tenants in one stack; allowed: at most ${tenantsPerStack.maximum}`))]);
    const tenants = copiesOfEdge(tenantsPerStack.recommended + 1);
    const fleet = parseFleetConfig({
      stack: "prod",
      values: {
        ...prod.values,
        [configKeys.tenants]: JSON.stringify(tenants),
        [configKeys.tenantHcloudTokens]: JSON.stringify(Object.fromEntries(tenants.map((tenant) => [tenant.name, fakeHcloudToken("t")]))),
        [configKeys.tenantRegistryCredentials]: "{}",
      },
      secretKeys: new Set(prod.secretKeys),
      allowPlaceholderSecrets: true,
    });
    expect(fleet.warnings.filter((warning) => warning.path === "tenants")).toHaveLength(1);
  });

  it("refuses above the maximum in a stack with the management cluster too, and takes a limit of 1", () => {
    const tenants = copiesOfEdge(tenantsPerStack.maximum + 1);
    const values = {
      ...prod.values,
      [configKeys.tenants]: JSON.stringify(tenants),
      [configKeys.tenantHcloudTokens]: JSON.stringify(Object.fromEntries(tenants.map((tenant) => [tenant.name, fakeHcloudToken("t")]))),
      [configKeys.tenantRegistryCredentials]: "{}",
    };
    const fleet = (extra: Record<string, string>) => () => parseFleetConfig({ stack: "prod", values: { ...values, ...extra }, secretKeys: new Set(prod.secretKeys), allowPlaceholderSecrets: true });
    expect(problemsOf(fleet({}))).toEqual([expect.stringMatching(new RegExp(`^tenants: ${tenantsPerStack.maximum + 1} tenants in one stack; allowed: at most ${tenantsPerStack.maximum}`))]);
    expect(parse(shardValues([edge], { [configKeys.tenantsPerStack]: "1" })).warnings).toEqual([]);
    expect(problemsOf(() => parse(shardValues(copiesOfEdge(2), { [configKeys.tenantsPerStack]: "1" })))).toEqual([expect.stringMatching(/^tenants: 2 tenants in one stack; allowed: at most 1/)]);
  });

  it("follows the stack's own tenantsPerStack (a bigger runner): no warning up to it, a refusal above it, and a clear error for a bad value", () => {
    const many = copiesOfEdge(tenantsPerStack.maximum + 1);
    const own = (limit: string) => shardValues(many, { [configKeys.tenantsPerStack]: limit });
    expect(parse(own(String(tenantsPerStack.maximum + 1))).warnings.filter((warning) => warning.path === "tenants")).toEqual([]);
    expect(problemsOf(() => parse(own(String(tenantsPerStack.maximum))))).toEqual([expect.stringMatching(/^tenants: \d+ tenants in one stack; allowed: at most \d+ \(this stack's tenantsPerStack\)/)]);
    expect(problemsOf(() => parse(own("0")))).toEqual(["tenantsPerStack: 0 is not allowed; allowed: a whole number of tenants, at least 1", expect.stringMatching(/^tenants: /)]);
  });
});

describe("a management stack with shards", () => {
  const withShards = (shards: unknown) =>
    parseFleetConfig({ stack: "prod", values: { ...prod.values, [configKeys.shards]: JSON.stringify(shards) }, secretKeys: new Set(prod.secretKeys), allowPlaceholderSecrets: true });

  it("lists its shards by stack name, each once", () => {
    expect(withShards(["prod-shard-a", "capi-fleet/prod-shard-b", "org/capi-fleet/prod-shard-c"]).shards).toEqual(["prod-shard-a", "capi-fleet/prod-shard-b", "org/capi-fleet/prod-shard-c"]);
    expect(parseFleetConfig({ stack: "prod", values: prod.values, secretKeys: new Set(prod.secretKeys), allowPlaceholderSecrets: true }).shards).toEqual([]);
    expect(problemsOf(() => withShards("prod-shard-a"))).toEqual(['shards: expected a list of stack names, got "prod-shard-a"']);
    expect(problemsOf(() => withShards(["a b", 3, "prod-shard-a", "prod-shard-a"]))).toEqual([
      'shards[0]: "a b" is not a stack name; allowed: stack, project/stack or organization/project/stack',
      "shards[1]: 3 is not a stack name; allowed: stack, project/stack or organization/project/stack",
      'shards[3]: "prod-shard-a" is listed twice',
    ]);
  });

});
