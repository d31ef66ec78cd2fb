import type { PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { configDefaults } from "../lib/define";

/**
 * Runs rules the way the engine does, without the engine: resource rules per resource
 * (inputs), stack rules once over every resource with resolved dependencies. Config is
 * merged over the schema defaults, as the CLI does before the pack sees it.
 */

/** A resource as a test declares it: dependencies by fixture name. */
export interface FixtureResource {
  type: string;
  name: string;
  props: Record<string, unknown>;
  dependsOn?: string[];
}

/** A violation with the rule that reported it. */
export interface Violation {
  policy: string;
  level: string;
  message: string;
  /** The resource it was reported on ("" for stack-wide). */
  urn: string;
}

const urnOf = (resource: Pick<FixtureResource, "type" | "name">): string => `urn:pulumi:test::capi-fleet::${resource.type}::${resource.name}`;

/** Turns fixtures into the engine's PolicyResource graph (dependencies as objects). */
export function policyResources(fixtures: readonly FixtureResource[]): PolicyResource[] {
  const byName = new Map<string, PolicyResource>();
  const resources = fixtures.map((fixture) => {
    const resource = {
      type: fixture.type,
      name: fixture.name,
      urn: urnOf(fixture),
      props: fixture.props,
      opts: { protect: false, ignoreChanges: [], aliases: [], additionalSecretOutputs: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 } },
      dependencies: [] as PolicyResource[],
      propertyDependencies: {},
      isType: () => false,
      asType: () => undefined,
    } as unknown as PolicyResource;
    byName.set(fixture.name, resource);
    return resource;
  });
  fixtures.forEach((fixture, index) => {
    resources[index]!.dependencies = (fixture.dependsOn ?? []).map((name) => {
      const dependency = byName.get(name);
      if (!dependency) throw new Error(`fixture ${fixture.name} depends on unknown ${name}`);
      return dependency;
    });
  });
  return resources;
}

function levelOf(policy: ResourceValidationPolicy | StackValidationPolicy, config: Record<string, unknown>): string {
  return typeof config.enforcementLevel === "string" ? config.enforcementLevel : (policy.enforcementLevel ?? "advisory");
}

class NotApplicable extends Error {}

function resourceArgs(resource: PolicyResource, config: Record<string, unknown>): ResourceValidationArgs {
  return {
    type: resource.type,
    props: resource.props,
    urn: resource.urn,
    name: resource.name,
    opts: resource.opts,
    stackTags: new Map(),
    isType: () => false,
    asType: () => undefined,
    getConfig: (() => config) as ResourceValidationArgs["getConfig"],
    notApplicable: (reason?: string) => {
      throw new NotApplicable(reason);
    },
  };
}

/**
 * Every violation the rules report on these resources. `config` maps policy name to its
 * config (an object) or a level (a string), like policies/config/<stack>.json.
 */
export async function evaluate(
  policies: readonly (ResourceValidationPolicy | StackValidationPolicy)[],
  fixtures: readonly FixtureResource[] | readonly PolicyResource[],
  config: Record<string, unknown> = {},
): Promise<Violation[]> {
  const resources = fixtures.length > 0 && "urn" in fixtures[0]! ? (fixtures as PolicyResource[]) : policyResources(fixtures);
  const violations: Violation[] = [];
  for (const policy of policies) {
    const own = config[policy.name];
    const merged: Record<string, unknown> = { ...configDefaults(policy), ...(typeof own === "string" ? { enforcementLevel: own } : ((own ?? {}) as Record<string, unknown>)) };
    const level = levelOf(policy, merged);
    if (level === "disabled") continue;
    const report = (urn: string) => (message: string, reportedUrn?: string) => violations.push({ policy: policy.name, level, message, urn: reportedUrn ?? urn });
    try {
      if ("validateResource" in policy && policy.validateResource) {
        const validators = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
        for (const resource of resources) {
          for (const validate of validators) await validate(resourceArgs(resource, merged), report(resource.urn));
        }
      } else if ("validateStack" in policy) {
        const args = { resources, stackTags: new Map<string, string>(), getConfig: (() => merged) as ResourceValidationArgs["getConfig"], notApplicable: () => { throw new NotApplicable(); } };
        await policy.validateStack(args, report(""));
      }
    } catch (error) {
      if (!(error instanceof NotApplicable)) throw error;
    }
  }
  return violations;
}

/** Deep copy of fixtures, so one test's mutation never leaks into another's baseline. */
export function cloneFixtures(fixtures: readonly FixtureResource[]): FixtureResource[] {
  return structuredClone(fixtures) as FixtureResource[];
}

/** The fixture with this name (fails loudly when a test names a missing one). */
export function fixture(fixtures: readonly FixtureResource[], name: string): FixtureResource {
  const found = fixtures.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no fixture named ${name}; have ${fixtures.map((f) => f.name).join(", ")}`);
  return found;
}

/** Reads (and creates) a nested object along a path, for one-field mutations. */
export function at(props: Record<string, unknown>, ...path: string[]): Record<string, unknown> {
  let current = props;
  for (const key of path) {
    current[key] ??= {};
    current = current[key] as Record<string, unknown>;
  }
  return current;
}
