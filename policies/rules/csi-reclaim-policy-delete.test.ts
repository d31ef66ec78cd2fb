import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { tenantLabels } from "../../infra/model/tenant/tenant-cluster";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { at, cloneFixtures, evaluate, fixture } from "../testing/harness";
import { csiReclaimPolicyDelete as rule } from "./csi-reclaim-policy-delete";

const baseline = baselineFleet();
const proxyUrn = (name: string) => `urn:pulumi:test::capi-fleet::${resourceTypes.helmChartProxy}::${name}`;

interface CsiValues {
  storageClasses: { name: string; reclaimPolicy?: string }[];
}

/** The csi-payments valuesTemplate with its StorageClass's reclaimPolicy set to `policy`, put on the fixture `target`. */
function withReclaimPolicy(policy: string, target = "csi-payments") {
  const fleet = cloneFixtures(baseline);
  const csiSpec = at(fixture(fleet, "csi-payments").props, "spec");
  const values = parse(csiSpec.valuesTemplate as string) as CsiValues;
  values.storageClasses[0]!.reclaimPolicy = policy;
  at(fixture(fleet, target).props, "spec").valuesTemplate = stringify(values);
  return fleet;
}

describe("csi-reclaim-policy-delete", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it("advises against a Retain StorageClass", async () => {
    const violations = await evaluate([rule], withReclaimPolicy("Retain"));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ policy: "csi-reclaim-policy-delete", level: "advisory", urn: proxyUrn("csi-payments") });
    expect(violations[0]!.message).toContain('HelmChartProxy tenant-payments/hcloud-csi (tenant "payments"): StorageClass "hcloud-volumes" has reclaimPolicy Retain');
    expect(violations[0]!.message).toContain("set storage.reclaimPolicy: Delete on the tenant");
    expect(violations[0]!.message).toContain("csi-reclaim-policy-delete.exemptClusters");
  });

  it("accepts a StorageClass without reclaimPolicy (the chart defaults to Delete)", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "csi-payments").props, "spec").valuesTemplate = stringify({ storageClasses: [{ name: "hcloud-volumes" }] });
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("accepts Retain for an exempted tenant", async () => {
    expect(await evaluate([rule], withReclaimPolicy("Retain"), { "csi-reclaim-policy-delete": { exemptClusters: ["payments"] } })).toEqual([]);
  });

  it("still advises when another tenant is exempted", async () => {
    const violations = await evaluate([rule], withReclaimPolicy("Retain"), { "csi-reclaim-policy-delete": { exemptClusters: ["analytics"] } });
    expect(violations.map((violation) => violation.urn)).toEqual([proxyUrn("csi-payments")]);
  });

  it("reports at the configured level", async () => {
    const violations = await evaluate([rule], withReclaimPolicy("Retain"), { "csi-reclaim-policy-delete": { enforcementLevel: "mandatory" } });
    expect(violations.map((violation) => violation.level)).toEqual(["mandatory"]);
  });

  it("ignores the same values on the CCM proxy (another chart)", async () => {
    expect(await evaluate([rule], withReclaimPolicy("Retain", "ccm-payments"))).toEqual([]);
  });

  it("accepts Retain for a tenant exempted as namespace/cluster", async () => {
    expect(await evaluate([rule], withReclaimPolicy("Retain"), { "csi-reclaim-policy-delete": { exemptClusters: ["tenant-payments/payments"] } })).toEqual([]);
    expect(await evaluate([rule], withReclaimPolicy("Retain"), { "csi-reclaim-policy-delete": { exemptClusters: ["tenant-analytics/payments"] } })).toHaveLength(1);
  });

  it("reports storageClasses that are not a list", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "csi-payments").props, "spec").valuesTemplate = stringify({ storageClasses: { name: "hcloud-volumes", reclaimPolicy: "Retain" } });
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.message)).toEqual([
      'HelmChartProxy tenant-payments/hcloud-csi (tenant "payments"): valuesTemplate storageClasses is not a list, so its StorageClasses cannot be checked.',
    ]);
  });

  it("accepts values without storageClasses, and a proxy without valuesTemplate (the chart's own StorageClass: Delete)", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "csi-payments").props, "spec").valuesTemplate = stringify({ node: { hostNetwork: false } });
    delete at(fixture(fleet, "csi-analytics").props, "spec").valuesTemplate;
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("names a proxy without namespace as Kubernetes places it (default)", async () => {
    const fleet = withReclaimPolicy("Retain");
    delete at(fixture(fleet, "csi-payments").props, "metadata").namespace;
    expect((await evaluate([rule], fleet)).map((violation) => violation.message)).toEqual([expect.stringContaining("HelmChartProxy default/hcloud-csi (tenant \"payments\")")]);
  });

  it("names only the Retain StorageClass among several, and a nameless one as empty", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "csi-payments").props, "spec").valuesTemplate = stringify({
      storageClasses: [{ name: "fast", reclaimPolicy: "Delete" }, { name: "archive", reclaimPolicy: "Retain" }, { reclaimPolicy: "Retain" }],
    });
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => [violation.urn, /StorageClass (\S+) has reclaimPolicy Retain/.exec(violation.message)?.[1]])).toEqual([
      [proxyUrn("csi-payments"), '"archive"'],
      [proxyUrn("csi-payments"), '""'],
    ]);
  });

  it.each<[string, (spec: Record<string, unknown>) => void]>([
    ["no clusterSelector", (spec) => delete spec.clusterSelector],
    ["a tenant label that is not a string", (spec) => (at(spec, "clusterSelector", "matchLabels")[tenantLabels.tenant] = 7)],
  ])("checks a proxy whose selector names no tenant (%s), names no tenant, and no exemption applies to it", async (_case, change) => {
    const fleet = withReclaimPolicy("Retain");
    change(at(fixture(fleet, "csi-payments").props, "spec"));
    for (const exemptClusters of [[], ["tenant-payments/undefined", "undefined", "7", "tenant-payments/7"]]) {
      const violations = await evaluate([rule], fleet, { "csi-reclaim-policy-delete": { exemptClusters } });
      expect(violations.map((violation) => violation.urn)).toEqual([proxyUrn("csi-payments")]);
      expect(violations[0]!.message.startsWith('HelmChartProxy tenant-payments/hcloud-csi: StorageClass "hcloud-volumes" has reclaimPolicy Retain')).toBe(true);
    }
  });

  it("names a proxy without a name by its namespace alone, never as undefined", async () => {
    const fleet = withReclaimPolicy("Retain");
    delete at(fixture(fleet, "csi-payments").props, "metadata").name;
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.urn)).toEqual([proxyUrn("csi-payments")]);
    expect(violations[0]!.message.startsWith('HelmChartProxy tenant-payments/ (tenant "payments"): StorageClass')).toBe(true);
  });

  it("reports a valuesTemplate that is not YAML", async () => {
    const fleet = cloneFixtures(baseline);
    at(fixture(fleet, "csi-payments").props, "spec").valuesTemplate = "storageClasses: [";
    const violations = await evaluate([rule], fleet);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ policy: "csi-reclaim-policy-delete", level: "advisory", urn: proxyUrn("csi-payments") });
    expect(violations[0]!.message).toContain('HelmChartProxy tenant-payments/hcloud-csi (tenant "payments"): valuesTemplate is not YAML');
    expect(violations[0]!.message).toContain("its StorageClasses cannot be checked");
  });
});
