import { describe, expect, it } from "vitest";
import { readStackConfig } from "../../../tests/support/stack-files";
import type { TenantSettings } from "../config/fleet-config";
import { deployedImmutablesFrom, immutableChanges, tenantImmutables, tenantImmutablesOutput, type TenantImmutables } from "./tenant-immutables";
import { parseFleetConfig } from "../stack/validate-fleet-config";

/** The prod stack's validated tenants: payments (kube-proxy replaced), analytics, edge. */
const prodTenants = (): readonly TenantSettings[] => {
  const { values, secretKeys } = readStackConfig("prod");
  return parseFleetConfig({ stack: "prod", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true }).tenants;
};

/** A copy of `tenant` with the value at a config key path below `tenants[i]` ("network.nodesCidr", "regions[0]") replaced. */
function edited(tenant: TenantSettings, keyPath: string, value: unknown): TenantSettings {
  const copy = structuredClone(tenant) as unknown as Record<string, unknown>;
  const steps = keyPath.replaceAll(/\[(\d+)\]/g, ".$1").split(".");
  let at: Record<string, unknown> = copy;
  for (const step of steps.slice(0, -1)) {
    at[step] ??= {};
    at = at[step] as Record<string, unknown>;
  }
  at[steps.at(-1)!] = value;
  return copy as unknown as TenantSettings;
}

/** What the stack output holds after a round trip through the state (plain JSON). */
const deployedFrom = (tenants: readonly TenantSettings[]) => deployedImmutablesFrom(JSON.parse(JSON.stringify(tenantImmutablesOutput(tenants))));

describe("the immutable settings a tenant records", () => {
  it("come back from the stack output as recorded, and the same config changes nothing", () => {
    const tenants = prodTenants();
    const { immutables, ignored } = deployedFrom(tenants);
    expect(ignored).toEqual([]);
    expect([...immutables.keys()]).toEqual(tenants.map((tenant) => tenant.name));
    for (const tenant of tenants) expect(immutables.get(tenant.name)).toEqual(tenantImmutables(tenant));
    expect(immutableChanges(tenants, immutables)).toEqual([]);
  });

  it("hold the values the cluster was built with: namespace (the name by default), the nodes' first /24, the first region, the kube-proxy mode", () => {
    const [payments, analytics] = prodTenants();
    expect(tenantImmutables(payments!)).toEqual({
      namespace: payments!.namespace,
      nodesCidr: payments!.network.nodesCidr,
      nodesSubnetCidr: "10.10.0.0/24",
      podsCidr: payments!.network.podsCidr,
      servicesCidr: payments!.network.servicesCidr,
      firstRegion: payments!.regions[0],
      kubeProxyReplacement: true,
      kubeProxyMode: "disabled",
    });
    const plain = tenantImmutables({ ...analytics!, namespace: undefined, network: { ...analytics!.network, nodesSubnetCidr: "10.20.7.0/24" } });
    expect(plain).toMatchObject({ namespace: analytics!.name, nodesSubnetCidr: "10.20.7.0/24", kubeProxyReplacement: false, kubeProxyMode: "iptables" });
  });
});

describe("immutableChanges", () => {
  // Each immutable config key, with another valid value.
  const changes: [keyPath: string, value: unknown][] = [
    ["namespace", "tenant-analytics-2"],
    ["network.nodesCidr", "10.21.0.0/16"],
    ["network.nodesSubnetCidr", "10.20.1.0/24"],
    ["network.podsCidr", "10.66.0.0/16"],
    ["network.servicesCidr", "10.98.0.0/16"],
    ["regions[0]", "fsn1"],
    ["kubeProxy.mode", "disabled"],
  ];

  it.each(changes)("refuses a change of %s at that key path of the tenant, naming both values and why", (keyPath, value) => {
    const tenants = prodTenants();
    const { immutables } = deployedFrom(tenants);
    const index = tenants.findIndex((tenant) => tenant.name === "analytics");
    const changed = tenants.map((tenant, i) => (i === index ? edited(tenant, keyPath, value) : tenant));
    const found = immutableChanges(changed, immutables);
    // The default subnet (the first /24 of nodesCidr) moves with the nodes' range: both are reported.
    const also = keyPath === "network.nodesCidr" ? ["network.nodesSubnetCidr"] : [];
    expect(found.map((change) => change.path)).toEqual([keyPath, ...also].map((key) => `tenants[${index}].${key}`));
    const before = immutables.get("analytics")![keyPath === "kubeProxy.mode" ? "kubeProxyMode" : keyPath === "regions[0]" ? "firstRegion" : (keyPath.replace("network.", "") as keyof TenantImmutables)];
    const message = found[0]!.message;
    expect(message.indexOf(JSON.stringify(value))).toBe(0);
    expect(message).toContain(`deployed ${JSON.stringify(before)}`);
    expect(message).toContain(`keep ${JSON.stringify(before)}`);
    // A reason follows "cannot change once the cluster exists:".
    expect(/cannot change once the cluster exists: [^;]{10,};/.test(message), message).toBe(true);
  });

  it("reports a kube-proxy change once, by the mode; by kubeProxyReplacement only against records without the mode", () => {
    const tenants = prodTenants();
    const { immutables } = deployedFrom(tenants);
    const payments = tenants.findIndex((tenant) => tenant.name === "payments");
    const changed = tenants.map((tenant, i) => (i === payments ? edited(tenant, "kubeProxy.mode", "iptables") : tenant));
    expect(immutableChanges(changed, immutables).map((change) => change.path)).toEqual([`tenants[${payments}].kubeProxy.mode`]);
    const { kubeProxyMode: _mode, ...older } = immutables.get("payments")!;
    const oldRecords = new Map(immutables).set("payments", older);
    expect(immutableChanges(changed, oldRecords).map((change) => change.path)).toEqual([`tenants[${payments}].cni.kubeProxyReplacement`]);
    expect(immutableChanges(changed, oldRecords)[0]!.message).toMatch(/^false differs from the deployed true/);
  });

  it("compares no namespace against a record written before namespaces were recorded, and nothing for a new tenant", () => {
    const tenants = prodTenants();
    const { immutables } = deployedFrom(tenants);
    const { namespace: _namespace, ...older } = immutables.get("edge")!;
    const edge = tenants.findIndex((tenant) => tenant.name === "edge");
    const moved = tenants.map((tenant, i) => (i === edge ? edited(tenant, "namespace", "elsewhere") : tenant));
    expect(immutableChanges(moved, new Map(immutables).set("edge", older))).toEqual([]);
    expect(immutableChanges(moved, new Map([...immutables].filter(([name]) => name !== "edge")))).toEqual([]);
  });
});

describe("deployedImmutablesFrom", () => {
  const recorded = () => JSON.parse(JSON.stringify(tenantImmutablesOutput(prodTenants()))) as Record<string, Record<string, unknown>>;

  it("reads nothing from a stack without the output", () => {
    for (const output of [undefined, null]) expect(deployedImmutablesFrom(output)).toEqual({ immutables: new Map(), ignored: [] });
  });

  it("ignores the whole output when it is not a mapping", () => {
    for (const output of [[recorded()], "text", 3]) {
      const { immutables, ignored } = deployedImmutablesFrom(output);
      expect(immutables.size).toBe(0);
      // The warning (infra/deployed-state.ts) lists these: it must say what was wrong.
      expect(ignored).toEqual([expect.stringMatching(/whole output is not a mapping/)]);
    }
  });

  it("skips and names each malformed entry, keeping the others", () => {
    const cases: Record<string, unknown>[] = [
      ...(["nodesCidr", "nodesSubnetCidr", "podsCidr", "servicesCidr", "firstRegion", "kubeProxyReplacement"] as const).map((field) => ({ [field]: undefined })),
      { nodesCidr: 10 },
      { firstRegion: null },
      { kubeProxyReplacement: "true" },
      { namespace: 3 },
      { kubeProxyMode: false },
    ];
    for (const change of cases) {
      const output = recorded();
      output.analytics = { ...output.analytics, ...change };
      const { immutables, ignored } = deployedImmutablesFrom(output);
      expect(ignored, JSON.stringify(change)).toEqual(["analytics"]);
      expect([...immutables.keys()]).toEqual(["payments", "edge"]);
    }
    for (const entry of [null, "10.0.0.0/16", 7]) {
      const output: Record<string, unknown> = recorded();
      output.edge = entry;
      expect(deployedImmutablesFrom(output).ignored).toEqual(["edge"]);
    }
  });

  it("accepts records without the fields added later (namespace, kube-proxy mode)", () => {
    const output = recorded();
    delete output.payments!.namespace;
    delete output.payments!.kubeProxyMode;
    const { immutables, ignored } = deployedImmutablesFrom(output);
    expect(ignored).toEqual([]);
    expect(immutables.get("payments")).toEqual(output.payments);
  });
});
