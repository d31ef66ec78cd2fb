import { beforeAll, describe, expect, it } from "vitest";
import { runProgramAgain } from "../tests/support/fleet-run";
import { settle } from "../tests/support/pulumi-mocks";
import { installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { readStackConfig } from "../tests/support/stack-files";
import { stackOutputs } from "./model/contract/outputs";

// The whole program (infra/index.ts), fed its own last outputs through the StackReference it
// reads. A changed management.serverType would have the provider power off every server at once
// to change its type (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/server/resource.go,
// resourceServerUpdate: Poweroff, then ChangeType with UpgradeDisk = !keep_disk), so against the
// type the servers run it stops the program before anything but that read is registered.

const devServer = "capi-fleet-dev-mgmt-1";
const configured = (JSON.parse(readStackConfig("dev").values["capi-fleet:management"]!) as { serverType: string }).serverType;
const other = configured === "cx33" ? "cx43" : "cx33";

const lastOutputs: Record<string, unknown> = {};
let allRegistrations: Registration[] = [];

async function runProgram(deployed: unknown, serverType?: string) {
  lastOutputs[stackOutputs.managementServerTypes] = deployed;
  return runProgramAgain("dev", allRegistrations, (values) => {
    if (!serverType) return;
    const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
    values["capi-fleet:management"] = JSON.stringify({ ...management, serverType });
  });
}

async function runToTheEnd(deployed: unknown, serverType?: string) {
  const { run, registrations } = await runProgram(deployed, serverType);
  const outputs = await run;
  await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
  await settle(registrations);
  return { outputs, registrations };
}

beforeAll(async () => {
  allRegistrations = await installRecordingMocks("capi-fleet", "dev", false, lastOutputs);
});

describe("management.serverType against the type the servers run", () => {
  it("stops a changed type before registering anything but the read of its own outputs", async () => {
    const { run, registrations } = await runProgram({ [devServer]: configured }, other);
    await expect(run).rejects.toThrow(new RegExp(`management\\.serverType: "${other}" differs from the type the servers run \\(${devServer}: ${configured}\\)`));
    await expect(run).rejects.toThrow(/docs\/operations\.md, \*Resize the management servers\*/);
    await settle(registrations);
    expect(registrations.map((r) => r.type)).toEqual(["pulumi:pulumi:StackReference"]);
  });

  it("runs the same type, records what the servers run, and a first deployment (nothing recorded)", async () => {
    for (const deployed of [{ [devServer]: configured }, undefined]) {
      const { outputs, registrations } = await runToTheEnd(deployed);
      expect(registrations.filter((r) => r.type === "hcloud:index/server:Server").map((r) => r.inputs.serverType)).toEqual([configured]);
      expect(await valueOf(outputs[stackOutputs.managementServerTypes]!)).toEqual({ [devServer]: configured });
    }
  });
});
