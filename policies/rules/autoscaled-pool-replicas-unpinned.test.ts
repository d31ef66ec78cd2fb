import { describe, expect, it } from "vitest";
import { autoscalerAnnotations } from "../../infra/model/platform/cluster-autoscaler";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { autoscaledPoolReplicasUnpinned as rule } from "./autoscaled-pool-replicas-unpinned";

const baseline = baselineFleet();
type Md = { name: string; replicas?: number; metadata?: { annotations?: Record<string, string> } };
const deploymentsOf = (fleet: ReturnType<typeof cloneFixtures>, tenant: string) =>
  at(at(fixture(fleet, `cluster-${tenant}`).props, "spec", "topology"), "workers").machineDeployments as Md[];

describe("autoscaled-pool-replicas-unpinned", () => {
  it("passes the baseline, which has an autoscaled pool (prod's analytics md-0)", async () => {
    const autoscaled = deploymentsOf(cloneFixtures(baseline), "analytics").filter((md) => md.metadata?.annotations?.[autoscalerAnnotations.maxSize] !== undefined);
    expect(autoscaled.map((md) => md.replicas)).toEqual([undefined]);
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("refuses replicas on an autoscaled pool, as a Cluster that bypassed the config validation declares it", async () => {
    const fleet = cloneFixtures(baseline);
    deploymentsOf(fleet, "analytics")[0]!.replicas = 3;
    const violations = await evaluate([rule], fleet);
    expect(violations).toEqual([expect.objectContaining({ policy: "autoscaled-pool-replicas-unpinned", level: "mandatory" })]);
    expect(violations[0]!.message).toContain(`tenant "analytics" (Cluster tenant-analytics/analytics): MachineDeployment "md-0" has the autoscaler's ${autoscalerAnnotations.minSize} and ${autoscalerAnnotations.maxSize} annotations and replicas: 3`);
  });

  it("refuses replicas next to either bound alone", async () => {
    const fleet = cloneFixtures(baseline);
    const [md] = deploymentsOf(fleet, "analytics");
    md!.replicas = 2;
    md!.metadata = { annotations: { [autoscalerAnnotations.maxSize]: "6" } };
    expect((await evaluate([rule], fleet)).map((v) => v.policy)).toEqual(["autoscaled-pool-replicas-unpinned"]);
  });

  it("accepts replicas on a pool without the autoscaler's annotations", async () => {
    const fleet = cloneFixtures(baseline);
    const [md] = deploymentsOf(fleet, "analytics");
    md!.replicas = 2;
    delete md!.metadata;
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
