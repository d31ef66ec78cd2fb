import { describe, expect, it } from "vitest";
import {
  fleetPlatformFrom,
  fleetTenantsFrom,
  fleetTenantsOf,
  ownershipProblems,
  peerTenantVersions,
  qualifiedStackName,
  stackNamePattern,
  tenantCountVerdict,
  tenantsPerStack,
} from "./shards";

describe("tenantCountVerdict", () => {
  it("is ok up to the recommended limit, a warning above it, a refusal above the maximum", () => {
    expect(tenantCountVerdict(tenantsPerStack.recommended)).toEqual({ level: "ok" });
    expect(tenantCountVerdict(tenantsPerStack.recommended + 1)).toEqual({ level: "warning", message: expect.stringContaining(`${tenantsPerStack.recommended + 1} tenants in one stack is above the documented limit of ${tenantsPerStack.recommended}`) });
    expect(tenantCountVerdict(tenantsPerStack.maximum)).toMatchObject({ level: "warning" });
    expect(tenantCountVerdict(tenantsPerStack.maximum + 1)).toEqual({ level: "error", message: expect.stringContaining(`allowed: at most ${tenantsPerStack.maximum}`) });
    expect(tenantsPerStack.recommended).toBeLessThan(tenantsPerStack.maximum);
  });

  it("follows a stack's own limit: ok up to it, a refusal above it, never a warning", () => {
    expect(tenantCountVerdict(tenantsPerStack.maximum + 50, tenantsPerStack.maximum + 50)).toEqual({ level: "ok" });
    expect(tenantCountVerdict(11, 10)).toEqual({ level: "error", message: expect.stringContaining("allowed: at most 10 (this stack's tenantsPerStack)") });
    expect(tenantCountVerdict(tenantsPerStack.recommended + 1, tenantsPerStack.recommended + 1)).toEqual({ level: "ok" });
  });
});

describe("stack names", () => {
  it("qualifies a stack name with the program's organization and project", () => {
    expect(qualifiedStackName("prod", "org", "capi-fleet")).toBe("org/capi-fleet/prod");
    expect(qualifiedStackName("other/prod", "org", "capi-fleet")).toBe("org/other/prod");
    expect(qualifiedStackName("acme/other/prod", "org", "capi-fleet")).toBe("acme/other/prod");
  });

  it.each([
    ["prod", true],
    ["prod-shard-a", true],
    ["capi-fleet/prod", true],
    ["acme/capi-fleet/prod_1.x", true],
    ["a/b/c/d", false],
    ["", false],
    ["a b", false],
    ["/prod", false],
    ["prod/", false],
  ])("%j is a stack name: %s", (name, valid) => {
    expect(stackNamePattern.test(name)).toBe(valid);
  });
});

const declared = [{ urn: "urn:pulumi:prod::capi-fleet::capi-fleet:tenants:HetznerClusterClass$kubernetes:cluster.x-k8s.io/v1beta2:ClusterClass::class", props: { spec: {} } }];
const platform = { fleetName: "capi-fleet-prod", deletionProtection: true, adminCidrs: ["203.0.113.0/24"], gitops: true, declared, mirrors: { charts: "oci://registry.example.com/charts" } };

describe("fleetPlatformFrom", () => {
  it("reads the management stack's fleetPlatform output", () => {
    expect(fleetPlatformFrom(platform)).toEqual({ platform });
  });

  it("reads no mirrors from a management stack that published none, or older than them, and only their strings", () => {
    const { mirrors: _mirrors, ...withoutMirrors } = platform;
    expect(fleetPlatformFrom(withoutMirrors)).toEqual({ platform: { ...withoutMirrors, mirrors: {} } });
    expect(fleetPlatformFrom({ ...platform, mirrors: "oci://x" })).toEqual({ platform: { ...platform, mirrors: {} } });
    expect(fleetPlatformFrom({ ...platform, mirrors: { charts: 1, providers: "registry.example.com/capi" } })).toEqual({ platform: { ...platform, mirrors: { providers: "registry.example.com/capi" } } });
  });

  it.each([
    [undefined, /has no fleetPlatform output: run `pulumi up` on the management stack first/],
    [null, /has no fleetPlatform output/],
    ["text", /fleetPlatform is not a mapping/],
    [[platform], /fleetPlatform is not a mapping/],
    [{ ...platform, fleetName: 1 }, /lacks fleetName, deletionProtection or gitops/],
    [{ ...platform, deletionProtection: "yes" }, /lacks fleetName, deletionProtection or gitops/],
    [{ ...platform, gitops: undefined }, /lacks fleetName, deletionProtection or gitops/],
    [{ ...platform, adminCidrs: "203.0.113.0/24" }, /adminCidrs is not a list of strings/],
    [{ ...platform, adminCidrs: [1] }, /adminCidrs is not a list of strings/],
    [{ ...platform, declared: {} }, /declared is not a list of \{ urn, props \}/],
    [{ ...platform, declared: [{ urn: 1, props: {} }] }, /declared is not a list/],
    [{ ...platform, declared: [{ urn: "u", props: [] }] }, /declared is not a list/],
    [{ ...platform, declared: ["u"] }, /declared is not a list/],
  ])("says what is wrong with %j", (value, problem) => {
    const result = fleetPlatformFrom(value);
    expect("problem" in result && result.problem).toMatch(problem);
  });
});

describe("the fleet's tenants", () => {
  it("reads fleetTenants, skipping malformed entries", () => {
    const tenants = fleetTenantsFrom({
      a: { stack: "org/capi-fleet/s1", namespace: "a", version: "v1.35.3" },
      b: { stack: "org/capi-fleet/s2", namespace: "team-b" },
      c: { stack: "org/capi-fleet/s2", namespace: 3 },
      d: { namespace: "d" },
      e: "text",
      f: { stack: "org/capi-fleet/s1", namespace: "f", version: 1 },
    });
    expect([...tenants]).toEqual([
      ["a", { stack: "org/capi-fleet/s1", namespace: "a", version: "v1.35.3" }],
      ["b", { stack: "org/capi-fleet/s2", namespace: "team-b" }],
      ["f", { stack: "org/capi-fleet/s1", namespace: "f" }],
    ]);
    expect(fleetTenantsFrom(undefined).size).toBe(0);
    expect(fleetTenantsFrom([{ stack: "s", namespace: "n" }]).size).toBe(0);
  });

  it("lists each stack's tenants, the first stack that names one keeping it", () => {
    expect(
      fleetTenantsOf([
        { stack: "m", tenants: new Map([["a", { namespace: "a" }]]) },
        { stack: "s1", tenants: new Map([["b", { namespace: "b", version: "v1.34.6" }], ["a", { namespace: "elsewhere", version: "v1.33.10" }]]) },
      ]),
    ).toEqual({ a: { stack: "m", namespace: "a" }, b: { stack: "s1", namespace: "b", version: "v1.34.6" } });
  });

  const fleet = new Map([
    ["a", { stack: "s1", namespace: "a", version: "v1.35.3" }],
    ["b", { stack: "s2", namespace: "team-b", version: "v1.34.6" }],
    ["c", { stack: "s2", namespace: "c" }],
  ]);

  it("refuses a name or namespace another stack declares, and not the stack's own", () => {
    expect(ownershipProblems("s1", [{ name: "a", namespace: "a" }], fleet)).toEqual([]);
    expect(ownershipProblems("s1", [{ name: "x", namespace: "x" }, { name: "b", namespace: "b" }, { name: "y", namespace: "team-b" }], fleet)).toEqual([
      { path: "tenants[1].name", message: expect.stringMatching(/^"b" is a tenant of stack s2; tenant names are unique across the fleet/) },
      { path: "tenants[2].namespace", message: expect.stringMatching(/^"team-b" is the namespace of tenant "b" of stack s2; namespaces are unique/) },
    ]);
  });

  it("hands the pack the versions of the other stacks' tenants that have one", () => {
    expect(peerTenantVersions("s1", fleet)).toEqual({ b: "v1.34.6" });
    expect(peerTenantVersions("s2", fleet)).toEqual({ a: "v1.35.3" });
  });
});
