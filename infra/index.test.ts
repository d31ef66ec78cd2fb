import * as pulumi from "@pulumi/pulumi";
import { beforeAll, expect, it } from "vitest";
import { installRecordingMocks, valueOf, type Registration } from "../tests/pulumi-mocks";
import { readStackConfig } from "../tests/stack-files";
import { componentTypes } from "./model/contract/component-types";

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
