import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { chartEnvironment, loadBalancerPlacement, locationAnnotation, networkZoneAnnotation } from "../../../tests/support/hcloud-ccm-load-balancer";
import { controllerConfiguration, renderedEnvironment, renderedNetworking, resolvedEnvironment, variablesTheControllerReads } from "../../../tests/support/hcloud-ccm-config";
import { readStackConfig } from "../../../tests/support/stack-files";
import { hcloudCcmSecretName, hcloudCcmValues } from "./hcloud-ccm-values";
import { classVariables } from "./hetzner-cluster-class";
import { hcloudCcmProxy, tenantTopologyVariables, type TenantClusterSettings } from "../tenant/tenant-cluster";
import { parseFleetConfig } from "../stack/validate-fleet-config";

// The tenants' hcloud CCM, run through the controller's own rules (tests/support/hcloud-ccm-load-balancer.ts,
// ported from hcloud-cloud-controller-manager): a LoadBalancer Service without annotations must
// get a load balancer, in the network zone of the private network CAPH creates for the tenant.

function tenantsOf(stack: string): TenantClusterSettings[] {
  const { values, secretKeys } = readStackConfig(stack);
  const config = parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
  return config.tenants.map(({ hcloudToken: _token, ...tenant }) => tenant);
}

const environmentOf = (tenant: TenantClusterSettings) =>
  chartEnvironment(parse(hcloudCcmProxy(tenant).spec.valuesTemplate as string) as { env?: Record<string, unknown> });

/** The zone CAPH creates the tenant's network subnet in (the ClusterClass's `network` variable). */
const networkZoneOfCluster = (tenant: TenantClusterSettings) =>
  (tenantTopologyVariables(tenant).find((variable) => variable.name === classVariables.network)?.value as { networkZone: string }).networkZone;

const tenants = [...tenantsOf("dev"), ...tenantsOf("prod")];

describe("the tenants' hcloud CCM and LoadBalancer Services", () => {
  it.each(tenants.map((tenant) => [tenant.name, tenant] as const))("%s: a Service without annotations gets a load balancer in its network's zone", (_name, tenant) => {
    expect(loadBalancerPlacement(environmentOf(tenant))).toEqual({ networkZone: networkZoneOfCluster(tenant) });
  });

  it("a Service can pick its own location or zone with the controller's annotations", () => {
    const env = environmentOf(tenants[0]!);
    expect(loadBalancerPlacement(env, { [locationAnnotation]: "hel1" })).toEqual({ location: "hel1" });
    expect(loadBalancerPlacement(env, { [networkZoneAnnotation]: "us-east" })).toEqual({ networkZone: "us-east" });
  });

  it("negative control: without a default the controller refuses a Service that has no annotation", () => {
    const env = environmentOf(tenants[0]!);
    const withoutDefaults = new Map([...env].filter(([name]) => !name.startsWith("HCLOUD_LOAD_BALANCERS_") || name.endsWith("USE_PRIVATE_IP")));
    expect(loadBalancerPlacement(withoutDefaults)).toEqual({ error: expect.stringContaining(`neither ${locationAnnotation} nor ${networkZoneAnnotation} set`) });
    expect(loadBalancerPlacement(new Map([...env, ["HCLOUD_LOAD_BALANCERS_LOCATION", "fsn1"]]))).toEqual({ error: expect.stringContaining("only one of them can be set") });
  });
});

// The values themselves, through what the chart renders and the controller reads
// (tests/support/hcloud-ccm-config.ts, a reading of hcloud-cloud-controller-manager's chart and config code).
describe("hcloudCcmValues, as the controller starts with them", () => {
  /** The `kube-system/hcloud` Secret both clusters have (the fleet writes it; CAPH writes it into tenants). */
  const hcloudSecret: Record<string, string> = { token: "t0ken", network: "4711" };
  const started = (values: Record<string, unknown>) =>
    resolvedEnvironment(renderedEnvironment(values), (name, key) => (name === hcloudCcmSecretName ? hcloudSecret[key] : undefined));

  it.each([false, true])("reads the token and network from the hcloud Secret, no routes, load balancers in the zone (private targets: %s)", (privateTargets) => {
    const { env, errors } = started(hcloudCcmValues({ loadBalancerNetworkZone: "us-east", privateLoadBalancerTargets: privateTargets }));
    expect(errors).toEqual([]);
    expect([...env.keys()].filter((name) => name !== "NODE_NAME" && !variablesTheControllerReads.has(name))).toEqual([]);
    expect(controllerConfiguration(env)).toEqual({
      token: hcloudSecret["token"],
      network: hcloudSecret["network"],
      routesEnabled: false,
      loadBalancersEnabled: true,
      loadBalancerPrivateIp: privateTargets,
      loadBalancerNetworkZone: "us-east",
      loadBalancerLocation: "",
    });
  });

  it("leaves pod networking to the cluster's overlay (flannel, Cilium): no pod CIDR allocation, no host network", () => {
    expect(renderedNetworking(hcloudCcmValues({ loadBalancerNetworkZone: "eu-central" }))).toEqual({ allocateNodeCidrs: false, hostNetwork: false });
    // Negative control: the chart's networking mode does both.
    expect(renderedNetworking({ networking: { enabled: true } })).toEqual({ allocateNodeCidrs: true, hostNetwork: true });
  });
});
