import { describe, expect, it } from "vitest";
import { allRules } from "../rules";
import { declaredKinds, resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixtureUrn } from "../testing/harness";
import { fleetObjectsDeclared as rule } from "./fleet-objects-declared";

const baseline = baselineFleet();

describe("fleet-objects-declared", () => {
  it("passes the baseline, where every fleet object is declared by its component", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("reports a Cluster created outside the TenantCluster component, and no other stack rule reads it", async () => {
    const fleet = cloneFixtures(baseline);
    // A hand-written Cluster: the engine shows stack rules no outputs for it on a fresh stack.
    const stray = { type: resourceTypes.cluster, name: "stray", props: structuredClone(fleet.find((resource) => resource.name === "cluster-edge")!.props) };
    fleet.push(stray);
    const violations = await evaluate(allRules, fleet);
    expect(violations).toEqual([
      expect.objectContaining({ policy: "fleet-objects-declared", level: "mandatory", urn: fixtureUrn(stray) }),
    ]);
    expect(violations[0]!.message).toContain(`${resourceTypes.cluster} stray is not declared by any capi-fleet component`);
    // The message says which kinds must go through a component, one by one.
    const kinds = /Kinds that must be declared: (.+)\.$/.exec(violations[0]!.message)?.[1]?.split(", ");
    expect(kinds).toEqual(declaredKinds);
    expect(kinds).toContain(resourceTypes.cluster);
  });

  it("reports a component that stopped declaring its child (the ClusterClass)", async () => {
    const fleet = cloneFixtures(baseline);
    fleet.find((resource) => resource.name === "hetzner-cluster-class")!.outputs = {};
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.urn)).toEqual([fixtureUrn({ type: resourceTypes.clusterClass, name: "cluster-class" })]);
  });
});
