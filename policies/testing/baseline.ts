import { carenExtensionNames } from "../../infra/model/platform/caren-extensions";
import { catalog } from "../../infra/model/versions/catalog";
import { clusterApiProviders } from "../../infra/model/platform/cluster-api-providers";
import { fleetConfigSchema } from "../../infra/model/config/fleet-config";
import { managementFirewallRules } from "../../infra/model/management/firewall-rules";
import { hetznerClusterClassManifests } from "../../infra/model/platform/hetzner-cluster-class";
import { hcloudCcmProxy, hcloudCsiProxy, tenantClusterManifest, type TenantClusterSettings } from "../../infra/model/tenant/tenant-cluster";
import { readStackConfig } from "../../tests/support/stack-files";
import { resourceTypes } from "../lib/fleet-resources";
import { fixtureUrn, type FixtureResource } from "./harness";
import { componentOutputs, stackOutputs } from "../../infra/model/contract/outputs";
import { componentTypes } from "../../infra/model/contract/component-types";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** The prod stack's tenants, parsed with the program's schema. */
export function prodTenants(): TenantClusterSettings[] {
  const raw = JSON.parse(readStackConfig("prod").values["capi-fleet:tenants"]!) as unknown;
  return fleetConfigSchema.shape.tenants.parse(raw).map((tenant) => ({ ...tenant, namespace: tenant.namespace ?? tenant.name }));
}

/**
 * A component fixture that declares `children` the way the fleet's components do (its
 * `declared` output), and makes it their parent. The declared props are the children's own
 * props objects, so a test that mutates a child's props mutates what its component declared
 * (cloneFixtures keeps that sharing).
 */
function declaringComponent(type: string, name: string, children: FixtureResource[], props: Record<string, unknown> = {}): FixtureResource[] {
  for (const child of children) child.parent = name;
  return [{ type, name, props, outputs: { [componentOutputs.declared]: children.map((child) => ({ urn: fixtureUrn(child), props: child.props })) } }, ...children];
}

/**
 * A valid fleet as the policies see it, built with the same pure builders the program
 * uses: the prod tenants (payments v1.34, analytics v1.35, edge v1.33), the ClusterClass,
 * the operator's providers, CAREN's release and readiness gate, each tenant's CCM/CSI
 * proxies and drain, and hardened management hcloud resources. The Kubernetes objects and the
 * drain sit under components that declare them, as in the program: stack rules see them only
 * through those declarations (the harness gives custom resources no outputs, as the engine
 * does on a fresh stack). Every rule passes on it; each test mutates one field. Fixture names:
 * `cluster-<tenant>`, `ccm-<tenant>`, `csi-<tenant>`, `drain-<tenant>`, `tenant-<tenant>`
 * (component), `cluster-class`, `core-provider`, `hetzner-provider`, `caren-release`,
 * `caren-ready`, `management`, `k3s-upgrades` (K3sUpgrades component, its output the target k3s
 * release), `server-1`, `api-lb`, `firewall`, `deployed-state`
 * (DeployedState component; set its `outputs` with {@link deployedOutputs}).
 */
export function baselineFleet(): FixtureResource[] {
  const manifests = hetznerClusterClassManifests({ carenExtensionNames: carenExtensionNames() });
  const providers = clusterApiProviders.map((provider) => ({
    type: `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${provider.kind}`,
    name: provider.kind === "CoreProvider" ? "core-provider" : provider.kind === "InfrastructureProvider" ? "hetzner-provider" : `${provider.kind}-${provider.name}`,
    props: { metadata: { name: provider.name, namespace: provider.namespace }, spec: { version: provider.version } },
  }));
  const tenants = prodTenants().flatMap((tenant): FixtureResource[] =>
    declaringComponent(componentTypes.tenantCluster, `tenant-${tenant.name}`, [
      { type: resourceTypes.cluster, name: `cluster-${tenant.name}`, props: tenantClusterManifest(tenant) as unknown as Record<string, unknown>, dependsOn: ["cluster-class", "caren-ready"] },
      { type: resourceTypes.helmChartProxy, name: `ccm-${tenant.name}`, props: hcloudCcmProxy(tenant) as unknown as Record<string, unknown> },
      { type: resourceTypes.helmChartProxy, name: `csi-${tenant.name}`, props: hcloudCsiProxy(tenant) as unknown as Record<string, unknown> },
      { type: resourceTypes.localCommand, name: `drain-${tenant.name}`, props: { delete: `node ${scriptEntryPoints.drainLoadBalancers}` }, dependsOn: [`cluster-${tenant.name}`] },
    ]),
  );
  return [
    { type: resourceTypes.k3sUpgrades, name: "k3s-upgrades", props: {}, outputs: { [componentOutputs.k3sTarget]: catalog.k3s.version } },
    ...declaringComponent(resourceTypes.managementCluster, "management", [
      {
        type: resourceTypes.hcloudServer,
        name: "server-1",
        props: { name: "capi-fleet-prod-mgmt-1", serverType: "cx33", location: "nbg1", publicNets: [{ ipv4Enabled: true, ipv6Enabled: true }], deleteProtection: true },
      },
      { type: resourceTypes.hcloudLoadBalancer, name: "api-lb", props: { name: "capi-fleet-prod-mgmt-api", loadBalancerType: "lb11", location: "nbg1", deleteProtection: true } },
    ], { fleetName: "capi-fleet-prod", settings: { mode: "hetzner", k3sVersion: catalog.k3s.version, deletionProtection: true } }),
    {
      type: resourceTypes.hcloudFirewall,
      name: "firewall",
      props: { name: "capi-fleet-prod-mgmt", rules: managementFirewallRules(["203.0.113.0/28", "2001:db8:1::/48"], "10.0.0.0/16").map((rule) => ({ ...rule, sourceIps: [...rule.sourceIps] })) },
    },
    ...declaringComponent(componentTypes.clusterApi, "cluster-api", providers),
    ...declaringComponent(componentTypes.caren, "caren", [
      { type: resourceTypes.helmRelease, name: "caren-release", props: { chart: catalog.caren.chart.chart, version: catalog.caren.chart.version } },
      { type: resourceTypes.extensionConfigPatch, name: "caren-ready", props: { metadata: { name: carenExtensionNames().extensionConfig } }, dependsOn: ["caren-release"] },
    ]),
    ...declaringComponent(componentTypes.hetznerClusterClass, "hetzner-cluster-class", [
      { type: resourceTypes.clusterClass, name: "cluster-class", props: manifests.clusterClass as unknown as Record<string, unknown>, dependsOn: ["caren-ready"] },
    ]),
    { type: resourceTypes.deployedState, name: "deployed-state", props: {}, outputs: deployedOutputs({}) },
    ...tenants,
  ];
}

/**
 * The DeployedState outputs saying these tenants run these versions (as the last update left
 * them), and the management servers this k3s release when given.
 */
export function deployedOutputs(versions: Record<string, string>, managementK3sVersion?: string): Record<string, unknown> {
  return { [stackOutputs.tenantVersions]: versions, ...(managementK3sVersion === undefined ? {} : { [stackOutputs.managementK3sVersion]: managementK3sVersion }) };
}

/** Fixtures of the platform: what a management stack declares and its shards import. */
const platformFixtures = ["cluster-api", "core-provider", "hetzner-provider", "caren", "caren-release", "caren-ready", "hetzner-cluster-class", "cluster-class"];

/**
 * The baseline's tenants as a shard stack sees them (docs/architecture.md, Scaling out): no
 * management cluster and no platform of its own, a ManagementReference component (`management`)
 * whose outputs import what the platform's components declared (their URNs are the baseline's)
 * and the other stacks' tenant versions (`peers`), and its marker (`shard-marker`), which every
 * tenant's Cluster waits for instead of the class and CAREN's gate. Every rule passes on it.
 */
export function shardFleet(peers: Record<string, string> = {}): FixtureResource[] {
  const fleet = baselineFleet();
  const platformDeclared = fleet
    .filter((resource) => platformFixtures.includes(resource.name) && resource.outputs?.[componentOutputs.declared] !== undefined)
    .flatMap((resource) => resource.outputs?.[componentOutputs.declared] as unknown[]);
  const managementOnly = new Set([...platformFixtures, "management", "k3s-upgrades", "server-1", "api-lb", "firewall"]);
  const tenants = fleet
    .filter((resource) => !managementOnly.has(resource.name) && !platformFixtures.includes(resource.parent ?? ""))
    .map((resource) => (resource.type === resourceTypes.cluster ? { ...resource, dependsOn: ["shard-marker"] } : resource));
  const markerProps = { metadata: { name: "capi-fleet-shard-test", namespace: "capi-fleet-system" } };
  const marker: FixtureResource = { type: "kubernetes:core/v1:ConfigMap", name: "shard-marker", props: markerProps, parent: "management" };
  return [
    {
      type: componentTypes.managementReference,
      name: "management",
      props: {},
      outputs: { [componentOutputs.imported]: platformDeclared, [componentOutputs.peerTenantVersions]: peers, [componentOutputs.declared]: [{ urn: fixtureUrn(marker), props: markerProps }] },
    },
    marker,
    ...tenants,
  ];
}
