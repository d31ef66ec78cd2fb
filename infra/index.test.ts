import * as pulumi from "@pulumi/pulumi";
import { beforeAll, expect, it } from "vitest";
import { installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { readStackConfig } from "../tests/support/stack-files";
import { byType } from "../tests/support/fleet-run";
import { settle } from "../tests/support/pulumi-mocks";
import { componentTypes, fleetComponentPrefix } from "./model/contract/component-types";
import { stackOutputs } from "./model/contract/outputs";
import { scriptEntryPoints } from "./model/contract/script-entry-points";

// The composition root reads config at import time, so config and mocks come first.
let registrations: Registration[];
type Program = typeof import("./index.js");
let program: Awaited<ReturnType<Program>>;

beforeAll(async () => {
  registrations = await installRecordingMocks("capi-fleet", "dev");
  const { values, secretKeys } = readStackConfig("dev");
  pulumi.runtime.setAllConfig(values, secretKeys);
  // `export = async () => …`: Pulumi calls the function and exports what it returns.
  // `export = async () => …`: Pulumi calls the function and exports what it returns; under
  // vitest the CommonJS export arrives as the module's default.
  const loaded: unknown = await import("./index.js");
  program = await (loaded as { default: Program }).default();
});

it("exports the management cluster's endpoint, servers and network, with the kubeconfig secret", async () => {
  expect(await valueOf(program.managementApiEndpoint)).toMatch(/^https:\/\/.+:6443$/);
  expect(await pulumi.isSecret(program.managementKubeconfig)).toBe(true);
  expect(await valueOf(program.managementServers)).toHaveLength(1);
  expect(program.managementNetworkId).toBeDefined();
  expect(await valueOf(program.managementNetworkId!)).toEqual(expect.any(String));
  expect(registrations.some((r) => r.type === componentTypes.managementCluster)).toBe(true);
});

it("exports the CAREN handler names a ClusterClass must use", async () => {
  expect(await valueOf(program.carenExtensionNames)).toEqual({
    clusterConfigVariables: expect.stringMatching(/^genericclusterconfigvars-dv\./),
    clusterPatches: expect.stringMatching(/^genericclusterv\d+configpatch-gp\./),
    workerPatches: expect.stringMatching(/^genericworkerv\d+configpatch-gp\./),
  });
});

it("exports only outputs the contract with deployed state names, and registers only the contract's component types", async () => {
  await settle(registrations);
  expect(Object.keys(program).filter((name) => !(Object.values(stackOutputs) as string[]).includes(name))).toEqual([]);
  const fleetTypes = new Set(registrations.map((r) => r.type).filter((type) => type.startsWith(fleetComponentPrefix)));
  expect([...fleetTypes].filter((type) => !(Object.values(componentTypes) as string[]).includes(type))).toEqual([]);
  expect(fleetTypes.size).toBeGreaterThan(5);
});

it("runs every local command through an entry point the contract lists", async () => {
  await settle(registrations);
  const commandLines = byType(registrations, "command:local:Command").flatMap((r) =>
    ["create", "update", "delete"].map((hook) => r.inputs[hook]).filter((line): line is string => typeof line === "string"),
  );
  const scripts = commandLines.map((line) => /^node (\S+)/.exec(line)?.[1]).filter((script) => script !== undefined);
  expect(scripts.length).toBeGreaterThan(3);
  expect(scripts.filter((script) => !(Object.values(scriptEntryPoints) as string[]).includes(script))).toEqual([]);
});
