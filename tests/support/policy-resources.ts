import type { PolicyResource } from "@pulumi/policy";
import { freshPreviewOutputs, linkResources, type EngineView } from "../../policies/testing/harness";
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
 * The kind of run: on a fresh stack's preview, custom resources behind the management cluster's
 * unknown provider have no outputs; at an update's preview and after `up` they have the
 * provider's view of the object (here the mocks' state: inputs plus computed values).
 */
export type RunKind = "fresh-preview" | "update-preview-or-up";

/**
 * What the engine hands the policy pack for recorded registrations (policies/testing/harness.ts
 * says why): inputs to resource rules; to stack rules, components' registered outputs and the
 * custom resources' outputs for that kind of run, without the StackReference. Shared by
 * tests/in-the-loop/policy-pack.test.ts, the real-engine comparison and `npm run bench`.
 */
export function engineViewOfRegistrations(registrations: readonly Registration[], run: RunKind = "fresh-preview"): EngineView {
  return {
    forResourceRules: link(registrations, (registration) => registration.inputs),
    forStackRules: link(
      registrations.filter((registration) => registration.type !== stackReferenceType),
      (registration) =>
        run === "fresh-preview" || !registration.custom
          ? freshPreviewOutputs({ type: registration.type, outputs: registration.outputs })
          : (registration.state ?? {}),
    ),
  };
}
