import { describe, expect, it } from "vitest";
import { tenantLabels } from "../../infra/model/tenant/tenant-cluster";
import { baselineFleet, deployedOutputs, shardFleet } from "../testing/baseline";
import { at, cloneFixtures, engineViewOf, fixture, fixtureUrn, type FixtureResource } from "../testing/harness";
import {
  classOf,
  clusterClassView,
  clustersIn,
  clusterView,
  declaredView,
  dependsOnTransitively,
  deployedManagementK3sVersion,
  installedVersions,
  isExempt,
  isImported,
  k3sUpgradeTargets,
  parseGoBool,
  peerTenantVersions,
  resourceTypes,
  selectorMatches,
  tenantOf,
  type LabelSelector,
} from "./fleet-resources";
import { componentOutputs } from "../../infra/model/contract/outputs";

describe("parseGoBool (strconv.ParseBool)", () => {
  it.each([
    ["1", true],
    ["t", true],
    ["T", true],
    ["TRUE", true],
    ["true", true],
    ["True", true],
    ["0", false],
    ["f", false],
    ["F", false],
    ["FALSE", false],
    ["false", false],
    ["False", false],
  ])("parses %j as %s", (value, expected) => {
    expect(parseGoBool(value)).toBe(expected);
  });

  it.each(["yes", "no", "", "FaLse", "tRUE", " false", "true ", "2", "on", "off", "y", "n"])("refuses %j", (value) => {
    expect(parseGoBool(value)).toBeUndefined();
  });
});

describe("selectorMatches", () => {
  const labels = { app: "web", tier: "front" };
  it.each<[string, LabelSelector, boolean]>([
    ["empty selector", {}, true],
    ["empty matchLabels and matchExpressions", { matchLabels: {}, matchExpressions: [] }, true],
    ["matchLabels all equal", { matchLabels: { app: "web", tier: "front" } }, true],
    ["matchLabels one differs", { matchLabels: { app: "web", tier: "back" } }, false],
    ["matchLabels key missing", { matchLabels: { zone: "a" } }, false],
    ["In, value listed", { matchExpressions: [{ key: "app", operator: "In", values: ["api", "web"] }] }, true],
    ["In, value not listed", { matchExpressions: [{ key: "app", operator: "In", values: ["api"] }] }, false],
    ["In, key missing", { matchExpressions: [{ key: "zone", operator: "In", values: [""] }] }, false],
    ["NotIn, value not listed", { matchExpressions: [{ key: "app", operator: "NotIn", values: ["api"] }] }, true],
    ["NotIn, value listed", { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] }, false],
    ["NotIn, key missing", { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] }, true],
    ["Exists, key present", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists, key missing", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    ["DoesNotExist, key missing", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist, key present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["unknown operator", { matchExpressions: [{ key: "app", operator: "Equals", values: ["web"] }] }, false],
    ["lower-case operator", { matchExpressions: [{ key: "app", operator: "in", values: ["web"] }] }, false],
    ["matchLabels and expressions both hold", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["matchLabels hold, an expression fails", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, false],
  ])("%s → %s", (_label, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  it("does not match an empty label set with a matchLabels selector", () => {
    expect(selectorMatches({ matchLabels: { app: "web" } }, {})).toBe(false);
  });
});

describe("isExempt", () => {
  const labelled = clusterView({ metadata: { name: "payments-eu", namespace: "tenant-payments", labels: { "capi-fleet.io/tenant": "payments" } } });
  const unlabelled = clusterView({ metadata: { name: "edge" } });

  it.each<[string, readonly string[], boolean]>([
    ["no exemptions", [], false],
    ["the tenant label", ["payments"], true],
    ["namespace/name", ["tenant-payments/payments-eu"], true],
    ["the Cluster's name alone (tenant label differs)", ["payments-eu"], false],
    ["another tenant", ["analytics"], false],
    ["the tenant under the wrong namespace", ["tenant-analytics/payments-eu"], false],
    ["a different case", ["Payments"], false],
  ])("labelled Cluster, exemptions naming %s → %s", (_label, exemptions, expected) => {
    expect(isExempt(exemptions, labelled)).toBe(expected);
  });

  it.each<[string, readonly string[], boolean]>([
    ["its name (the tenant without a label)", ["edge"], true],
    ["default/name", ["default/edge"], true],
    ["another namespace", ["tenant-edge/edge"], false],
  ])("unlabelled Cluster, exemptions naming %s → %s", (_label, exemptions, expected) => {
    expect(isExempt(exemptions, unlabelled)).toBe(expected);
  });
});

describe("dependsOnTransitively", () => {
  const type = "test:index:Thing";
  const graph = engineViewOf([
    { type, name: "gate", props: {} },
    { type, name: "direct", props: {}, dependsOn: ["gate"] },
    { type, name: "transitive", props: {}, dependsOn: ["direct"] },
    { type, name: "unrelated", props: {} },
    { type, name: "cycle-a", props: {}, dependsOn: ["cycle-b"] },
    { type, name: "cycle-b", props: {}, dependsOn: ["cycle-a", "unrelated"] },
    { type, name: "cycle-to-gate", props: {}, dependsOn: ["cycle-a", "transitive"] },
  ]).forResourceRules;
  const named = (name: string) => graph.find((resource) => resource.name === name)!;

  it.each([
    ["direct", "gate", true],
    ["transitive", "gate", true],
    ["cycle-to-gate", "gate", true],
    ["cycle-a", "gate", false],
    ["cycle-a", "unrelated", true],
    ["cycle-a", "cycle-a", true],
    ["gate", "direct", false],
    ["unrelated", "gate", false],
    ["gate", "gate", false],
  ])("%s depends on %s: %s", (from, to, expected) => {
    expect(dependsOnTransitively(named(from), named(to))).toBe(expected);
  });
});

describe("clusterView", () => {
  it("reads CAREN's CNI from the clusterConfig variable of the program's Cluster, not from another variable before it", () => {
    const fleet = cloneFixtures(baselineFleet());
    const props = fixture(fleet, "cluster-payments").props;
    const topology = at(props, "spec", "topology");
    const original = clusterView(props).cniProvider;
    expect(original).toBeDefined();
    topology.variables = [{ name: "lookalike", value: { addons: { cni: { provider: `not-${original}` } } } }, ...(topology.variables as unknown[])];
    expect(clusterView(props).cniProvider).toBe(original);
  });

  it("names a labelled Cluster after its tenant label, not after its own name", () => {
    const view = clusterView({ metadata: { name: "payments-eu", namespace: "tenant-payments", labels: { [tenantLabels.tenant]: "payments" } } });
    expect(view.description.startsWith('tenant "payments" ')).toBe(true);
    expect(view.description).toContain("tenant-payments/payments-eu");
  });

  it("keeps only string labels and annotations (a non-string tenant label is no tenant label)", () => {
    const view = clusterView({ metadata: { name: "edge", labels: { [tenantLabels.tenant]: 7, tier: "front" }, annotations: { note: { nested: true }, owner: "ops" } } });
    expect(view.labels).toEqual({ tier: "front" });
    expect(view.annotations).toEqual({ owner: "ops" });
    expect(tenantOf(view)).toBe("edge");
  });

  it("reads an empty object as Kubernetes would default it (namespace default, classRef in the Cluster's namespace)", () => {
    expect(clusterView({})).toEqual({
      name: "",
      namespace: "default",
      labels: {},
      annotations: {},
      version: "",
      classRef: { name: "", namespace: "default" },
      cniProvider: undefined,
      description: 'tenant "" (Cluster default/)',
    });
  });
});

describe("clusterClassView", () => {
  it("keeps the string versions only, and defaults an empty object like Kubernetes", () => {
    expect(clusterClassView({ spec: { kubernetesVersions: ["v1.33.10", 134, null, "v1.34.6"] } }).kubernetesVersions).toEqual(["v1.33.10", "v1.34.6"]);
    expect(clusterClassView({})).toEqual({ name: "", namespace: "default", kubernetesVersions: [], upgradePlanExtension: undefined });
  });
});

/** The baseline with `extra` put first, so a lookup that ignores a field would find it before the baseline's own. */
function withFirst(...extra: FixtureResource[]): FixtureResource[] {
  return [...extra, ...cloneFixtures(baselineFleet())];
}

describe("classOf", () => {
  it("finds the class the Cluster's classRef names, not a same-named one in another namespace or another class in the same one", () => {
    const fleet = withFirst({ type: resourceTypes.clusterClass, name: "decoy-class", props: {} }, { type: resourceTypes.clusterClass, name: "decoy-name", props: {} });
    const real = fixture(fleet, "cluster-class").props;
    const metadata = real.metadata as { name: string; namespace: string };
    fixture(fleet, "decoy-class").props = { metadata: { ...metadata, namespace: "team-a" }, spec: { kubernetesVersions: ["v1.30.0"] } };
    fixture(fleet, "decoy-name").props = { metadata: { ...metadata, name: `${metadata.name}-old` }, spec: { kubernetesVersions: ["v1.31.0"] } };
    const resources = engineViewOf(fleet).forResourceRules;
    const payments = clustersIn(resources).find(({ resource }) => resource.name === "cluster-payments")!.cluster;
    expect(classOf(resources, payments)).toEqual(clusterClassView(real));
  });
});

describe("installedVersions", () => {
  it("reads the hetzner InfrastructureProvider and CAREN's chart, not another provider or release listed before them", () => {
    const fleet = withFirst(
      { type: resourceTypes.infrastructureProvider, name: "other-infra", props: { metadata: { name: "docker" }, spec: { version: "v9.9.9" } } },
      { type: resourceTypes.coreProvider, name: "other-core", props: { metadata: { name: "not-cluster-api" }, spec: { version: "v9.9.9" } } },
      { type: resourceTypes.helmRelease, name: "other-release", props: { chart: "cilium", version: "9.9.9" } },
    );
    expect(installedVersions(engineViewOf(fleet).forResourceRules)).toEqual({
      clusterApi: at(fixture(fleet, "core-provider").props, "spec").version,
      caph: at(fixture(fleet, "hetzner-provider").props, "spec").version,
      caren: fixture(fleet, "caren-release").props.version,
    });
  });
});

describe("installedVersions, deployedManagementK3sVersion and k3sUpgradeTargets on a stack without those resources", () => {
  it("find nothing rather than failing", () => {
    const resources = engineViewOf([
      { type: resourceTypes.deployedState, name: "deployed-state", props: {}, outputs: deployedOutputs({}) },
      { type: resourceTypes.k3sUpgrades, name: "k3s-upgrades", props: {}, outputs: {} },
    ]).forStackRules;
    expect(installedVersions(resources)).toStrictEqual({ clusterApi: undefined, caph: undefined, caren: undefined });
    expect(deployedManagementK3sVersion(resources)).toBeUndefined();
    expect(k3sUpgradeTargets(resources)).toEqual([]);
  });

  it("take the deployed k3s release from the DeployedState that records one", () => {
    const resources = engineViewOf([
      { type: resourceTypes.deployedState, name: "without", props: {}, outputs: deployedOutputs({}) },
      { type: resourceTypes.deployedState, name: "with", props: {}, outputs: deployedOutputs({}, "v1.33.5+k3s1") },
    ]).forStackRules;
    expect(deployedManagementK3sVersion(resources)).toBe("v1.33.5+k3s1");
  });
});

describe("declaredView", () => {
  it("gives each declared object what its component declared, and dependencies and parents point at those views", () => {
    const fleet = baselineFleet();
    const view = declaredView(engineViewOf(fleet).forStackRules);
    const named = (name: string) => view.find((resource) => resource.name === name)!;
    const cluster = named("cluster-payments");
    expect(cluster.props).toEqual(fixture(fleet, "cluster-payments").props);
    expect(named("drain-payments").dependencies).toContain(cluster);
    expect(cluster.parent).toBe(named("tenant-payments"));
    expect(named("deployed-state").props).toEqual(fixture(fleet, "deployed-state").outputs);
  });

  it("reads declarations from the fleet's components only, and skips entries that are not objects", () => {
    const fleet = cloneFixtures(baselineFleet());
    const clusterUrn = fixtureUrn(fixture(fleet, "cluster-payments"));
    const component = fixture(fleet, "tenant-payments").outputs!;
    const declared = (component[componentOutputs.declared] as { urn: string }[]).filter((entry) => entry.urn !== clusterUrn);
    component[componentOutputs.declared] = [null, "text", [clusterUrn], ...declared];
    // A custom resource whose live outputs happen to hold a `declared` list declares nothing.
    fixture(fleet, "cluster-edge").props[componentOutputs.declared] = [{ urn: clusterUrn, props: { forged: true } }];
    const afterUp = engineViewOf(fleet).forStackRules.map((resource) => (resource.type.startsWith("kubernetes:") ? { ...resource, props: fixture(fleet, resource.name).props } : resource));
    const view = declaredView(afterUp);
    expect(view.find((resource) => resource.name === "cluster-payments")!.props).toEqual({});
    expect(view.find((resource) => resource.name === "drain-payments")!.props).toEqual(fixture(fleet, "drain-payments").props);
  });

  it("leaves an object no component declared empty, even when the engine shows its own props (as after `up`)", () => {
    const fleet = cloneFixtures(baselineFleet());
    const component = fixture(fleet, "tenant-payments").outputs!;
    component[componentOutputs.declared] = (component[componentOutputs.declared] as { urn: string }[]).filter((entry) => !entry.urn.endsWith("::cluster-payments"));
    fixture(fleet, "tenant-edge").outputs![componentOutputs.declared] = { urn: "not a list", props: {} };
    // After `up` the engine shows a custom resource's live outputs: here, its own props.
    const afterUp = engineViewOf(fleet).forStackRules.map((resource) => (resource.type.startsWith("kubernetes:") ? { ...resource, props: fixture(fleet, resource.name).props } : resource));
    const view = declaredView(afterUp);
    expect(view.find((resource) => resource.name === "cluster-payments")!.props).toEqual({});
    expect(view.find((resource) => resource.name === "cluster-edge")!.props).toEqual({});
    expect(view.find((resource) => resource.name === "cluster-analytics")!.props).toEqual(fixture(fleet, "cluster-analytics").props);
  });
});

describe("declaredView in a shard stack (docs/architecture.md, Scaling out)", () => {
  const viewOf = (fleet: FixtureResource[]) => declaredView(engineViewOf(fleet).forStackRules);

  it("imports what the management stack's components declared, as resources of their own type and name, on which the reference's children depend", () => {
    const view = viewOf(shardFleet());
    const imported = view.filter(isImported);
    expect(imported.map((resource) => `${resource.type}::${resource.name}`).sort()).toEqual(
      [
        `${resourceTypes.clusterClass}::cluster-class`,
        `${resourceTypes.coreProvider}::core-provider`,
        `${resourceTypes.extensionConfigPatch}::caren-ready`,
        `${resourceTypes.helmRelease}::caren-release`,
        `${resourceTypes.infrastructureProvider}::hetzner-provider`,
        ...view.filter((resource) => resource.type.startsWith("kubernetes:operator.cluster.x-k8s.io/") && !["core-provider", "hetzner-provider"].includes(resource.name)).map((resource) => `${resource.type}::${resource.name}`),
      ].sort(),
    );
    const baseline = baselineFleet();
    const classView = imported.find((resource) => resource.name === "cluster-class")!;
    expect(classView.props).toEqual(fixture(baseline, "cluster-class").props);
    expect(classView.urn).toBe(fixtureUrn(fixture(baseline, "cluster-class")));
    expect(classView.dependencies).toEqual([]);
    expect(classView.isType({} as never)).toBe(false);
    expect(classView.asType({} as never)).toBeUndefined();
    const marker = view.find((resource) => resource.name === "shard-marker")!;
    expect(isImported(marker)).toBe(false);
    expect(marker.dependencies).toEqual(expect.arrayContaining(imported));
    const cluster = view.find((resource) => resource.name === "cluster-payments")!;
    expect(dependsOnTransitively(cluster, imported.find((resource) => resource.name === "caren-ready")!)).toBe(true);
    expect(classOf(view, clusterView(cluster.props))?.kubernetesVersions.length).toBeGreaterThan(0);
    expect(installedVersions(view).clusterApi).toBeDefined();
    // Only the reference's children depend on the imports.
    expect(view.find((resource) => resource.name === "tenant-payments")!.dependencies.filter(isImported)).toEqual([]);
  });

  it("keeps a resource of the stack rather than an import with the same URN, and skips entries without a URN", () => {
    const fleet = shardFleet();
    const reference = fixture(fleet, "management").outputs!;
    const marker = fixture(fleet, "shard-marker");
    reference[componentOutputs.imported] = [{ urn: fixtureUrn(marker), props: { forged: true } }, { props: {} }, "text", ...(reference[componentOutputs.imported] as unknown[])];
    const view = viewOf(fleet);
    expect(view.filter((resource) => resource.urn === fixtureUrn(marker))).toHaveLength(1);
    expect(view.find((resource) => resource.urn === fixtureUrn(marker))!.props).toEqual(marker.props);
    reference[componentOutputs.imported] = "not a list";
    expect(viewOf(fleet).filter(isImported)).toEqual([]);
  });

  it("imports nothing in a stack without a ManagementReference", () => {
    expect(viewOf(baselineFleet()).filter(isImported)).toEqual([]);
  });

  it("reads the other stacks' tenant versions from the fleet's components only", () => {
    const fleet = shardFleet({ analytics: "v1.36.1", broken: 3 as unknown as string });
    fixture(fleet, "cluster-edge").props[componentOutputs.peerTenantVersions] = { forged: "v1.99.0" };
    const deployed = fixture(fleet, "deployed-state");
    deployed.outputs = { ...deployed.outputs, [componentOutputs.peerTenantVersions]: { other: "v1.30.0" } };
    expect([...peerTenantVersions(viewOf(fleet))]).toEqual([
      ["analytics", "v1.36.1"],
      ["other", "v1.30.0"],
    ]);
    expect(peerTenantVersions(viewOf(baselineFleet())).size).toBe(0);
  });
});
