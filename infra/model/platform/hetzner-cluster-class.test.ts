import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Ajv, { type ValidateFunction } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { crdSchema, patchDefinitions, undeclaredSegment } from "../../../tests/support/cluster-class-patches";
import {
  buildGoTemplateRenderer,
  capiModuleDir,
  crdFiles,
  defaultedVariables,
  patchedTemplate,
  type GoTemplateRenderer,
  type TemplateHolder,
  type VariableValue,
} from "../../../tests/support/cluster-class-topology";
import { readStackConfig } from "../../../tests/support/stack-files";
import { skipIfDeclared } from "../../../tests/support/unverified";
import { crdSources, type Crd } from "../../../tests/support/upstream-crds";
import { carenExtensionNames } from "./caren-extensions";
import { catalog } from "../versions/catalog";
import type { Manifest } from "./cluster-api-kinds";
import {
  awaitedClusterClass,
  classVariables,
  clusterClassName,
  clusterClassNamespace,
  defaultClassReadyTimeoutSeconds,
  hetznerClusterClassManifests,
  hetznerClusterClassTemplates,
  hetznerClusterNameOf,
  infrastructureClusterNamingTemplate,
  preKubeadmCommandsSeed,
  remediationTemplateIn,
  workerClassName,
} from "./hetzner-cluster-class";
import { advertisePrivateAddressScriptPath, installKubernetesScript } from "./node-bootstrap";
import { tenantClusterManifest, tenantNetworkZone, type TenantClusterSettings } from "../tenant/tenant-cluster";
import { parseFleetConfig } from "../stack/validate-fleet-config";
import { validateKubernetesVersionsList } from "../versions/upgrade-plan";

type Ref = Record<"apiVersion" | "kind" | "name", string>;
type ClassSpec = {
  kubernetesVersions: string[];
  infrastructure: { templateRef: Ref };
  controlPlane: { templateRef: Ref; machineInfrastructure: { templateRef: Ref }; healthCheck: { remediation: { templateRef: Ref } } };
  workers: { machineDeployments: Record<string, unknown>[] };
  variables: { name: string; required: boolean; schema: { openAPIV3Schema: Record<string, unknown> } }[];
  patches: Record<string, unknown>[];
};

/** The class as the program builds it, built inside each test (StrykerJS credits only code a test runs). */
function built() {
  const caren = carenExtensionNames();
  const { clusterClass, templates } = hetznerClusterClassManifests({ carenExtensionNames: caren });
  return { caren, clusterClass, templates, spec: clusterClass.spec as ClassSpec };
}

/** Every Kubernetes version the catalog knows, in the forms a kubelet install could use. */
function kubernetesVersionLiterals(text: string): string[] {
  const versions = [...new Set([...catalog.tenantKubernetesVersions, catalog.k3s.version.split("+")[0]!])];
  return versions.flatMap((version) => [version, version.slice(1)]).filter((version) => text.includes(version));
}

/**
 * What is wrong with where a class's nodes get their Kubernetes version: each role's install must
 * read its own builtin version (they differ during a chained upgrade), and no version may be
 * written anywhere but spec.kubernetesVersions, which lists them on purpose.
 */
function installVersionProblems(classManifest: Manifest, classTemplates: Record<string, Manifest>): string[] {
  const { kubernetesVersions: _listed, ...rest } = classManifest.spec as { kubernetesVersions: string[]; patches: { name: string }[] };
  const install = JSON.stringify(rest.patches.find((patch) => patch.name === "kubernetes-install"));
  return [
    ...["{{ .builtin.controlPlane.version }}", "{{ .builtin.machineDeployment.version }}"].filter((read) => !install.includes(read)).map((read) => `does not read ${read}`),
    ...(install.includes("builtin.cluster.topology.version") ? ["reads the Cluster's target version"] : []),
    ...kubernetesVersionLiterals(JSON.stringify({ rest, classTemplates })).map((literal) => `hard-codes ${literal}`),
  ];
}

describe("the Hetzner ClusterClass", () => {
  it("is a v1beta2 ClusterClass in its own namespace", () => {
    const { clusterClass } = built();
    expect(clusterClass).toMatchObject({
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "ClusterClass",
      metadata: { name: clusterClassName, namespace: clusterClassNamespace },
    });
  });

  it("references its templates with v1beta2 templateRefs (apiVersion, kind, name; no namespace, no v1beta1 ref)", () => {
    const { clusterClass, templates, spec } = built();
    const refs = [
      spec.infrastructure.templateRef,
      spec.controlPlane.templateRef,
      spec.controlPlane.machineInfrastructure.templateRef,
      spec.controlPlane.healthCheck.remediation.templateRef,
    ];
    for (const ref of refs) {
      expect(Object.keys(ref).sort()).toEqual(["apiVersion", "kind", "name"]);
    }
    const byName = new Map(Object.values(templates).map((manifest: Manifest) => [manifest.metadata.name, manifest]));
    for (const ref of refs) {
      expect(byName.get(ref.name)?.kind).toBe(ref.kind);
    }
    expect(JSON.stringify(clusterClass)).not.toMatch(/"ref"|"generateExtension"|"validateExtension"/);
  });

  it("uses the template API versions the providers serve", () => {
    const { templates } = built();
    expect(Object.fromEntries(Object.values(templates).map((t: Manifest) => [t.kind, t.apiVersion]))).toEqual({
      HetznerClusterTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
      HCloudMachineTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
      KubeadmControlPlaneTemplate: "controlplane.cluster.x-k8s.io/v1beta2",
      KubeadmConfigTemplate: "bootstrap.cluster.x-k8s.io/v1beta2",
      HCloudRemediationTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
    });
  });

  it("lists the catalog's tenant versions as kubernetesVersions, which CAPI's webhook rules accept", () => {
    const { spec } = built();
    expect(spec.kubernetesVersions).toEqual(catalog.tenantKubernetesVersions);
    expect(validateKubernetesVersionsList(spec.kubernetesVersions)).toBeUndefined();
  });

  it("calls CAREN's suffixed, generation-numbered patch handlers, each with CAREN's Docker clusterConfig discovery", () => {
    const { caren, spec } = built();
    const external = spec.patches.filter((patch) => "external" in patch).map((patch) => patch.external);
    const discovery = "dockerclusterconfigvars-dv.cluster-api-runtime-extensions-nutanix";
    expect(external).toEqual([
      { generatePatchesExtension: `genericclusterv${caren.patchGeneration}configpatch-gp.cluster-api-runtime-extensions-nutanix`, discoverVariablesExtension: discovery },
      { generatePatchesExtension: `genericworkerv${caren.patchGeneration}configpatch-gp.cluster-api-runtime-extensions-nutanix`, discoverVariablesExtension: discovery },
    ]);
    expect(spec.patches.at(-1)).toMatchObject({ name: "caren-workers" });
  });

  it("does not declare clusterConfig itself: CAPI refuses an inline schema next to a discovered one", () => {
    const { spec } = built();
    expect(spec.variables.map((variable) => variable.name)).not.toContain(classVariables.clusterConfig);
  });

  it("declares every variable a patch reads", () => {
    const { spec } = built();
    const declared = new Set(spec.variables.map((variable) => variable.name));
    const text = JSON.stringify(spec.patches);
    const fromVariables = [...text.matchAll(/"variable":"([^"]+)"/g)].map((match) => match[1]!);
    const fromTemplates = [...text.matchAll(/\{\{[^}]*?\.([A-Za-z]+)[ }]/g)].map((match) => match[1]!).filter((name) => name !== "version");
    expect(fromVariables.length).toBeGreaterThan(8);
    expect([...fromVariables, ...fromTemplates].filter((name) => !declared.has(name))).toEqual([]);
  });

  it("has one worker class, with health checks and remediation", () => {
    const { spec } = built();
    expect(spec.workers.machineDeployments).toHaveLength(1);
    expect(spec.workers.machineDeployments[0]).toMatchObject({
      class: workerClassName,
      healthCheck: { checks: { nodeStartupTimeoutSeconds: expect.any(Number) }, remediation: { templateRef: { kind: "HCloudRemediationTemplate" } } },
    });
  });
});

describe("the kubelet install", () => {
  it("takes each node's version from the builtin variables, never from a literal", () => {
    const { clusterClass, templates } = built();
    expect(installVersionProblems(clusterClass, templates)).toEqual([]);
  });

  it("negative control: the program's class with the mistakes CAPH's shipped class makes fails that check", () => {
    const { clusterClass, templates } = built();
    // The class as built, with the control plane's install pinned to a version (CAPH's class
    // hard-codes one) and the workers' reading the Cluster's target version.
    const pinned = catalog.tenantKubernetesVersions[1];
    const broken = JSON.parse(
      JSON.stringify(clusterClass)
        .replaceAll("{{ .builtin.controlPlane.version }}", pinned)
        .replaceAll("{{ .builtin.machineDeployment.version }}", "{{ .builtin.cluster.topology.version }}"),
    ) as Manifest;
    expect(installVersionProblems(broken, templates)).toEqual([
      "does not read {{ .builtin.controlPlane.version }}",
      "does not read {{ .builtin.machineDeployment.version }}",
      "reads the Cluster's target version",
      `hard-codes ${pinned}`,
      `hard-codes ${pinned.slice(1)}`,
    ]);
  });

  it("prepends its commands to a seeded preKubeadmCommands list, never setting the whole list (CAREN's appended commands stay)", () => {
    const { templates, spec } = built();
    const text = JSON.stringify(templates);
    expect(text).not.toMatch(/"(files|preKubeadmCommands|postKubeadmCommands|mounts)":\[\]/);
    const seeded = [
      (templates.controlPlane.spec as { template: { spec: { kubeadmConfigSpec: { preKubeadmCommands: string[] } } } }).template.spec.kubeadmConfigSpec.preKubeadmCommands,
      (templates.workerBootstrap.spec as { template: { spec: { preKubeadmCommands: string[] } } }).template.spec.preKubeadmCommands,
    ];
    expect(seeded).toEqual([[preKubeadmCommandsSeed], [preKubeadmCommandsSeed]]);
    const install = spec.patches.find((patch) => patch.name === "kubernetes-install") as { definitions: { jsonPatches: { op: string; path: string }[] }[] };
    const paths = install.definitions.flatMap((definition) => definition.jsonPatches.map((jsonPatch) => `${jsonPatch.op} ${jsonPatch.path}`));
    // CAPI's webhook takes "0" (prepend) or "-" (append) only: every command is prepended.
    expect(paths).toEqual([
      "add /spec/template/spec/kubeadmConfigSpec/preKubeadmCommands/0",
      "add /spec/template/spec/kubeadmConfigSpec/preKubeadmCommands/0",
      "add /spec/template/spec/preKubeadmCommands/0",
    ]);
  });

  it("is a shell script that parses and refuses anything but vMAJOR.MINOR.PATCH before touching the node", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "install-kubernetes-"));
    try {
      const script = path.join(dir, "install-kubernetes.sh");
      writeFileSync(script, installKubernetesScript);
      execFileSync("bash", ["-n", script]);
      const refused = spawnSync("bash", [script, "latest"], { encoding: "utf8" });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain("is not a Kubernetes version");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("template names", () => {
  it("are stable for the same content, unique, and end in a content hash (CAPI refuses in-place template changes)", () => {
    const { templates } = built();
    expect(hetznerClusterClassTemplates()).toEqual(templates);
    const names = Object.values(templates).map((t: Manifest) => t.metadata.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(new RegExp(`^${clusterClassName}-[a-z-]+-[0-9a-f]{10}$`));
    }
  });
});

// The class applied to the stacks' tenants the way CAPI's topology controller applies it
// (tests/support/cluster-class-topology.ts: Go's text/template for the templates, CAPI's defaulting and
// patch rules ported), and the patched templates checked against the CRDs CAPI and CAPH serve
// (sigs.k8s.io/cluster-api@v1.12.10 and syself/cluster-api-provider-hetzner@v1.1.8: config/crd/bases).
// The same class runs through CAPI's real controllers in tests/in-the-loop/capi-in-the-loop.test.ts; these
// tests are the quick ones, fast enough to run for every mutant.

let renderer: GoTemplateRenderer;
let crds: Crd[] = [];
/** Why CAPI's or CAPH's CRDs are unavailable (through the resolver), if they are. */
const unavailable: string[] = [];

beforeAll(() => {
  renderer = buildGoTemplateRenderer();
  const files: [string, string[]][] = [
    [
      "sigs.k8s.io/cluster-api",
      ["controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml", "bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml", "cluster.x-k8s.io_clusterclasses.yaml"],
    ],
    [
      "github.com/syself/cluster-api-provider-hetzner",
      ["infrastructure.cluster.x-k8s.io_hetznerclustertemplates.yaml", "infrastructure.cluster.x-k8s.io_hcloudmachinetemplates.yaml", "infrastructure.cluster.x-k8s.io_hcloudremediationtemplates.yaml"],
    ],
  ];
  for (const [module, names] of files) {
    const result = crdFiles(crdSources.find((source) => source.module === module)!, names);
    if ("unavailable" in result) unavailable.push(result.unavailable);
    else crds = [...crds, ...result];
  }
}, 300_000);

/** The stacks' tenants, parsed by the program. */
function stackTenants(): TenantClusterSettings[] {
  return ["dev", "prod"].flatMap((stack) => {
    const { values, secretKeys } = readStackConfig(stack);
    return parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true }).tenants.map(({ hcloudToken: _token, ...tenant }) => tenant);
  });
}

/**
 * The stacks' tenants, and each again with every placement group flipped and an SSH key (the stacks
 * leave the defaults: control-plane group on, pool groups off, no key).
 */
function variedTenants(): TenantClusterSettings[] {
  const tenants = stackTenants();
  const varied = tenants.map((tenant) => ({
    ...tenant,
    sshKeyName: tenant.sshKeyName ? undefined : "ops",
    controlPlane: { ...tenant.controlPlane, placementGroup: !tenant.controlPlane.placementGroup },
    workers: tenant.workers.map((pool) => ({ ...pool, placementGroup: !pool.placementGroup })),
  }));
  return [...tenants, ...varied];
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();

/**
 * The part of a CRD schema that can judge `value`: the properties it does not set are dropped
 * (their `required` stays), which gives the same verdict and compiles in a fraction of the time.
 */
function schemaFor(schema: Record<string, unknown>, value: unknown): Record<string, unknown> {
  const properties = schema["properties"] as Record<string, Record<string, unknown>> | undefined;
  if (!properties || typeof value !== "object" || value === null || Array.isArray(value)) return schema;
  const set = Object.keys(value).filter((key) => key in properties);
  return { ...schema, properties: Object.fromEntries(set.map((key) => [key, schemaFor(properties[key]!, (value as Record<string, unknown>)[key])])) };
}

/** Every leaf of a JSON value as a JSON pointer. */
function leafPointers(value: unknown, pointer: string): string[] {
  if (Array.isArray(value) && value.length > 0) return value.flatMap((item, index) => leafPointers(item, `${pointer}/${index}`));
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, item]) => leafPointers(item, `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`));
  }
  return [pointer];
}

/** What the API server would refuse (schema) or silently drop (undeclared fields) in a template. */
function crdProblems(object: { apiVersion: string; kind: string; spec: unknown }): string[] {
  const key = `${object.apiVersion} ${object.kind}`;
  const schema = crdSchema(crds, object.apiVersion, object.kind);
  if (!schema) return [`no CRD serves ${key}`];
  const pruned = schemaFor(schema as Record<string, unknown>, object);
  const cacheKey = JSON.stringify(pruned);
  const validate = validators.get(cacheKey) ?? ajv.compile(pruned);
  validators.set(cacheKey, validate);
  const problems = validate(object) ? [] : (validate.errors ?? []).map((error) => `${key} ${error.instancePath}: ${error.message ?? ""}`);
  for (const pointer of leafPointers(object.spec, "/spec")) {
    const undeclared = undeclaredSegment(schema, pointer);
    if (undeclared !== undefined) problems.push(`${key} ${pointer}: "${undeclared}" is not declared (the API server drops it)`);
  }
  return problems;
}

type Templates = ReturnType<typeof built>["templates"];
type MachineSpec = { type: string; imageName: string; placementGroupName?: string };
type ClusterSpec = {
  controlPlaneRegions: string[];
  controlPlaneLoadBalancer: { enabled?: boolean; type: string; region: string };
  hcloudNetwork: Record<string, unknown>;
  hcloudPlacementGroups?: { name: string }[];
  sshKeys: { hcloud?: { name: string }[] };
};
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the spec type it reads
const templateSpec = <T>(manifest: Manifest): T => (manifest.spec as { template: { spec: T } }).template.spec;

/** The class's templates rendered for one Cluster and one MachineDeployment of it, as CAPI renders them. */
function renderedFor(
  classSpec: ClassSpec,
  templates: Templates,
  clusterVariables: readonly VariableValue[],
  deployment: { name: string; overrides: readonly VariableValue[] },
  versions: { controlPlane: string; machineDeployment: string },
) {
  const cluster = defaultedVariables(clusterVariables, classSpec.variables);
  if ("refused" in cluster) throw new Error(cluster.refused);
  const builtin = {
    cluster: { name: "tenant", namespace: "tenant-ns" },
    controlPlane: { version: versions.controlPlane, name: "tenant-cp" },
    machineDeployment: { version: versions.machineDeployment, class: workerClassName, name: deployment.name },
  };
  const mdVariables = { ...cluster.variables, ...Object.fromEntries(deployment.overrides.map((variable) => [variable.name, variable.value])) };
  // CAPI clones each template the class references (apiVersion, kind, name).
  const referenced = (ref: Partial<Ref> | undefined) => {
    const found = Object.values(templates).find((t: Manifest) => t.apiVersion === ref?.apiVersion && t.kind === ref.kind && t.metadata.name === ref.name);
    if (!found) throw new Error(`the class references no template of its own: ${JSON.stringify(ref)}`);
    return found;
  };
  const workerClass = classSpec.workers.machineDeployments.find((candidate) => candidate["class"] === workerClassName) as
    | { bootstrap?: { templateRef?: Ref }; infrastructure?: { templateRef?: Ref } }
    | undefined;
  const render = (ref: Partial<Ref> | undefined, holder: TemplateHolder, variables: Record<string, unknown>) =>
    patchedTemplate(renderer, classSpec.patches, referenced(ref), holder, { ...variables, builtin });
  return {
    infrastructureCluster: render(classSpec.infrastructure.templateRef, { infrastructureCluster: true }, cluster.variables),
    controlPlane: render(classSpec.controlPlane.templateRef, { controlPlane: true }, cluster.variables),
    controlPlaneMachine: render(classSpec.controlPlane.machineInfrastructure.templateRef, { controlPlane: true }, cluster.variables),
    workerBootstrap: render(workerClass?.bootstrap?.templateRef, { machineDeploymentClass: workerClassName }, mdVariables),
    workerMachine: render(workerClass?.infrastructure?.templateRef, { machineDeploymentClass: workerClassName }, mdVariables),
  };
}

type Topology = {
  version: string;
  variables: VariableValue[];
  workers: { machineDeployments: { name: string; variables: { overrides: VariableValue[] } }[] };
};
const topologyOf = (tenant: TenantClusterSettings) => (tenantClusterManifest(tenant).spec as { topology: Topology }).topology;

/**
 * Instances of a (variable) schema that together use every enum value, every optional property
 * and the smallest object the schema allows.
 */
function samplesOf(schema: Record<string, unknown>): unknown[] {
  if (Array.isArray(schema["enum"])) return schema["enum"] as unknown[];
  switch (schema["type"]) {
    case "boolean":
      return [true, false];
    case "string":
      return ["x"];
    case "array":
      return samplesOf(schema["items"] as Record<string, unknown>).map((item) => [item]);
    case "object": {
      const properties = (schema["properties"] ?? {}) as Record<string, Record<string, unknown>>;
      const required = (schema["required"] ?? []) as string[];
      const first = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, samplesOf(property)[0]]));
      const smallest = Object.fromEntries(Object.entries(first).filter(([name]) => required.includes(name)));
      const varied = Object.entries(properties).flatMap(([name, property]) => samplesOf(property).map((sample) => ({ ...first, [name]: sample })));
      return [smallest, ...varied];
    }
    default:
      throw new Error(`no samples for ${JSON.stringify(schema)}`);
  }
}

/** The default a CRD schema gives the field at `pointer` (the API server fills it in when the field is absent). */
function crdDefault(object: { apiVersion: string; kind: string }, pointer: string): unknown {
  let node = crdSchema(crds, object.apiVersion, object.kind) as { properties?: Record<string, unknown>; default?: unknown } | undefined;
  for (const segment of pointer.split("/").slice(1)) node = node?.properties?.[segment] as typeof node;
  return node?.default;
}

describe("the class applied to the stacks' tenants (CAPI's rendering, CAPI's and CAPH's CRDs)", () => {
  it("registers templates the providers accept as they are, before any patch", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { templates } = built();
    expect(Object.values(templates).flatMap(crdProblems)).toEqual([]);
  });

  it("is a ClusterClass CAPI's CRD accepts", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { clusterClass } = built();
    expect(crdProblems(clusterClass)).toEqual([]);
  });

  it("renders, for every tenant and pool, templates the providers accept, with the tenant's settings where CAPH reads them", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { spec, templates } = built();
    const tenants = variedTenants();
    expect(tenants.length).toBeGreaterThan(1);
    for (const tenant of tenants) {
      const topology = topologyOf(tenant);
      for (const [index, pool] of tenant.workers.entries()) {
        const deployment = topology.workers.machineDeployments[index]!;
        const rendered = renderedFor(spec, templates, topology.variables, { name: deployment.name, overrides: deployment.variables.overrides }, {
          controlPlane: tenant.kubernetesVersion,
          machineDeployment: tenant.kubernetesVersion,
        });
        expect(Object.values(rendered).flatMap(crdProblems), `${tenant.name}/${pool.name}`).toEqual([]);
        const cluster = templateSpec<ClusterSpec>(rendered.infrastructureCluster);
        expect(cluster.controlPlaneRegions).toEqual(tenant.regions);
        expect(cluster.controlPlaneLoadBalancer).toMatchObject({ type: tenant.apiLoadBalancerType, region: tenant.regions[0] });
        // The API is reached through the load balancer: it must be on, set or by CAPH's default.
        const lbEnabled = cluster.controlPlaneLoadBalancer.enabled ?? crdDefault(rendered.infrastructureCluster, "/spec/template/spec/controlPlaneLoadBalancer/enabled");
        expect(lbEnabled).toBe(true);
        expect(cluster.hcloudNetwork).toMatchObject({ enabled: true, networkZone: tenantNetworkZone(tenant) });
        expect((cluster.sshKeys.hcloud ?? []).map((key) => key.name)).toEqual(tenant.sshKeyName ? [tenant.sshKeyName] : []);
        // The hcloud CCM initialises every node, so each kubelet runs with --cloud-provider=external
        // (kubernetes.io: docs/tasks/administer-cluster/running-cloud-controller, "Running cloud-controller-manager").
        type Registration = { nodeRegistration: { kubeletExtraArgs?: { name: string; value: string }[] } };
        const kubeadm = templateSpec<{ kubeadmConfigSpec: { initConfiguration: Registration; joinConfiguration: Registration } }>(rendered.controlPlane).kubeadmConfigSpec;
        const workerJoin = templateSpec<{ joinConfiguration: Registration }>(rendered.workerBootstrap).joinConfiguration;
        for (const registration of [kubeadm.initConfiguration, kubeadm.joinConfiguration, workerJoin]) {
          expect(registration.nodeRegistration.kubeletExtraArgs).toContainEqual({ name: "cloud-provider", value: "external" });
        }
        const controlPlaneMachine = templateSpec<MachineSpec>(rendered.controlPlaneMachine);
        const workerMachine = templateSpec<MachineSpec>(rendered.workerMachine);
        expect(controlPlaneMachine).toMatchObject({ type: tenant.controlPlane.machineType, imageName: tenant.image });
        expect(workerMachine).toMatchObject({ type: pool.machineType, imageName: pool.image ?? tenant.image });
        // CAPH puts a server into the placement group of that name among the HetznerCluster's groups.
        const groups = (cluster.hcloudPlacementGroups ?? []).map((group) => group.name);
        for (const [machine, wanted] of [
          [controlPlaneMachine, tenant.controlPlane.placementGroup],
          [workerMachine, pool.placementGroup],
        ] as const) {
          if (wanted) expect(groups).toContain(machine.placementGroupName);
          else expect(machine.placementGroupName).toBeUndefined();
        }
      }
    }
  });

  it("runs each node's install at the node's own version (control plane and workers differ mid-upgrade), then the class's own commands", () => {
    const { spec, templates } = built();
    const tenant = stackTenants()[0]!;
    const topology = topologyOf(tenant);
    const deployment = topology.workers.machineDeployments[0]!;
    // Mid-chain: the control plane is one minor ahead of the workers.
    const [previous, next] = catalog.tenantKubernetesVersions.slice(-2);
    const versions = { controlPlane: next!, machineDeployment: previous! };
    const rendered = renderedFor(spec, templates, topology.variables, { name: deployment.name, overrides: deployment.variables.overrides }, versions);
    type Bootstrap = { files: { path: string; permissions: string }[]; preKubeadmCommands: string[] };
    const controlPlane = templateSpec<{ kubeadmConfigSpec: Bootstrap }>(rendered.controlPlane).kubeadmConfigSpec;
    const worker = templateSpec<Bootstrap>(rendered.workerBootstrap);
    // Each command runs an executable file the same template writes; the install's first argument is the version.
    const runs = (bootstrap: Bootstrap) =>
      bootstrap.preKubeadmCommands.map((command) => {
        const [program, ...args] = command.split(" ");
        const file = bootstrap.files.find((candidate) => candidate.path === program);
        return file ? { executable: file.permissions === "0755", args } : command;
      });
    expect(runs(controlPlane)).toEqual([
      { executable: true, args: [versions.controlPlane, catalog.containerd.version] },
      { executable: true, args: [] },
      preKubeadmCommandsSeed,
    ]);
    expect(controlPlane.preKubeadmCommands[1]).toBe(advertisePrivateAddressScriptPath);
    expect(runs(worker)).toEqual([{ executable: true, args: [versions.machineDeployment, catalog.containerd.version] }, preKubeadmCommandsSeed]);
    expect(worker.files.map((file) => file.path)).not.toContain(advertisePrivateAddressScriptPath);
  });

  it("accepts through each variable only values that CAPH's CRDs accept once patched in", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { spec, templates } = built();
    const tenant = stackTenants()[0]!;
    const topology = topologyOf(tenant);
    const deployment = topology.workers.machineDeployments[0]!;
    const problems: string[] = [];
    let checked = 0;
    for (const definition of spec.variables) {
      const validate = ajv.compile(definition.schema.openAPIV3Schema);
      for (const sample of samplesOf(definition.schema.openAPIV3Schema)) {
        if (!validate(sample)) continue;
        checked += 1;
        const withSample = (variables: readonly VariableValue[]) => [...variables.filter((variable) => variable.name !== definition.name), { name: definition.name, value: sample }];
        const rendered = renderedFor(spec, templates, withSample(topology.variables), { name: deployment.name, overrides: withSample(deployment.variables.overrides) }, {
          controlPlane: tenant.kubernetesVersion,
          machineDeployment: tenant.kubernetesVersion,
        });
        problems.push(...Object.values(rendered).flatMap(crdProblems).map((problem) => `${definition.name}=${JSON.stringify(sample)}: ${problem}`));
      }
    }
    expect(checked).toBeGreaterThan(spec.variables.length);
    expect(problems).toEqual([]);
  });

  it("accepts the tenants' values and refuses values CAPH does not know, in each variable's schema", () => {
    const { spec } = built();
    const schemaOf = (name: string) => ajv.compile(spec.variables.find((variable) => variable.name === name)!.schema.openAPIV3Schema);
    for (const tenant of variedTenants()) {
      const topology = topologyOf(tenant);
      const all = [...topology.variables, ...topology.workers.machineDeployments.flatMap((deployment) => deployment.variables.overrides)];
      for (const variable of all.filter((candidate) => candidate.name !== classVariables.clusterConfig)) {
        expect(schemaOf(variable.name)(variable.value), `${tenant.name}: ${variable.name}=${JSON.stringify(variable.value)}`).toBe(true);
      }
    }
    // Values the patched templates would carry to CAPH, which refuses or ignores them.
    const refused: [string, unknown][] = [
      [classVariables.regions, []],
      [classVariables.regions, ["xyz1"]],
      [classVariables.network, { enabled: true, cidrBlock: "10.0.0.0/16", subnetCidrBlock: "10.0.0.0/24", networkZone: "eu-west" }],
      [classVariables.placementGroups, [{ name: "a", type: "cluster" }]],
      [classVariables.placementGroups, [{ name: "", type: "spread" }]],
      [classVariables.sshKeys, [{ name: "" }]],
      [classVariables.apiLoadBalancerType, "lb99"],
      [classVariables.controlPlaneMachineType, ""],
      [classVariables.workerMachineType, ""],
      [classVariables.controlPlaneImage, ""],
      [classVariables.workerImage, ""],
      [classVariables.controlPlanePlacementGroup, 1],
      [classVariables.workerPlacementGroup, false],
    ];
    expect(refused.filter(([name, value]) => schemaOf(name)(value)).map(([name, value]) => `${name}=${JSON.stringify(value)}`)).toEqual([]);
  });

  it("defaults every optional variable to a value its schema accepts (CAPI's ClusterClass webhook validates defaults)", () => {
    const { spec } = built();
    const optional = spec.variables.filter((variable) => !variable.required);
    expect(optional.length).toBeGreaterThan(0);
    for (const variable of optional) {
      const fallback = variable.schema.openAPIV3Schema["default"];
      expect(fallback, variable.name).toBeDefined();
      expect(ajv.compile(variable.schema.openAPIV3Schema)(fallback), variable.name).toBe(true);
    }
  });

  it("renders a Cluster that sets only the required variables into templates CAPH accepts, without placement groups", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { spec, templates } = built();
    const topology = topologyOf(stackTenants()[0]!);
    const required = new Set(spec.variables.filter((variable) => variable.required).map((variable) => variable.name));
    const minimal = topology.variables.filter((variable) => required.has(variable.name));
    const rendered = renderedFor(spec, templates, minimal, { name: "md-0", overrides: [] }, { controlPlane: topology.version, machineDeployment: topology.version });
    expect(Object.values(rendered).flatMap(crdProblems)).toEqual([]);
    for (const machine of [rendered.controlPlaneMachine, rendered.workerMachine]) {
      expect(templateSpec<MachineSpec>(machine)).toEqual({ type: expect.any(String), imageName: catalog.tenantNodeImage });
    }
    const cluster = templateSpec<ClusterSpec>(rendered.infrastructureCluster);
    expect(cluster.hcloudPlacementGroups).toEqual([]);
    expect(cluster.sshKeys).toEqual({ hcloud: [] });
  });

  it("refuses a Cluster without a variable the patches need, instead of failing the patches later", () => {
    const { spec, templates } = built();
    const topology = topologyOf(stackTenants()[0]!);
    const outcomes = spec.variables.map((definition) => {
      const without = topology.variables.filter((variable) => variable.name !== definition.name);
      if ("refused" in defaultedVariables(without, spec.variables)) return `${definition.name}: refused`;
      try {
        renderedFor(spec, templates, without, { name: "md-0", overrides: [] }, { controlPlane: topology.version, machineDeployment: topology.version });
        return `${definition.name}: rendered`;
      } catch (error) {
        return `${definition.name}: accepted, then the patches fail: ${(error as Error).message}`;
      }
    });
    expect(outcomes.filter((outcome) => outcome.includes("accepted, then"))).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.endsWith("refused")).length).toBeGreaterThan(0);
  });
});

// CAPH's maintainers say they do not support private networks and mean to take them out of their
// templates (docs/tenants.md, "The private network"), while every tenant here depends on one. So a
// CAPH bump whose CRDs drop or change `hcloudNetwork` fails here, before any tenant gets it
// (syself/cluster-api-provider-hetzner@v1.1.8: config/crd/bases/infrastructure.cluster.x-k8s.io_hetznerclusters.yaml
// and …_hetznerclustertemplates.yaml). The fields come from what the program writes, not from a list.

/** The part of a CRD schema the network check reads. */
type NetworkSchema = { type?: string; enum?: unknown[]; required?: string[]; properties?: Record<string, NetworkSchema> };
/** Where CAPH must take the network: a kind at an apiVersion, and the JSON pointer of `hcloudNetwork` in it. */
type NetworkTarget = { apiVersion: string; kind: string; pointer: string };
/** What the program writes into `hcloudNetwork`: per field, its JSON types and its string values. */
type NetworkFields = Map<string, { types: Set<string>; values: Set<string> }>;

const pointerSegments = (pointer: string) => pointer.split("/").slice(1);
const jsonTypeOf = (value: unknown) => (Array.isArray(value) ? "array" : value === null ? "null" : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value);

/** The value at a JSON pointer, or undefined. */
function valueAt(document: unknown, pointer: string): unknown {
  return pointerSegments(pointer).reduce<unknown>((node, segment) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[segment] : undefined), document);
}

/** The schema a CRD serves for one version at a JSON pointer into the object, or why there is none. */
function servedSchemaAt(crds: readonly Crd[], target: NetworkTarget): NetworkSchema | string {
  const [group, version] = target.apiVersion.split("/");
  const crd = crds.find((candidate) => candidate.spec.group === group && candidate.spec.names.kind === target.kind);
  if (!crd) return "no CRD defines the kind";
  const served = crd.spec.versions.find((candidate) => candidate.name === version && candidate.served) as { schema?: { openAPIV3Schema?: NetworkSchema } } | undefined;
  if (!served) return `the CRD does not serve ${version ?? ""}`;
  let node = served.schema?.openAPIV3Schema;
  for (const [index, segment] of pointerSegments(target.pointer).entries()) {
    node = node?.properties?.[segment];
    if (!node) return `${pointerSegments(target.pointer).slice(0, index + 1).join(".")} is gone`;
  }
  return node ?? "the CRD has no schema";
}

/**
 * Where the class writes the network: the JSON patches that copy the network variable into the
 * infrastructure template, and the same field of the kind CAPI creates from that template
 * (`<Kind>Template`'s `spec.template.spec` becomes `<Kind>`'s `spec`).
 */
function networkTargets(classSpec: ClassSpec): NetworkTarget[] {
  const patches = patchDefinitions(classSpec as unknown as Record<string, unknown>).flatMap((definition) =>
    definition.jsonPatches
      .filter((patch) => patch.valueFrom?.variable === classVariables.network)
      .map((patch) => ({ apiVersion: definition.apiVersion, kind: definition.kind, pointer: patch.path })),
  );
  return patches.flatMap((target) => [target, { ...target, kind: target.kind.replace(/Template$/, ""), pointer: target.pointer.replace(/^\/spec\/template\/spec\//, "/spec/") }]);
}

/**
 * Every field the program writes into `hcloudNetwork`, with its types and string values: the
 * template's placeholder, the value each tenant's Cluster renders into it, and whatever the
 * variable's schema lets a Cluster set (CAPI copies the variable into the template as it is).
 */
function networkFieldsWritten(): { targets: NetworkTarget[]; fields: NetworkFields } {
  const { spec, templates } = built();
  const targets = networkTargets(spec);
  const fields: NetworkFields = new Map();
  const entry = (field: string) => fields.get(field) ?? fields.set(field, { types: new Set(), values: new Set() }).get(field)!;
  const addValue = (value: unknown, what: string) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${what}: hcloudNetwork is not an object: ${JSON.stringify(value)}`);
    for (const [field, item] of Object.entries(value)) {
      entry(field).types.add(jsonTypeOf(item));
      if (typeof item === "string") entry(field).values.add(item);
    }
  };
  for (const target of targets.filter((candidate) => candidate.kind === templates.infrastructureCluster.kind)) {
    addValue(valueAt(templates.infrastructureCluster, target.pointer), "the class's template");
    for (const tenant of variedTenants()) {
      const topology = topologyOf(tenant);
      const deployment = topology.workers.machineDeployments[0]!;
      const rendered = renderedFor(spec, templates, topology.variables, { name: deployment.name, overrides: deployment.variables.overrides }, {
        controlPlane: tenant.kubernetesVersion,
        machineDeployment: tenant.kubernetesVersion,
      });
      addValue(valueAt(rendered.infrastructureCluster, target.pointer), `tenant ${tenant.name}`);
    }
  }
  const variable = spec.variables.find((definition) => definition.name === classVariables.network)!.schema.openAPIV3Schema as NetworkSchema;
  for (const [field, property] of Object.entries(variable.properties ?? {})) {
    if (property.type) entry(field).types.add(property.type);
    for (const value of property.enum ?? []) if (typeof value === "string") entry(field).values.add(value);
  }
  return { targets, fields };
}

/** What CAPH's CRDs lack of what the program writes into `hcloudNetwork` (empty: all there, same types, values allowed). */
function hcloudNetworkProblems(caphCrds: readonly Crd[], targets: readonly NetworkTarget[], fields: NetworkFields): string[] {
  const problems: string[] = [];
  if (targets.length === 0) problems.push("the class writes the network variable nowhere");
  for (const target of targets) {
    const where = `${target.kind} ${target.apiVersion}`;
    const dotted = pointerSegments(target.pointer).join(".");
    const schema = servedSchemaAt(caphCrds, target);
    if (typeof schema === "string") {
      problems.push(`${where}: ${schema}; the fleet sets ${dotted} (${[...fields.keys()].join(", ")})`);
      continue;
    }
    if (schema.type !== "object") problems.push(`${where}: ${dotted} is ${schema.type ?? "untyped"}, the fleet writes an object`);
    for (const [field, written] of fields) {
      const property = schema.properties?.[field];
      if (!property) {
        problems.push(`${where}: ${dotted}.${field} is gone; the fleet sets it`);
        continue;
      }
      for (const type of written.types) {
        if (property.type !== type && !(property.type === "number" && type === "integer")) problems.push(`${where}: ${dotted}.${field} is ${property.type ?? "untyped"}, the fleet writes ${type}`);
      }
      const allowed = property.enum;
      if (allowed) for (const value of written.values) if (!allowed.includes(value)) problems.push(`${where}: ${dotted}.${field} does not allow ${JSON.stringify(value)} (allowed: ${allowed.join(", ")})`);
    }
    for (const required of schema.required ?? []) if (!fields.has(required)) problems.push(`${where}: ${dotted}.${required} is required, and the fleet does not set it`);
  }
  return problems;
}

describe("CAPH's hcloudNetwork at the catalog's CAPH version (the private network every tenant depends on)", () => {
  let caphCrds: Crd[] = [];
  const caphUnavailable: string[] = [];

  beforeAll(() => {
    const caph = crdSources.find((source) => source.module === "github.com/syself/cluster-api-provider-hetzner")!;
    expect(caph.version).toBe(catalog.caph.version);
    const result = crdFiles(caph, ["infrastructure.cluster.x-k8s.io_hetznerclusters.yaml", "infrastructure.cluster.x-k8s.io_hetznerclustertemplates.yaml"]);
    if ("unavailable" in result) caphUnavailable.push(result.unavailable);
    else caphCrds = result;
  }, 300_000);

  it("HetznerClusterTemplate and HetznerCluster, at the contract CAPH serves, have spec.hcloudNetwork with every field the program writes, of the types and values it writes", (context) => {
    if (caphUnavailable.length > 0) return skipIfDeclared(context, caphUnavailable.join("; "));
    const { templates } = built();
    const { targets, fields } = networkFieldsWritten();
    const contract = `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`;
    expect(targets.map((target) => `${target.apiVersion} ${target.kind}`)).toEqual([
      `${contract} ${templates.infrastructureCluster.kind}`,
      `${contract} ${templates.infrastructureCluster.kind.replace(/Template$/, "")}`,
    ]);
    expect(fields.size).toBeGreaterThan(1);
    expect(hcloudNetworkProblems(caphCrds, targets, fields)).toEqual([]);
  });

  it("negative controls: the same check fails on a CRD copy without hcloudNetwork, with a field of another type or without a zone the fleet uses, and for a field CAPH lacks", (context) => {
    if (caphUnavailable.length > 0) return skipIfDeclared(context, caphUnavailable.join("; "));
    const { targets, fields } = networkFieldsWritten();
    const [template, cluster] = targets as [NetworkTarget, NetworkTarget];
    // The controls mean something only where the real CRDs pass.
    expect(hcloudNetworkProblems(caphCrds, targets, fields)).toEqual([]);
    /** A copy of CAPH's CRDs with the `hcloudNetwork` schema of one kind changed. */
    const changed = (target: NetworkTarget, change: (network: NetworkSchema, parent: NetworkSchema) => void) => {
      const copy = structuredClone(caphCrds);
      const parent = servedSchemaAt(copy, { ...target, pointer: target.pointer.replace(/\/[^/]+$/, "") });
      const network = servedSchemaAt(copy, target);
      if (typeof parent === "string" || typeof network === "string") throw new Error(`${target.kind}: ${typeof network === "string" ? network : "no parent schema"}`);
      change(network, parent);
      return copy;
    };
    const firstString = [...fields].find(([, written]) => written.types.has("string"))![0];
    const clusterNetwork = servedSchemaAt(caphCrds, cluster) as NetworkSchema;
    // The field whose values CAPH restricts (the network zone), and the first value the fleet writes into it.
    const [zoneField, zoneValues] = [...fields].find(([field]) => clusterNetwork.properties?.[field]?.enum !== undefined)!;
    const zone = [...zoneValues.values][0]!;

    const withoutNetwork = changed(cluster, (_network, parent) => delete parent.properties!["hcloudNetwork"]);
    expect(hcloudNetworkProblems(withoutNetwork, targets, fields)).toEqual([
      `${cluster.kind} ${cluster.apiVersion}: spec.hcloudNetwork is gone; the fleet sets spec.hcloudNetwork (${[...fields.keys()].join(", ")})`,
    ]);
    const retyped = changed(template, (network) => (network.properties![firstString]!.type = "integer"));
    expect(hcloudNetworkProblems(retyped, targets, fields)).toEqual([`${template.kind} ${template.apiVersion}: spec.template.spec.hcloudNetwork.${firstString} is integer, the fleet writes string`]);
    const narrowed = changed(cluster, (network) => (network.properties![zoneField]!.enum = network.properties![zoneField]!.enum!.filter((value) => value !== zone)));
    expect(hcloudNetworkProblems(narrowed, targets, fields)).toEqual([expect.stringMatching(new RegExp(`^${cluster.kind} \\S+: spec\\.hcloudNetwork\\.${zoneField} does not allow "${zone}"`))]);
    const newlyRequired = changed(template, (network) => (network.required = [...(network.required ?? []), "routes"]));
    expect(hcloudNetworkProblems(newlyRequired, targets, fields)).toEqual([`${template.kind} ${template.apiVersion}: spec.template.spec.hcloudNetwork.routes is required, and the fleet does not set it`]);
    // The program side: a field CAPH does not declare (the API server would drop it) fails for both kinds.
    const more: NetworkFields = new Map([...fields, ["routes", { types: new Set(["array"]), values: new Set<string>() }]]);
    expect(hcloudNetworkProblems(caphCrds, targets, more)).toEqual(targets.map((target) => `${target.kind} ${target.apiVersion}: ${pointerSegments(target.pointer).join(".")}.routes is gone; the fleet sets it`));
    // A class that no longer writes the network at all.
    expect(hcloudNetworkProblems(caphCrds, [], fields)).toEqual(["the class writes the network variable nowhere"]);
  });
});

describe("the names CAPI resolves", () => {
  it("names a tenant's HetznerCluster as CAPI renders the class's naming template", () => {
    const { spec } = built();
    const naming = (spec.infrastructure as { naming?: { template?: string } }).naming?.template;
    // Without a template CAPI names it `{{ .cluster.name }}-{{ .random }}` (exp/topology/desiredstate/desired_state.go).
    expect(naming).toBe(infrastructureClusterNamingTemplate);
    for (const name of ["payments", "dev-a"]) {
      // CAPI's naming data: the Cluster's name and a random suffix.
      expect(renderer.render(naming!, { cluster: { name }, random: "x7k2p" })).toEqual({ value: hetznerClusterNameOf(name) });
    }
  });

  it("labels the remediation template, which CAPI gives no ownerReference, for clusterctl move", () => {
    // The label clusterctl moves an object by (sigs.k8s.io/cluster-api@v1.12.10: cmd/clusterctl/api/v1alpha3/labels.go).
    const source = path.join(capiModuleDir(), "cmd", "clusterctl", "api", "v1alpha3", "labels.go");
    const moveLabel = /ClusterctlMoveLabel = "([^"]+)"/.exec(readFileSync(source, "utf8"))?.[1];
    expect(moveLabel).toBeDefined();
    const { templates } = built();
    expect(Object.keys(templates.remediation.metadata.labels ?? {})).toContain(moveLabel);
    expect(Object.keys(remediationTemplateIn("tenant-payments").metadata.labels ?? {})).toContain(moveLabel);
  });

  it("puts a remediation template where the tenant's MachineHealthChecks look for it", () => {
    const { spec } = built();
    const ref = spec.controlPlane.healthCheck.remediation.templateRef;
    // The health-check controller resolves the class's ref in the check's own namespace (TemplateRef.ToObjectReference(m.Namespace)).
    const copy = remediationTemplateIn("tenant-payments");
    expect({ apiVersion: copy.apiVersion, kind: copy.kind, name: copy.metadata.name, namespace: copy.metadata.namespace }).toEqual({ ...ref, namespace: "tenant-payments" });
    expect(copy.spec).toEqual(built().templates.remediation.spec);
  });
});

/**
 * CAPI's MachineHealthCheck verdict on one machine, a stand-in ported from
 * sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/machinehealthcheck/machinehealthcheck_targets.go
 * `nodeChecks` (no Node after the startup timeout; a Node condition in a listed status for longer
 * than its timeout) with the startup timeout's default of 600 s (machinehealthcheck_controller.go).
 */
function remediated(
  checks: { nodeStartupTimeoutSeconds?: number; unhealthyNodeConditions?: { type: string; status: string; timeoutSeconds?: number }[] },
  machine: { minutesWithoutNode: number } | { condition: { type: string; status: string; minutes: number } },
): boolean {
  if ("minutesWithoutNode" in machine) return machine.minutesWithoutNode * 60 > (checks.nodeStartupTimeoutSeconds ?? 600);
  const { type, status, minutes } = machine.condition;
  return (checks.unhealthyNodeConditions ?? []).some((check) => check.type === type && check.status === status && minutes * 60 > (check.timeoutSeconds ?? 0));
}

describe("the class's health checks (CAPI's MachineHealthCheck rules)", () => {
  it("remediate by rebooting, the one strategy CAPH supports (its CRD's default), with a timeout CAPH can parse", (context) => {
    if (unavailable.length > 0) return skipIfDeclared(context, unavailable.join("; "));
    const { remediation } = built().templates;
    const strategy = templateSpec<{ strategy: { type?: string; timeout: string } }>(remediation).strategy;
    // syself/cluster-api-provider-hetzner@v1.1.8 HCloudRemediationTemplate: `type` "At the moment, only "Reboot" is supported", its default.
    const supported = crdDefault(remediation, "/spec/template/spec/strategy/type");
    expect(supported).toBeDefined();
    expect(strategy.type ?? supported).toBe(supported);
    // A Go time.Duration (CAPH parses it with metav1.Duration).
    expect(strategy.timeout).toMatch(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  });

  it("replace a node that stays NotReady or unreachable, and wait for a node whose provider ID comes late", () => {
    const { spec } = built();
    type Checks = Parameters<typeof remediated>[0];
    const checks = [
      ["control plane", (spec.controlPlane as unknown as { healthCheck: { checks: Checks } }).healthCheck.checks],
      ["workers", (spec.workers.machineDeployments[0] as { healthCheck: { checks: Checks } }).healthCheck.checks],
    ] as const;
    for (const [role, check] of checks) {
      const verdicts = {
        // The hcloud CCM, which gives the Node its provider ID, comes after the API answers: past CAPI's default of 10 minutes.
        noNodeAfter15Minutes: remediated(check, { minutesWithoutNode: 15 }),
        noNodeAfter25Minutes: remediated(check, { minutesWithoutNode: 25 }),
        notReadyFor10Minutes: remediated(check, { condition: { type: "Ready", status: "False", minutes: 10 } }),
        unknownFor10Minutes: remediated(check, { condition: { type: "Ready", status: "Unknown", minutes: 10 } }),
        notReadyFor1Minute: remediated(check, { condition: { type: "Ready", status: "False", minutes: 1 } }),
      };
      expect(verdicts, role).toEqual({ noNodeAfter15Minutes: false, noNodeAfter25Minutes: true, notReadyFor10Minutes: true, unknownFor10Minutes: true, notReadyFor1Minute: false });
    }
  });
});

describe("the class as the component registers it", () => {
  it("is the built class, awaited until CAPI has reconciled its variables", () => {
    const { clusterClass } = built();
    const awaited = awaitedClusterClass(clusterClass);
    expect({ ...awaited, metadata: { ...awaited.metadata, annotations: undefined } }).toEqual({ ...clusterClass, metadata: { ...clusterClass.metadata, annotations: undefined } });
    expect(awaited.metadata.annotations).toEqual({ "pulumi.com/waitFor": "condition=VariablesReady", "pulumi.com/timeoutSeconds": String(defaultClassReadyTimeoutSeconds) });
    expect(defaultClassReadyTimeoutSeconds).toBe(300);
    expect(awaitedClusterClass(clusterClass, 42).metadata.annotations?.["pulumi.com/timeoutSeconds"]).toBe("42");
  });

  it("keeps annotations the class already has", () => {
    const { clusterClass } = built();
    const annotated = { ...clusterClass, metadata: { ...clusterClass.metadata, annotations: { "example.com/kept": "yes" } } };
    expect(awaitedClusterClass(annotated).metadata.annotations).toMatchObject({ "example.com/kept": "yes", "pulumi.com/waitFor": "condition=VariablesReady" });
    // The built class is left as it was.
    expect(clusterClass.metadata.annotations).toBeUndefined();
  });
});
