import * as pulumi from "@pulumi/pulumi";
import { expect } from "vitest";
import { resourceHooksAvailable } from "../../components/helm-release/interrupted-release";
import { loadFleetConfig } from "../../infra/config";
import { planTenantUpgradesOrStop } from "../../infra/deployed-state";
import { createFleet, type FleetOutputs } from "../../infra/fleet";
import { installRecordingMocks, mockFailure, settle, valueOf, type Registration } from "./pulumi-mocks";
import { readStackConfig } from "./stack-files";

/**
 * Runs the program for a committed stack file under mocks and records what it registers.
 * `fault` (a stack transformation) breaks what the program registers, for negative controls:
 * the program then runs inside a Stack resource, as under the engine.
 */
export async function runStack(
  stack: string,
  configOverride?: (values: Record<string, string>, secretKeys: string[]) => void,
  fault?: pulumi.ResourceTransformation,
): Promise<{ registrations: Registration[]; outputs: FleetOutputs }> {
  const registrations = await installRecordingMocks("capi-fleet", stack);
  const { values, secretKeys } = readStackConfig(stack);
  configOverride?.(values, secretKeys);
  pulumi.runtime.setAllConfig(values, secretKeys);
  const config = loadFleetConfig();
  const run = async () => {
    // As on a new stack: nothing deployed yet; resource hooks as infra/index.ts asks the engine for them.
    const outputs = createFleet(config, `capi-fleet-${stack}`, planTenantUpgradesOrStop(config, new Map()), undefined, undefined, await resourceHooksAvailable());
    await Promise.race([Promise.all([valueOf(outputs.managementKubeconfig), valueOf(outputs.managementServers)]), mockFailure()]);
    return outputs;
  };
  let outputs: FleetOutputs | undefined;
  if (fault) {
    await pulumi.runtime.runInPulumiStack(async () => {
      pulumi.runtime.registerStackTransformation(fault);
      outputs = await run();
      return {};
    });
  } else {
    outputs = await run();
  }
  await settle(registrations);
  return { registrations, outputs: outputs! };
}

/** A token-auth kubeconfig for `existing` mode runs (the mocks never connect). */
type Program = () => Promise<Record<string, pulumi.Output<unknown>>>;

/**
 * Runs the whole program (infra/index.ts) once more on a committed stack's config, after `edit`,
 * under the mocks a test file installed once (`installRecordingMocks`, whose list is `sink`): one
 * monitor for every run, since a monitor swapped mid-run would not know the URNs of the previous
 * run's late output registrations.
 */
export async function runProgramAgain(
  stack: string,
  sink: Registration[],
  edit?: (values: Record<string, string>) => void,
): Promise<{ registrations: Registration[]; run: Promise<Record<string, pulumi.Output<unknown>>> }> {
  const { values, secretKeys } = readStackConfig(stack);
  edit?.(values);
  pulumi.runtime.setAllConfig(values, secretKeys);
  sink.length = 0;
  const program = ((await import("../../infra/index.js")) as unknown as { default: Program }).default;
  return { registrations: sink, run: program() };
}

export const existingClusterKubeconfig = [
  "apiVersion: v1",
  "clusters: [{name: c, cluster: {server: 'https://mgmt.example.com:6443'}}]",
  "users: [{name: u, user: {token: t}}]",
  "contexts: [{name: x, context: {cluster: c, user: u}}]",
  "current-context: x",
].join("\n");

/** A config override that turns a committed stack into `existing` mode. */
export function useExistingCluster(kubernetesVersion: string) {
  return (values: Record<string, string>, secretKeys: string[]): void => {
    values["capi-fleet:management"] = JSON.stringify({ mode: "existing", kubernetesVersion });
    delete values["hcloud:token"];
    values["capi-fleet:managementKubeconfig"] = existingClusterKubeconfig;
    secretKeys.push("capi-fleet:managementKubeconfig");
  };
}

export const byType = (registrations: readonly Registration[], type: string): Registration[] =>
  registrations.filter((r) => r.type === type);

/** The single registration of a type (fails the test otherwise). */
export function one(registrations: readonly Registration[], type: string, name?: string): Registration {
  const found = byType(registrations, type).filter((r) => name === undefined || r.name === name);
  expect(found, `${type} ${name ?? ""}`).toHaveLength(1);
  return found[0]!;
}

/** True when `later` waits for `earlier`, directly or through other registrations. */
export function waitsFor(registrations: readonly Registration[], later: Registration, earlier: Registration): boolean {
  const byUrn = new Map(registrations.map((r) => [r.urn, r]));
  const seen = new Set<string>();
  const queue = [...later.dependencies];
  while (queue.length > 0) {
    const urn = queue.pop()!;
    if (urn === earlier.urn) return true;
    if (seen.has(urn)) continue;
    seen.add(urn);
    queue.push(...(byUrn.get(urn)?.dependencies ?? []));
  }
  return false;
}
