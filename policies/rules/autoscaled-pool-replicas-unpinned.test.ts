import { describe, expect, it } from "vitest";
import { autoscalerAnnotations } from "../../infra/model/platform/cluster-autoscaler";
import { karpenterCpuLimitAnnotation, poolCapacityAnnotations } from "../../infra/model/platform/karpenter";
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

  describe("a Karpenter pool (its topology as tenant-cluster.ts writes it)", () => {
    const karpenterPool = { name: "md-0", machineType: "cx33", autoscaling: { provider: "karpenter" as const, cpuLimit: 16, expireAfter: "720h", consolidation: { policy: "WhenEmpty", after: "30s" } } };
    const asKarpenter = (md: Md, replicas?: number) => {
      md.metadata = { annotations: poolCapacityAnnotations(karpenterPool) };
      if (replicas === undefined) delete md.replicas;
      else md.replicas = replicas;
    };

    it("passes unpinned", async () => {
      const fleet = cloneFixtures(baseline);
      asKarpenter(deploymentsOf(fleet, "analytics")[0]!);
      expect(await evaluate([rule], fleet)).toEqual([]);
    });

    it("refuses pinned replicas, naming Karpenter's mark", async () => {
      const fleet = cloneFixtures(baseline);
      asKarpenter(deploymentsOf(fleet, "analytics")[0]!, 0);
      const violations = await evaluate([rule], fleet);
      expect(violations).toEqual([expect.objectContaining({ policy: "autoscaled-pool-replicas-unpinned", level: "mandatory" })]);
      expect(violations[0]!.message).toContain(`tenant "analytics" (Cluster tenant-analytics/analytics): MachineDeployment "md-0" is sized by Karpenter (annotation ${karpenterCpuLimitAnnotation}) and has replicas: 0`);
    });

    it("refuses pinned replicas next to the mark alone, and not next to Karpenter's capacity annotations without it", async () => {
      const fleet = cloneFixtures(baseline);
      const [md] = deploymentsOf(fleet, "analytics");
      md!.replicas = 1;
      md!.metadata = { annotations: { [karpenterCpuLimitAnnotation]: "16" } };
      expect((await evaluate([rule], fleet)).map((v) => v.policy)).toEqual(["autoscaled-pool-replicas-unpinned"]);
      const { [karpenterCpuLimitAnnotation]: _mark, ...capacityOnly } = poolCapacityAnnotations(karpenterPool);
      md!.metadata = { annotations: capacityOnly };
      expect(await evaluate([rule], fleet)).toEqual([]);
    });
  });

  it("accepts replicas on a pool without the autoscaler's annotations", async () => {
    const fleet = cloneFixtures(baseline);
    const [md] = deploymentsOf(fleet, "analytics");
    md!.replicas = 2;
    delete md!.metadata;
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
