import type { PolicyResource } from "@pulumi/policy";
import { catalog } from "../../infra/model/versions/catalog";
import { apiVersions, kubernetesTypeToken } from "../../infra/model/platform/cluster-api-kinds";
import { classVariables } from "../../infra/model/platform/hetzner-cluster-class";
import { tenantLabels } from "../../infra/model/tenant/tenant-cluster";
import { componentOutputs, stackOutputs } from "../../infra/model/contract/outputs";
import { componentTypes, fleetComponentPrefix } from "../../infra/model/contract/component-types";

/**
 * How the rules find the fleet's objects among the resources the engine shows them, and
 * typed views of the few fields they read. Everything here is derived from the shared
 * model, so a renamed kind or apiVersion moves the program and the rules together.
 */

/** Type tokens the rules match on (what the engine registers). */
export const resourceTypes = {
  cluster: kubernetesTypeToken(apiVersions.cluster, "Cluster"),
  clusterClass: kubernetesTypeToken(apiVersions.cluster, "ClusterClass"),
  helmChartProxy: kubernetesTypeToken(apiVersions.helmChartProxy, "HelmChartProxy"),
  coreProvider: kubernetesTypeToken(apiVersions.clusterApiOperatorProvider, "CoreProvider"),
  infrastructureProvider: kubernetesTypeToken(apiVersions.clusterApiOperatorProvider, "InfrastructureProvider"),
  extensionConfigPatch: kubernetesTypeToken(apiVersions.extensionConfig, "ExtensionConfigPatch"),
  helmRelease: "kubernetes:helm.sh/v3:Release",
  localCommand: "command:local:Command",
  managementCluster: componentTypes.managementCluster,
  deployedState: componentTypes.deployedState,
  k3sUpgrades: componentTypes.k3sUpgrades,
  hcloudServer: "hcloud:index/server:Server",
  hcloudLoadBalancer: "hcloud:index/loadBalancer:LoadBalancer",
  hcloudFirewall: "hcloud:index/firewall:Firewall",
} as const;

type Props = Record<string, unknown>;

/** The value as a plain object, or an empty one (props may hold anything). */
export function record(value: unknown): Props {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Props) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function stringRecord(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(record(value)).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

/** The fields of a topology Cluster the rules read. */
export interface ClusterView {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** spec.topology.version ("" when missing). */
  readonly version: string;
  readonly classRef: { readonly name: string; readonly namespace: string };
  /** clusterConfig.addons.cni.provider, when the tenant asks CAREN for a CNI. */
  readonly cniProvider: string | undefined;
  /** "tenant \"payments\" (Cluster tenant-payments/payments)": how messages name it. */
  readonly description: string;
}

/** Reads a Cluster's props (inputs for resource rules, outputs for stack rules). */
export function clusterView(props: Props): ClusterView {
  const metadata = record(props.metadata);
  const topology = record(record(props.spec).topology);
  const classRef = record(topology.classRef);
  const name = text(metadata.name) ?? "";
  const namespace = text(metadata.namespace) ?? "default";
  const labels = stringRecord(metadata.labels);
  const variables = Array.isArray(topology.variables) ? topology.variables.map(record) : [];
  const clusterConfig = record(variables.find((variable) => variable.name === classVariables.clusterConfig)?.value);
  const tenant = labels[tenantLabels.tenant] ?? name;
  return {
    name,
    namespace,
    labels,
    annotations: stringRecord(metadata.annotations),
    version: text(topology.version) ?? "",
    classRef: { name: text(classRef.name) ?? "", namespace: text(classRef.namespace) ?? namespace },
    cniProvider: text(record(record(record(clusterConfig.addons).cni)).provider),
    description: `tenant ${JSON.stringify(tenant)} (Cluster ${namespace}/${name})`,
  };
}

/** The fields of a ClusterClass the rules read. */
export interface ClusterClassView {
  readonly name: string;
  readonly namespace: string;
  /** spec.kubernetesVersions (empty when unset). */
  readonly kubernetesVersions: readonly string[];
  /** spec.upgrade.external.generateUpgradePlanExtension, when set. */
  readonly upgradePlanExtension: string | undefined;
}

/** Reads a ClusterClass's props. */
export function clusterClassView(props: Props): ClusterClassView {
  const metadata = record(props.metadata);
  const spec = record(props.spec);
  const versions = Array.isArray(spec.kubernetesVersions) ? spec.kubernetesVersions.filter((v): v is string => typeof v === "string") : [];
  return {
    name: text(metadata.name) ?? "",
    namespace: text(metadata.namespace) ?? "default",
    kubernetesVersions: versions,
    upgradePlanExtension: text(record(record(spec.upgrade).external).generateUpgradePlanExtension),
  };
}

/** The resources of one type. */
export function ofType(resources: readonly PolicyResource[], type: string): PolicyResource[] {
  return resources.filter((resource) => resource.type === type);
}

/** Every declared topology Cluster in the stack, with its resource (fleet-objects-declared reports the others). */
export function clustersIn(resources: readonly PolicyResource[]): { resource: PolicyResource; cluster: ClusterView }[] {
  return ofType(resources, resourceTypes.cluster)
    .filter((resource) => !isUndeclared(resource))
    .map((resource) => ({ resource, cluster: clusterView(resource.props) }));
}

/** The ClusterClass a Cluster's classRef names, if the stack declares it. */
export function classOf(resources: readonly PolicyResource[], cluster: ClusterView): ClusterClassView | undefined {
  return ofType(resources, resourceTypes.clusterClass)
    .map((resource) => clusterClassView(resource.props))
    .find((candidate) => candidate.name === cluster.classRef.name && candidate.namespace === cluster.classRef.namespace);
}

/** Versions the stack installs, read from the resources that install them (undefined = not in this stack). */
export interface InstalledVersions {
  /** CoreProvider `cluster-api` spec.version. */
  readonly clusterApi: string | undefined;
  /** InfrastructureProvider `hetzner` spec.version. */
  readonly caph: string | undefined;
  /** The CAREN Helm release's chart version. */
  readonly caren: string | undefined;
}

function providerVersion(resources: readonly PolicyResource[], type: string, name: string): string | undefined {
  const provider = ofType(resources, type).find((resource) => record(resource.props.metadata).name === name);
  return provider ? text(record(provider.props.spec).version) : undefined;
}

/** Reads the installed CAPI, CAPH and CAREN versions from the provider CRs and the CAREN release. */
export function installedVersions(resources: readonly PolicyResource[]): InstalledVersions {
  const caren = ofType(resources, resourceTypes.helmRelease).find((resource) => resource.props.chart === catalog.caren.chart.chart);
  return {
    clusterApi: providerVersion(resources, resourceTypes.coreProvider, "cluster-api"),
    caph: providerVersion(resources, resourceTypes.infrastructureProvider, "hetzner"),
    caren: caren ? text(caren.props.version) : undefined,
  };
}

/**
 * What each tenant runs: the DeployedState component's output, which the program fills from
 * its own stack's last outputs before it registers anything (infra/deployed-state.ts).
 * Empty for a new stack.
 */
export function deployedTenantVersions(resources: readonly PolicyResource[]): ReadonlyMap<string, string> {
  const deployed = new Map<string, string>();
  for (const state of ofType(resources, resourceTypes.deployedState)) {
    for (const [tenant, version] of Object.entries(stringRecord(state.props[stackOutputs.tenantVersions]))) {
      deployed.set(tenant, version);
    }
  }
  return deployed;
}

/**
 * The k3s release the management servers' Plan was set to by the last update: the DeployedState
 * component's output, read like {@link deployedTenantVersions}. Undefined before the first
 * update that recorded it, and in `existing` mode.
 */
export function deployedManagementK3sVersion(resources: readonly PolicyResource[]): string | undefined {
  for (const state of ofType(resources, resourceTypes.deployedState)) {
    const version = text(state.props[stackOutputs.managementK3sVersion]);
    if (version !== undefined) return version;
  }
  return undefined;
}

/** The k3s release each K3sUpgrades component's Plan asks for, with the component (`hetzner` mode only). */
export function k3sUpgradeTargets(resources: readonly PolicyResource[]): { resource: PolicyResource; version: string }[] {
  return ofType(resources, resourceTypes.k3sUpgrades).flatMap((resource) => {
    const version = text(resource.props[componentOutputs.k3sTarget]);
    return version === undefined ? [] : [{ resource, version }];
  });
}

/** The kinds the stack rules read: a fleet component must declare each of them. */
export const declaredKinds: readonly string[] = [
  resourceTypes.cluster,
  resourceTypes.clusterClass,
  resourceTypes.helmChartProxy,
  resourceTypes.coreProvider,
  resourceTypes.infrastructureProvider,
  resourceTypes.extensionConfigPatch,
  resourceTypes.hcloudServer,
  resourceTypes.hcloudLoadBalancer,
];

/** In a {@link declaredView}: an object of a kind the stack rules read that no component declared. */
export function isUndeclared(resource: PolicyResource): boolean {
  return declaredKinds.includes(resource.type) && Object.keys(resource.props).length === 0;
}

/** True for the fleet's own components, whose outputs are plain values known in every run. */
export function isFleetComponent(resource: Pick<PolicyResource, "type">): boolean {
  return resource.type.startsWith(fleetComponentPrefix);
}

/** Resources a shard stack's view imports from its management stack (see {@link declaredView}). */
const importedResources = new WeakSet<PolicyResource>();

/**
 * True for a resource of the management stack that a shard stack's view imports: the management
 * stack judges it itself, so rules about the platform alone leave it to that stack.
 */
export function isImported(resource: PolicyResource): boolean {
  return importedResources.has(resource);
}

/**
 * The `type` of a URN (`urn:pulumi:<stack>::<project>::<parent types$>type::<name>`) and its name.
 */
function typeAndNameOf(urn: string): { type: string; name: string } {
  const [, , qualifiedType = "", ...name] = urn.split("::");
  return { type: qualifiedType.split("$").pop() ?? "", name: name.join("::") };
}

/**
 * A shard stack's ManagementReference imports what the management stack's components declared
 * (its ClusterClass, provider CRs, CAREN's release and readiness gate) as resources of their
 * own, and every child of the reference (the shard's marker, which its tenants depend on)
 * depends on them: the shard's stack rules see the platform as if it were in the stack.
 */
function importedFrom(reference: PolicyResource): PolicyResource[] {
  const entries: unknown = reference.props[componentOutputs.imported];
  return (Array.isArray(entries) ? entries.map(record) : []).flatMap((entry) => {
    if (typeof entry.urn !== "string") return [];
    const resource: PolicyResource = {
      ...typeAndNameOf(entry.urn),
      urn: entry.urn,
      props: record(entry.props),
      opts: { protect: false, ignoreChanges: [], aliases: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 }, additionalSecretOutputs: [] },
      dependencies: [],
      propertyDependencies: {},
      // The rules match on type tokens, never on SDK classes (as policies/testing/harness.ts).
      isType: () => false,
      asType: () => undefined,
    };
    importedResources.add(resource);
    return [resource];
  });
}

/**
 * The resources as stack rules must see them: each resource's props are what its component
 * declared for it (the component's `declared` output), `{}` for anything no component
 * declared, and the fleet's components keep their outputs. A custom resource's own outputs
 * are never read: they are empty on a fresh stack's preview (its provider is unknown) and the
 * live object after `up`, so reading them would make a verdict depend on the kind of run
 * (infra/model/contract/policy-facts.ts). Dependencies and parents point into the same view. In a shard
 * stack, the management stack's platform is imported (see {@link importedFrom}).
 */
export function declaredView(resources: readonly PolicyResource[]): PolicyResource[] {
  const declared = new Map<string, Props>();
  for (const component of resources.filter(isFleetComponent)) {
    const entries: unknown = component.props[componentOutputs.declared];
    // Stryker disable next-line ArrayDeclaration: equivalent, a filler entry has no urn and declares nothing
    for (const entry of Array.isArray(entries) ? entries.map(record) : []) {
      // Stryker disable next-line ConditionalExpression: equivalent as `true`, a non-string urn matches no resource (URNs are strings)
      if (typeof entry.urn === "string") declared.set(entry.urn, record(entry.props));
    }
  }
  const views = new Map<string, PolicyResource>();
  for (const resource of resources) {
    const props = declared.get(resource.urn) ?? (isFleetComponent(resource) ? resource.props : {});
    views.set(resource.urn, { ...resource, props });
  }
  const viewOf = (resource: PolicyResource): PolicyResource => views.get(resource.urn) ?? resource;
  for (const view of views.values()) {
    view.dependencies = view.dependencies.map(viewOf);
    if (view.parent) view.parent = viewOf(view.parent);
  }
  const imported: PolicyResource[] = [];
  // Only shard stacks register one (tests/in-the-loop/policy-pack.test.ts checks resourceTypes against prod).
  for (const reference of ofType([...views.values()], componentTypes.managementReference)) {
    const platform = importedFrom(reference);
    imported.push(...platform.filter((resource) => !views.has(resource.urn)));
    for (const view of views.values()) {
      if (view.parent?.urn === reference.urn) view.dependencies = [...view.dependencies, ...platform];
    }
  }
  return [...views.values(), ...imported];
}

/**
 * The Kubernetes versions of tenants other stacks of the fleet declare, as they ran after those
 * stacks' last update (a fleet component's `peerTenantVersions` output: the ManagementReference
 * of a shard stack, the DeployedState of a management stack with shards). Empty in a fleet of one stack.
 */
export function peerTenantVersions(resources: readonly PolicyResource[]): ReadonlyMap<string, string> {
  const peers = new Map<string, string>();
  for (const component of resources.filter(isFleetComponent)) {
    for (const [tenant, version] of Object.entries(stringRecord(component.props[componentOutputs.peerTenantVersions]))) peers.set(tenant, version);
  }
  return peers;
}

/** The tenant name a Cluster belongs to (its tenant label, else its name): the key of `tenantVersions`. */
export function tenantOf(cluster: ClusterView): string {
  return cluster.labels[tenantLabels.tenant] ?? cluster.name;
}

/** True when `resource` depends on `target`, directly or through other dependencies. */
export function dependsOnTransitively(resource: PolicyResource, target: PolicyResource): boolean {
  const seen = new Set<string>();
  const queue = [...resource.dependencies];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (seen.has(next.urn)) continue;
    if (next.urn === target.urn) return true;
    seen.add(next.urn);
    queue.push(...next.dependencies);
  }
  return false;
}

/**
 * Go's strconv.ParseBool, which CAREN uses on `caren.nutanix.com/loadbalancer-gc`:
 * undefined for anything it would refuse (the hook then fails and the Cluster cannot be deleted).
 */
export function parseGoBool(value: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
  return undefined;
}

/** A Kubernetes label selector (matchLabels and matchExpressions). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] }[];
}

/**
 * True when the selector selects an object with these labels (apimachinery semantics: an
 * empty selector matches everything; an unknown operator matches nothing).
 */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  // Stryker disable next-line ArrayDeclaration: equivalent, only a label whose value is the filler string could tell the default apart
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case "In":
        // Stryker disable next-line StringLiteral: equivalent, the fallback never runs (has: labels[key] is a string)
        return has && values.includes(labels[key] ?? "");
      case "NotIn":
        // Stryker disable next-line StringLiteral: equivalent, the fallback never runs (has: labels[key] is a string)
        return !has || !values.includes(labels[key] ?? "");
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
  return byLabels && byExpressions;
}

/** True when a config exemption list names this Cluster ("namespace/name" or the tenant's name). */
export function isExempt(exemptions: readonly string[], cluster: ClusterView): boolean {
  return exemptions.includes(`${cluster.namespace}/${cluster.name}`) || exemptions.includes(tenantOf(cluster));
}
