import type { PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { configDefaults } from "../lib/define";
import { isFleetComponent } from "../lib/fleet-resources";

/**
 * Runs rules the way the engine does, without the engine, and hands them what the engine
 * hands them (pulumi/pkg/v3@v3.248.0: resource/deploy/step_generator.go): resource rules get
 * each resource's inputs; stack rules get each resource's outputs, which on the preview of a
 * fresh stack are empty for every custom resource behind the management cluster's provider
 * (its kubeconfig is unknown), and the fleet's components' registered outputs; the
 * StackReference the program reads is not among them. Config is merged over the schema
 * defaults, as the CLI does before the pack sees it. tests/in-the-loop/policy-pack-real-engine.test.ts
 * checks this view against the real engine.
 */

/** A resource as a test declares it: dependencies and parent by fixture name. */
export interface FixtureResource {
  type: string;
  name: string;
  /** Inputs: what resource rules see. */
  props: Record<string, unknown>;
  /** A fleet component's registered outputs: what stack rules see of it. */
  outputs?: Record<string, unknown>;
  dependsOn?: string[];
  parent?: string;
}

/** The two views the engine gives a pack of the same resources. */
export interface EngineView {
  /** Inputs, for resource rules. */
  readonly forResourceRules: readonly PolicyResource[];
  /** Outputs (as a fresh stack's preview has them), for stack rules. */
  readonly forStackRules: readonly PolicyResource[];
}

/** The StackReference type token: read resources never reach stack rules. */
const stackReferenceType = "pulumi:pulumi:StackReference";

/** Outputs as the engine has them at the preview of a fresh stack (see the file comment). */
export function freshPreviewOutputs(resource: { type: string; outputs?: Record<string, unknown> | undefined }): Record<string, unknown> {
  return isFleetComponent(resource) ? (resource.outputs ?? {}) : {};
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

/** Builds PolicyResources (dependencies and parents as objects) with the props `propsOf` gives. */
export function linkResources<T extends { type: string; name: string }>(
  items: readonly T[],
  propsOf: (item: T) => Record<string, unknown>,
  urnOf: (item: T) => string,
  dependencyUrns: (item: T) => readonly string[],
  parentUrn: (item: T) => string | undefined,
): PolicyResource[] {
  const byUrn = new Map<string, PolicyResource>();
  const resources = items.map((item) => {
    const resource = {
      type: item.type,
      name: item.name,
      urn: urnOf(item),
      props: propsOf(item),
      opts: { protect: false, ignoreChanges: [], aliases: [], additionalSecretOutputs: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 } },
      dependencies: [] as PolicyResource[],
      propertyDependencies: {},
      isType: () => false,
      asType: () => undefined,
    } as unknown as PolicyResource;
    byUrn.set(resource.urn, resource);
    return resource;
  });
  items.forEach((item, index) => {
    const resource = resources[index]!;
    resource.dependencies = dependencyUrns(item).flatMap((urn) => byUrn.get(urn) ?? []);
    const parent = parentUrn(item);
    if (parent) resource.parent = byUrn.get(parent);
  });
  return resources;
}

/** Turns fixtures into the engine's two views. */
export function engineViewOf(fixtures: readonly FixtureResource[]): EngineView {
  const names = new Set(fixtures.map((fixture) => fixture.name));
  for (const fixture of fixtures) {
    for (const name of [...(fixture.dependsOn ?? []), ...(fixture.parent ? [fixture.parent] : [])]) {
      if (!names.has(name)) throw new Error(`fixture ${fixture.name} refers to unknown ${name}`);
    }
  }
  const byName = new Map(fixtures.map((fixture) => [fixture.name, fixture]));
  const urn = (name: string) => urnOf(byName.get(name)!);
  const link = (items: readonly FixtureResource[], propsOf: (fixture: FixtureResource) => Record<string, unknown>) =>
    linkResources(items, propsOf, urnOf, (fixture) => (fixture.dependsOn ?? []).map(urn), (fixture) => (fixture.parent ? urn(fixture.parent) : undefined));
  return {
    forResourceRules: link(fixtures, (fixture) => fixture.props),
    forStackRules: link(
      fixtures.filter((fixture) => fixture.type !== stackReferenceType),
      freshPreviewOutputs,
    ),
  };
}

/** The URN a fixture gets (the same scheme the baseline's `declared` outputs use). */
export function fixtureUrn(fixture: Pick<FixtureResource, "type" | "name">): string {
  return urnOf(fixture);
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
  input: readonly FixtureResource[] | EngineView,
  config: Record<string, unknown> = {},
): Promise<Violation[]> {
  const view = "forStackRules" in input ? input : engineViewOf(input);
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
        for (const resource of view.forResourceRules) {
          for (const validate of validators) await validate(resourceArgs(resource, merged), report(resource.urn));
        }
      } else if ("validateStack" in policy) {
        const args = { resources: [...view.forStackRules], stackTags: new Map<string, string>(), getConfig: (() => merged) as ResourceValidationArgs["getConfig"], notApplicable: () => { throw new NotApplicable(); } };
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
