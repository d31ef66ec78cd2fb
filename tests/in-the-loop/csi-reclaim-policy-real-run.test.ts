// The csi-reclaim-policy-delete rule on what the program really registers: validation accepts a
// Retain reclaim policy, so only the rule stands between it and orphaned Hetzner volumes. Kept out
// of the rule's unit test file, which mutation testing's quick pass runs for every mutant it covers.
import { expect, it } from "vitest";
import { evaluate } from "../../policies/testing/harness";
import { csiReclaimPolicyDelete as rule } from "../../policies/rules/csi-reclaim-policy-delete";
import { runStack } from "../support/fleet-run";
import { engineViewOfRegistrations } from "../support/policy-resources";

it("fires in a real run: the prod program with one tenant's storage.reclaimPolicy Retain, which validation accepts", async () => {
  const { registrations } = await runStack("prod", (values) => {
    const tenants = JSON.parse(values["capi-fleet:tenants"]!) as { name: string; storage?: Record<string, unknown> }[];
    tenants[1]!.storage = { ...tenants[1]!.storage, reclaimPolicy: "Retain" };
    values["capi-fleet:tenants"] = JSON.stringify(tenants);
  });
  const violations = await evaluate([rule], engineViewOfRegistrations(registrations));
  expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining('(tenant "analytics"): StorageClass "hcloud-volumes" has reclaimPolicy Retain')]);
}, 120_000);
