import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { runProgramAgain } from "../tests/support/fleet-run";
import { settle } from "../tests/support/pulumi-mocks";
import { installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { catalog } from "./model/versions/catalog";
import { stackOutputs } from "./model/contract/outputs";

// The whole program, fed its own last outputs through the StackReference it reads: plans
// start from what runs, and an impossible one stops the program before anything else is
// registered.

const [oldest, middle, newest] = catalog.tenantKubernetesVersions;

// One mock monitor for every run: a monitor swapped mid-run would not know the URNs of
// the previous run's late output registrations.
const lastOutputs: Record<string, unknown> = {};
let allRegistrations: Registration[] = [];

async function runProgram(
  previousTenantVersions: unknown,
  tenantVersion?: string,
  previousTenantImmutables?: unknown,
  changeTenant?: (tenant: Record<string, unknown>) => void,
): Promise<{ registrations: Registration[]; run: Promise<Record<string, pulumi.Output<unknown>>> }> {
  lastOutputs[stackOutputs.tenantVersions] = previousTenantVersions;
  lastOutputs[stackOutputs.tenantImmutables] = previousTenantImmutables;
  return runProgramAgain("dev", allRegistrations, (values) => {
    if (!tenantVersion && !changeTenant) return;
    const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Record<string, unknown>[];
    if (tenantVersion) tenants[0]!.kubernetesVersion = tenantVersion;
    changeTenant?.(tenants[0]!);
    values["capi-fleet:tenants"] = JSON.stringify(tenants);
  });
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
    expect(await valueOf(outputs[stackOutputs.tenantVersions]!)).toEqual({
      "dev-a": { deployed: null, target: middle, controlPlaneSteps: [], workerSteps: [] },
    });
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
  });

  it("plans from the version the last update deployed: two minors behind walks both minors, workers roll once", async () => {
    const { run, registrations } = await runProgram({ "dev-a": { deployed: null, target: oldest } }, newest);
    const outputs = await run;
    expect(await valueOf(outputs[stackOutputs.tenantVersions]!)).toEqual({
      "dev-a": { deployed: oldest, target: newest, controlPlaneSteps: [middle, newest], workerSteps: [newest] },
    });
    const stackReference = registrations.find((r) => r.type === "pulumi:pulumi:StackReference");
    expect(stackReference?.inputs).toEqual({ name: "organization/capi-fleet/dev" });
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
  });
});

describe("settings a tenant cannot change once it exists", () => {
  /** The dev stack's outputs after an update (what the next run reads back), and what that first run registered. */
  async function deployedOutputs(): Promise<{ versions: unknown; immutables: unknown; registrations: Registration[] }> {
    const { run, registrations } = await runProgram(undefined);
    const outputs = await run;
    const [versions, immutables] = await Promise.all([valueOf(outputs[stackOutputs.tenantVersions]!), valueOf(outputs[stackOutputs.tenantImmutables]!)]);
    await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
    await settle(registrations);
    // A copy: the next run empties the shared list.
    return { versions, immutables, registrations: [...registrations] };
  }

  /**
   * What a run registered, in a form two runs can be compared by: each resource's URN and options (a
   * provider by its URN, without the run's mock ID). Inputs differ between runs: the program generates
   * its PKI afresh.
   */
  const registered = (registrations: readonly Registration[]) =>
    registrations
      .map((r) => ({ urn: r.urn, parent: r.parent, secretInputs: r.secretInputs, dependencies: [...r.dependencies].sort(), provider: r.provider.replace(/::[^:]*$/, ""), protect: r.protect }))
      .sort((a, b) => a.urn.localeCompare(b.urn));
  const tenantClusters = (registrations: readonly Registration[]) => registrations.filter((r) => r.type === "kubernetes:cluster.x-k8s.io/v1beta2:Cluster");

  it.each([
    ["its nodes network", (t: Record<string, unknown>) => (t.network = { nodesCidr: "10.1.0.0/16" }), "tenants[0].network.nodesCidr", '"10.0.0.0/16"'],
    ["its pods range", (t: Record<string, unknown>) => (t.network = { podsCidr: "172.20.0.0/16" }), "tenants[0].network.podsCidr", '"192.168.0.0/16"'],
    ["its first region", (t: Record<string, unknown>) => { t.regions = ["nbg1"]; (t.workers as Record<string, unknown>[])[0]!.failureDomain = "nbg1"; }, "tenants[0].regions[0]", '"fsn1"'],
    ["its kube-proxy mode", (t: Record<string, unknown>) => (t.cni = { provider: "cilium", kubeProxyReplacement: true }), "tenants[0].kubeProxy.mode", '"iptables"'],
    ["its kube-proxy mode (kubeProxy.mode)", (t: Record<string, unknown>) => (t.kubeProxy = { mode: "nftables" }), "tenants[0].kubeProxy.mode", '"iptables"'],
    ["its namespace", (t: Record<string, unknown>) => (t.namespace = "dev-a-renamed"), "tenants[0].namespace", '"dev-a"'],
  ])("refuses a change of %s against the deployed value, before registering anything but the read of its own outputs", async (_what, change, path, deployedValue) => {
    const deployed = await deployedOutputs();
    const { run, registrations } = await runProgram(deployed.versions, undefined, deployed.immutables, change);
    const error = await run.then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toContain(`  - ${path}: `);
    expect(error?.message).toContain(`differs from the deployed ${deployedValue}`);
    expect(error?.message).toContain("create a new tenant (another name and namespace)");
    await settle(registrations);
    expect(registrations.map((r) => r.type)).toEqual(["pulumi:pulumi:StackReference"]);
  });

  it("accepts the same settings again, and tenants deployed before the settings were recorded", async () => {
    // The first run has no deployed state at all: what the program registers for a new stack.
    const deployed = await deployedOutputs();
    const clusters = tenantClusters(deployed.registrations);
    expect(clusters.map((r) => (r.inputs["metadata"] as { name?: string } | undefined)?.name)).toEqual(["dev-a"]);
    for (const immutables of [deployed.immutables, undefined]) {
      const { run, registrations } = await runProgram(deployed.versions, undefined, immutables);
      // Runs to the end: a refused setting would reject with the config problem.
      const outputs = await run;
      await Promise.all(Object.values(outputs).map((output) => valueOf(output)));
      await settle(registrations);
      // The deployed state was read: the tenant plans from the version it runs.
      expect(await valueOf(outputs[stackOutputs.tenantVersions]!)).toEqual({
        "dev-a": { deployed: middle, target: middle, controlPlaneSteps: [], workerSteps: [] },
      });
      // And registers what the first run registered, the tenant's Cluster as it was.
      const what = immutables === undefined ? "without recorded settings" : "with the recorded settings";
      expect(registered(registrations), what).toEqual(registered(deployed.registrations));
      expect(tenantClusters(registrations).map((r) => r.inputs), what).toEqual(clusters.map((r) => r.inputs));
      expect(await valueOf(outputs[stackOutputs.tenantImmutables]!)).toEqual(deployed.immutables);
    }
  });
});
