import { beforeAll, describe, expect, it } from "vitest";
import { runProgramAgain } from "../tests/support/fleet-run";
import { settle } from "../tests/support/pulumi-mocks";
import { installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { catalog } from "./model/versions/catalog";
import { parseK3sVersion } from "./model/versions/kubernetes-version";
import { componentTypes } from "./model/contract/component-types";
import { stackOutputs } from "./model/contract/outputs";

// The whole program (infra/index.ts), fed its own last `managementK3sVersion` output through the
// StackReference it reads: a management.k3sVersion the servers cannot reach from it in one step
// stops the program before anything but that read is registered; a reachable one becomes the
// Plan's version and the next deployed version, and DeployedState publishes the old one for the
// policy pack.

const current = parseK3sVersion(catalog.k3s.version)!;
/** A k3s release relative to the catalog's, which the dev stack configures. */
const release = (minorDelta: number, patch = 0) => `v${current.major}.${current.minor + minorDelta}.${patch}+k3s1`;

const lastOutputs: Record<string, unknown> = {};
let allRegistrations: Registration[] = [];

async function runProgram(deployedK3s: string | undefined, k3sVersion?: string) {
  lastOutputs[stackOutputs.managementK3sVersion] = deployedK3s;
  return runProgramAgain("dev", allRegistrations, (values) => {
    if (!k3sVersion) return;
    const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
    values["capi-fleet:management"] = JSON.stringify({ ...management, k3sVersion });
  });
}

beforeAll(async () => {
  allRegistrations = await installRecordingMocks("capi-fleet", "dev", false, lastOutputs);
});

describe("management.k3sVersion against the deployed k3s release", () => {
  it.each([
    ["a skip of two minors", release(-2), /management\.k3sVersion: v\S+ → v\S+ skips 1 minor; k3s upgrades one minor at a time/],
    ["a downgrade", release(1), /management\.k3sVersion: v\S+ would downgrade the servers from the deployed v\S+/],
  ])("stops %s before registering anything but the read of its own outputs", async (_label, deployed, message) => {
    const { run, registrations } = await runProgram(deployed);
    await expect(run).rejects.toThrow(message);
    await settle(registrations);
    expect(registrations.map((r) => r.type)).toEqual(["pulumi:pulumi:StackReference"]);
  });

  it("runs a one-minor upgrade: the Plan asks for the target, the output records it, DeployedState publishes what ran", async () => {
    const { run, registrations } = await runProgram(release(-1, 3));
    const outputs = await run;
    expect(await valueOf(outputs[stackOutputs.managementK3sVersion]!)).toBe(catalog.k3s.version);
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
    const plan = registrations.find((r) => r.type === "kubernetes:upgrade.cattle.io/v1:Plan");
    expect((plan?.inputs.spec as { version?: string } | undefined)?.version).toBe(catalog.k3s.version);
    const state = registrations.find((r) => r.type === componentTypes.deployedState);
    expect(state?.outputs?.[stackOutputs.managementK3sVersion]).toBe(release(-1, 3));
  });

  it("runs a stack deployed before the version was recorded (no output): nothing to compare, nothing published", async () => {
    const { run, registrations } = await runProgram(undefined, release(1));
    const outputs = await run;
    expect(await valueOf(outputs[stackOutputs.managementK3sVersion]!)).toBe(release(1));
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
    const state = registrations.find((r) => r.type === componentTypes.deployedState);
    expect(state?.outputs).toBeDefined();
    expect(state?.outputs).not.toHaveProperty(stackOutputs.managementK3sVersion);
  });
});
