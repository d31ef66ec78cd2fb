import type { PolicyResource } from "@pulumi/policy";
import { freshPreviewOutputs, linkResources, type EngineView } from "../policies/testing/harness";
import type { Registration } from "./pulumi-mocks";

/** The StackReference type token: a read, which never reaches stack rules. */
const stackReferenceType = "pulumi:pulumi:StackReference";

function link(registrations: readonly Registration[], propsOf: (registration: Registration) => Record<string, unknown>): PolicyResource[] {
  return linkResources(
    registrations,
    propsOf,
    (registration) => registration.urn,
    (registration) => registration.dependencies,
    (registration) => registration.parent || undefined,
  );
}

/**
 * What the engine hands the policy pack for recorded registrations, on the preview of a fresh
 * stack (policies/testing/harness.ts says why): inputs to resource rules; to stack rules,
 * components' registered outputs and nothing of custom resources, without the StackReference.
 * Shared by tests/policy-pack.test.ts, the real-engine comparison and `npm run bench`.
 */
export function engineViewOfRegistrations(registrations: readonly Registration[]): EngineView {
  return {
    forResourceRules: link(registrations, (registration) => registration.inputs),
    forStackRules: link(
      registrations.filter((registration) => registration.type !== stackReferenceType),
      (registration) => freshPreviewOutputs({ type: registration.type, outputs: registration.outputs }),
    ),
  };
}
