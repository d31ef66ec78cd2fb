import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture } from "../testing/harness";
import { managementDeletionProtection as rule } from "./management-deletion-protection";

const baseline = baselineFleet();
const devConfig = JSON.parse(readFileSync(path.join(__dirname, "..", "config", "dev.json"), "utf8")) as Record<string, unknown>;

/** The baseline with deleteProtection on the fixture `name` set to `value`. */
function withDeleteProtection(name: string, value: unknown) {
  const fleet = cloneFixtures(baseline);
  fixture(fleet, name).props.deleteProtection = value;
  return fleet;
}

describe("management-deletion-protection", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each([
    ["server-1", resourceTypes.hcloudServer, 'Management server "capi-fleet-prod-mgmt-1"'],
    ["api-lb", resourceTypes.hcloudLoadBalancer, 'Management API load balancer "capi-fleet-prod-mgmt-api"'],
  ])("reports %s without deletion protection", async (name, type, subject) => {
    const violations = await evaluate([rule], withDeleteProtection(name, false));
    expect(violations).toEqual([
      {
        policy: "management-deletion-protection",
        level: "mandatory",
        urn: `urn:pulumi:test::capi-fleet::${type}::${name}`,
        message: `${subject} has no deletion protection (deleteProtection is false); set management.deletionProtection: true.`,
      },
    ]);
  });

  it("reports a server whose deleteProtection is unset", async () => {
    const fleet = cloneFixtures(baseline);
    delete fixture(fleet, "server-1").props.deleteProtection;
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.message).toContain("(deleteProtection is undefined)");
  });

  it("is disabled by the dev stack's config", async () => {
    expect(devConfig["management-deletion-protection"]).toBe("disabled");
    expect(await evaluate([rule], withDeleteProtection("server-1", false), devConfig)).toEqual([]);
  });

  it.each([
    ["disabled", []],
    ["advisory", ["advisory"]],
    ["mandatory", ["mandatory"]],
  ])("reports at the level %j set in config", async (level, expected) => {
    const violations = await evaluate([rule], withDeleteProtection("api-lb", false), { "management-deletion-protection": level });
    expect(violations.map((violation) => violation.level)).toEqual(expected);
  });
});
