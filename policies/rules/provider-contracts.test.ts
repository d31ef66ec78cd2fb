import { describe, expect, it } from "vitest";
import { baselineFleet, shardFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { providerContracts as rule } from "./provider-contracts";
import { componentOutputs } from "../../infra/model/contract/outputs";

const baseline = baselineFleet();

/** The imported props of a platform fixture in a shard stack (what the management stack declared). */
function imported(fleet: ReturnType<typeof shardFleet>, name: string): Record<string, unknown> {
  const entries = fixture(fleet, "management").outputs![componentOutputs.imported] as { urn: string; props: Record<string, unknown> }[];
  return entries.find((entry) => entry.urn.endsWith(`::${name}`))!.props;
}


function withVersion(name: string, version: string) {
  const fleet = cloneFixtures(baseline);
  const props = fixture(fleet, name).props;
  if (name === "caren-release") props.version = version;
  else at(props, "spec").version = version;
  return fleet;
}

describe("provider-contracts", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("refuses CAPH v1.1.x on a Cluster API that no longer serves v1beta1", async () => {
    const violations = await evaluate([rule], withVersion("core-provider", "v1.16.0"));
    expect(violations.map((v) => v.policy)).toEqual(["provider-contracts", "provider-contracts"]);
    expect(violations[0]!.message).toContain("CAPH v1.1.8 speaks only the v1beta1 contract, which Cluster API v1.16.0 no longer serves (removed in v1.16.0)");
    expect(violations[1]!.message).toContain("CAPH v1.1.8 supports Cluster API v1.10–v1.13, not v1.16.0");
  });

  it("refuses a Cluster API outside CAPH's supported range", async () => {
    const violations = await evaluate([rule], withVersion("core-provider", "v1.14.2"));
    expect(violations).toHaveLength(1);
    expect(violations[0]!.message).toContain("CAPH v1.1.8 supports Cluster API v1.10–v1.13, not v1.14.2");
  });

  it("refuses CAREN ≥ v0.45 on a Cluster API older than v1.12", async () => {
    const violations = await evaluate([rule], withVersion("core-provider", "v1.11.11"));
    expect(violations).toEqual([expect.objectContaining({ policy: "provider-contracts", level: "mandatory" })]);
    expect(violations[0]!.message).toContain("CAREN v0.50.0 needs Cluster API ≥ v1.12.0 (it is built on it), found v1.11.11");
  });

  it("lets an older CAREN run on that Cluster API", async () => {
    const fleet = withVersion("core-provider", "v1.11.11");
    fixture(fleet, "caren-release").props.version = "v0.41.8";
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("allows a CAPH that speaks v1beta2 on a Cluster API without v1beta1 (CAPI range aside)", async () => {
    const fleet = withVersion("core-provider", "v1.16.0");
    at(fixture(fleet, "hetzner-provider").props, "spec").version = "v1.2.0";
    const violations = await evaluate([rule], fleet);
    expect(violations.map((v) => v.message).join()).not.toContain("v1beta1");
  });

  it("leaves a shard stack's imported platform to the management stack that installs it", async () => {
    const fleet = shardFleet();
    at(imported(fleet, "core-provider"), "spec").version = "v1.16.0";
    expect(await evaluate([rule], fleet)).toEqual([]);
  });
});
