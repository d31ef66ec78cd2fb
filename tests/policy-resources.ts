import type { PolicyResource } from "@pulumi/policy";
import { resourceTypes } from "../policies/lib/fleet-resources";
import type { Registration } from "./pulumi-mocks";

/**
 * The engine's view of recorded registrations, as the policy pack gets it: inputs for custom
 * resources and components, outputs for reads like the StackReference, and dependencies as
 * resource objects. Shared by tests/policy-pack.test.ts and `npm run bench`.
 */
export function policyResourcesOf(registrations: readonly Registration[]): PolicyResource[] {
  const byUrn = new Map<string, PolicyResource>();
  const resources = registrations.map((registration) => {
    const props = registration.type === resourceTypes.stackReference ? (registration.state ?? {}) : registration.inputs;
    const resource = { type: registration.type, name: registration.name, urn: registration.urn, props, dependencies: [] as PolicyResource[], propertyDependencies: {} } as unknown as PolicyResource;
    byUrn.set(registration.urn, resource);
    return resource;
  });
  registrations.forEach((registration, index) => {
    resources[index]!.dependencies = registration.dependencies.flatMap((urn) => byUrn.get(urn) ?? []);
  });
  return resources;
}
