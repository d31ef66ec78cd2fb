import { beforeAll, describe, expect, it } from "vitest";
import { byType, runStack, waitsFor } from "../tests/support/fleet-run";
import { type Registration } from "../tests/support/pulumi-mocks";
import { readStackConfig } from "../tests/support/stack-files";
import { catalog } from "./model/versions/catalog";

// The cluster autoscaler each prod tenant with an autoscaled pool gets, under mocks: where it is
// installed, what it waits for, and that no kubeconfig reaches its values.

const releaseType = "kubernetes:helm.sh/v3:Release";
const clusterType = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster";
const commandType = "command:local:Command";

interface StackTenant {
  name: string;
  namespace: string;
  workers: { autoscaling?: unknown }[];
}
const prodTenants = JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as StackTenant[];

describe("the prod tenants' cluster autoscalers", () => {
  let registrations: Registration[];
  const autoscalerReleases = () => byType(registrations, releaseType).filter((r) => (r.inputs.chart as string) === catalog.clusterAutoscaler.chart.chart);
  const ofTenant = (tenant: string, list: Registration[]) => list.filter((r) => r.urn.includes(`tenant-${tenant}`));

  beforeAll(async () => {
    ({ registrations } = await runStack("prod"));
  });

  it("installs one autoscaler per tenant with an autoscaled pool, in its namespace, and none for the others", () => {
    const expected = prodTenants.filter((t) => t.workers.some((w) => w.autoscaling !== undefined));
    expect(expected.length, "prod has a tenant with an autoscaled pool").toBeGreaterThan(0);
    expect(expected.length, "prod has a tenant without one").toBeLessThan(prodTenants.length);
    const releases = autoscalerReleases();
    expect(releases.map((r) => r.inputs.namespace).sort()).toEqual(expected.map((t) => t.namespace).sort());
    for (const tenant of expected) {
      const [release] = ofTenant(tenant.name, releases);
      expect(release, tenant.name).toBeDefined();
      // Discovery scoped to this tenant's Cluster in its namespace.
      expect(release!.inputs.values).toMatchObject({ autoDiscovery: { clusterName: tenant.name, namespace: tenant.namespace } });
    }
  });

  it("waits for the tenant's Cluster and for the command that waits for CAPI's kubeconfig Secret, so Pulumi deletes it first", () => {
    for (const release of autoscalerReleases()) {
      const tenant = prodTenants.find((t) => release.inputs.namespace === t.namespace)!;
      const cluster = ofTenant(tenant.name, byType(registrations, clusterType))[0]!;
      const kubeconfigCommand = ofTenant(tenant.name, byType(registrations, commandType)).find((r) => r.name.endsWith("-kubeconfig"))!;
      expect(waitsFor(registrations, release, cluster), "release waits for the Cluster").toBe(true);
      expect(waitsFor(registrations, release, kubeconfigCommand), "release waits for the kubeconfig command").toBe(true);
      // Its RBAC too: the Role and RoleBinding are in place before the release's pod starts.
      for (const type of ["kubernetes:rbac.authorization.k8s.io/v1:Role", "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "kubernetes:core/v1:ServiceAccount"]) {
        const [rbac] = ofTenant(tenant.name, byType(registrations, type));
        expect(rbac, type).toBeDefined();
        expect((rbac!.inputs.metadata as { namespace: string }).namespace).toBe(tenant.namespace);
        expect(waitsFor(registrations, release, rbac!), `release waits for ${type}`).toBe(true);
        expect(waitsFor(registrations, rbac!, kubeconfigCommand), `${type} waits for the kubeconfig command`).toBe(true);
      }
    }
  });

  it("mounts CAPI's kubeconfig Secret by name only: the values are no secret and hold no kubeconfig", () => {
    for (const release of autoscalerReleases()) {
      const tenant = prodTenants.find((t) => release.inputs.namespace === t.namespace)!;
      // The Secret the program itself reads for the tenant's kubeconfig output.
      const kubeconfigRead = ofTenant(tenant.name, byType(registrations, "kubernetes:core/v1:Secret")).find((r) => r.readId)!;
      expect(release.inputs.values).toMatchObject({ clusterAPIKubeconfigSecret: kubeconfigRead.readId!.split("/")[1] });
      expect(release.secretInputs).toEqual([]);
      // The mocks' kubeconfig Secret holds a stand-in kubeconfig naming its cluster; none of it is in the values.
      const values = JSON.stringify(release.inputs.values);
      expect(values).not.toMatch(/stand-in kubeconfig|apiVersion|client-key|token/i);
    }
  });
});
