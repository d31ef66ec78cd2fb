import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { settle } from "../tests/fleet-run";
import { installRecordingMocks, valueOf, type Registration } from "../tests/pulumi-mocks";
import { readStackConfig } from "../tests/stack-files";
import { tenantVersionsOutputName } from "./deployed-state";
import { catalog } from "./model/catalog";

// The whole program, fed its own last outputs through the StackReference it reads: plans
// start from what runs, and an impossible one stops the program before anything else is
// registered.

type Program = () => Promise<Record<string, pulumi.Output<unknown>>>;
const [oldest, middle, newest] = catalog.tenantKubernetesVersions;

// One mock monitor for every run: a monitor swapped mid-run would not know the URNs of
// the previous run's late output registrations.
const lastOutputs: Record<string, unknown> = {};
let allRegistrations: Registration[] = [];

async function runProgram(previousTenantVersions: unknown, tenantVersion?: string): Promise<{ registrations: Registration[]; run: Promise<Record<string, pulumi.Output<unknown>>> }> {
  lastOutputs[tenantVersionsOutputName] = previousTenantVersions;
  const { values, secretKeys } = readStackConfig("dev");
  if (tenantVersion) {
    const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[];
    tenants[0]!.kubernetesVersion = tenantVersion;
    values["capi-fleet:tenants"] = JSON.stringify(tenants);
  }
  pulumi.runtime.setAllConfig(values, secretKeys);
  allRegistrations.length = 0;
  const program = ((await import("./index.js")) as unknown as { default: Program }).default;
  return { registrations: allRegistrations, run: program() };
}

beforeAll(async () => {
  allRegistrations = await installRecordingMocks("capi-fleet", "dev", false, lastOutputs);
});

describe("deployed versions", () => {
  // First, so no straggling registration of an earlier run can land in its list.
  it("stops a downgrade before registering anything but the read of its own outputs", async () => {
    const { run, registrations } = await runProgram({ "dev-a": { deployed: null, target: newest } }, oldest);
    await expect(run).rejects.toThrow(/tenants\[0\]\.kubernetesVersion: v\S+ cannot be reached from the deployed v\S+: cannot downgrade/);
    await settle(registrations);
    expect(registrations.map((r) => r.type)).toEqual(["pulumi:pulumi:StackReference"]);
  });

  it("plans a new stack's tenants as creations", async () => {
    const { run, registrations } = await runProgram(undefined);
    const outputs = await run;
    expect(await valueOf(outputs[tenantVersionsOutputName]!)).toEqual({
      "dev-a": { deployed: null, target: middle, controlPlaneSteps: [], workerSteps: [] },
    });
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
  });

  it("plans from the version the last update deployed: two minors behind walks both minors, workers roll once", async () => {
    const { run, registrations } = await runProgram({ "dev-a": { deployed: null, target: oldest } }, newest);
    const outputs = await run;
    expect(await valueOf(outputs[tenantVersionsOutputName]!)).toEqual({
      "dev-a": { deployed: oldest, target: newest, controlPlaneSteps: [middle, newest], workerSteps: [newest] },
    });
    const stackReference = registrations.find((r) => r.type === "pulumi:pulumi:StackReference");
    expect(stackReference?.inputs).toEqual({ name: "organization/capi-fleet/dev" });
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
  });
});
