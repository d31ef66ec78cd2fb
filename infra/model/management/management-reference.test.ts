import { describe, expect, it } from "vitest";
import { clusterClassNamespace } from "../platform/hetzner-cluster-class";
import { shardMarker, shardMarkerName } from "./management-reference";

// A shard stack's marker in the management cluster, as plain data; the shard program that
// registers it runs under mocks in infra/shard.test.ts.

/** A DNS label (RFC 1123): what Kubernetes accepts as the ConfigMap's name. */
const dnsLabel = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

describe("shardMarkerName", () => {
  it("names the marker after the stack's own name, not its organization or project", () => {
    expect(shardMarkerName("organization/capi-fleet/prod-shard-a")).toBe("capi-fleet-shard-prod-shard-a");
    expect(shardMarkerName("prod-shard-a")).toBe("capi-fleet-shard-prod-shard-a");
  });

  it("makes any stack name a DNS label: lower case, other characters as one dash each run, no dash at the end", () => {
    expect(shardMarkerName("org/proj/Prod_Shard..B")).toBe("capi-fleet-shard-prod-shard-b");
    expect(shardMarkerName("org/proj/shard-")).toBe("capi-fleet-shard-shard");
    expect(shardMarkerName("org/proj/shard_!")).toBe("capi-fleet-shard-shard");
    expect(shardMarkerName("org/proj/shard--")).toBe("capi-fleet-shard-shard");
    for (const stack of ["o/p/a", "o/p/Z9", "o/p/x--y", "o/p/ÄÖÜ-shard", "o/p/shard.2026"]) expect(shardMarkerName(stack), stack).toMatch(dnsLabel);
  });

  it("cuts a long name to 63 characters without leaving a dash at the cut", () => {
    const long = shardMarkerName(`org/proj/${"a".repeat(60)}`);
    expect(long).toBe(`capi-fleet-shard-${"a".repeat(63 - "capi-fleet-shard-".length)}`);
    expect(long).toMatch(dnsLabel);
    const atDash = shardMarkerName(`org/proj/${"a".repeat(45)}---${"b".repeat(30)}`);
    expect(atDash).toBe(`capi-fleet-shard-${"a".repeat(45)}`);
    expect(atDash).toMatch(dnsLabel);
  });
});

describe("shardMarker", () => {
  const spec = {
    managementStack: "organization/capi-fleet/prod",
    shardStack: "organization/capi-fleet/prod-shard-a",
    tenants: [
      { name: "analytics", namespace: "tenant-analytics", kubernetesVersion: "v1.35.3" },
      { name: "edge", namespace: "tenant-edge" },
    ],
  };

  it("is the shard's labelled ConfigMap in the ClusterClass's namespace, naming both stacks", () => {
    const marker = shardMarker(spec);
    expect(marker.metadata).toEqual({
      name: shardMarkerName(spec.shardStack),
      namespace: clusterClassNamespace,
      labels: { "capi-fleet.io/shard": "true" },
      annotations: { "capi-fleet.io/management-stack": spec.managementStack, "capi-fleet.io/shard-stack": spec.shardStack },
    });
  });

  it("lists the shard's tenants by name and namespace, nothing else of them", () => {
    expect(JSON.parse(shardMarker(spec).data.tenants)).toEqual([
      { name: "analytics", namespace: "tenant-analytics" },
      { name: "edge", namespace: "tenant-edge" },
    ]);
    expect(JSON.parse(shardMarker({ ...spec, tenants: [] }).data.tenants)).toEqual([]);
  });
});
