import { createHash } from "node:crypto";
import type { CarenExtensionNames } from "./caren-extensions";
import { catalog } from "../versions/catalog";
import { apiVersions, type Manifest } from "./cluster-api-kinds";
import { hcloudCcmSecretName } from "./hcloud-ccm-values";
import {
  advertisePrivateAddressScriptFile,
  advertisePrivateAddressScriptPath,
  installKubernetesCommand,
  committedNodeScripts,
  installKubernetesScriptFile,
  installKubernetesScriptPath,
  shippedNodeScript,
  type NodeScripts,
} from "./node-bootstrap";
import { hetznerLocations, loadBalancerTypes } from "../facts/hetzner";
import { CarenSchemaProvider } from "../facts/caren";

/**
 * The fleet's one ClusterClass for Hetzner Cloud and its templates, as plain manifests.
 *
 * Variable schema: `clusterConfig` is not declared here; CAREN publishes it. CAPI hands an
 * external patch only the variables its own `discoverVariablesExtension` defined
 * (sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/topology/cluster/patches/engine.go,
 * `definitionsForPatch`), so each CAREN patch entry names CAREN's discovery handler, and an
 * inline `clusterConfig` next to it would be refused as a conflicting schema
 * (internal/controllers/clusterclass/clusterclass_controller.go,
 * `addDefinitionToExistingStatusVariable`; two identical discovered schemas are accepted). The
 * schema is the one of CAREN's Docker provider ({@link carenClusterConfigSchema}): CAREN's
 * generic schema has no `addons` (no Cilium), and the other providers' need their own
 * infrastructure or restrict `kubeProxy.mode`. The stack config (fleet-config.ts) stays the
 * interface and allows only what works on Hetzner; docs/architecture.md has the trade-offs.
 */

/** Namespace of the ClusterClass and its templates; tenant Clusters reference it across namespaces. */
export const clusterClassNamespace = "capi-fleet-system";
/** Name of the ClusterClass. */
export const clusterClassName = "hetzner-caren";
/**
 * How CAPI names a tenant's HetznerCluster: after its Cluster, as CAPH's own cluster templates
 * do (templates/cluster-templates/v1beta1/bases/hcloud-hetznerCluster.yaml at v1.1.8: `name:
 * "${CLUSTER_NAME}"`). CAPI's default, `{{ .cluster.name }}-{{ .random }}`
 * (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/desired_state.go
 * `computeInfrastructureCluster`), would make the name, and with it the ownership label CAPH
 * puts on every server (`caph-cluster-<name>`), unknown until the object exists. CAPI keeps the
 * name of an existing HetznerCluster, so the template applies to clusters created with it.
 */
export const infrastructureClusterNamingTemplate = "{{ .cluster.name }}";

/** The name of a tenant's HetznerCluster ({@link infrastructureClusterNamingTemplate}). */
export function hetznerClusterNameOf(clusterName: string): string {
  return clusterName;
}

/** The one worker class (MachineDeploymentClass) of the ClusterClass. */
export const workerClassName = "hcloud-worker";

/** Variable names, shared by the ClusterClass and the tenant Clusters that set them. */
export const classVariables = {
  clusterConfig: "clusterConfig",
  regions: "hcloudRegions",
  network: "hcloudNetwork",
  placementGroups: "hcloudPlacementGroups",
  sshKeys: "hcloudSSHKeys",
  apiLoadBalancerType: "hcloudAPILoadBalancerType",
  controlPlaneMachineType: "hcloudControlPlaneMachineType",
  controlPlaneImage: "hcloudControlPlaneImageName",
  controlPlanePlacementGroup: "hcloudControlPlanePlacementGroup",
  workerMachineType: "hcloudWorkerMachineType",
  workerImage: "hcloudWorkerImageName",
  workerPlacementGroup: "hcloudWorkerPlacementGroup",
} as const;

/**
 * Whose `clusterConfig` schema the class takes from CAREN (`<provider>clusterconfigvars-dv`):
 * the Docker one, the only one with both `addons` and the full `kubeProxy.mode` enum that needs
 * no provider of its own (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 * api/v1alpha1/crds/caren.nutanix.com_dockerclusterconfigs.yaml; the EKS one allows only
 * `disabled`, the generic one has no `addons`).
 */
export const carenClusterConfigSchema: CarenSchemaProvider = "docker";

/** CAREN's Cilium addon: the only CNI its lifecycle hooks install on a HetznerCluster. */
export const carenCniProviders = ["Cilium"] as const;

/**
 * Secret with the tenant's hcloud token, in the Cluster's namespace (CAPH's quickstart name
 * and key). CAPH copies it into the workload cluster's kube-system under the same name and
 * adds `token` and `network` there only when it is named `hcloud`, which is the Secret the
 * hcloud CCM and CSI charts read.
 */
export const hcloudSecret = { name: hcloudCcmSecretName, tokenKey: "hcloud" } as const;

/**
 * Node health: a machine that has no Node after 20 minutes, or whose Node is not Ready for
 * 5 minutes, is remediated. The startup timeout is long because a Node gets its providerID
 * (and so its Machine a nodeRef) only after the hcloud CCM runs, which CAAPH installs once
 * the API answers; a short timeout recreates servers in a loop (CAPH #1271).
 */
const nodeStartupTimeoutSeconds = 1200;
const unhealthyNodeConditions = [
  { type: "Ready", status: "Unknown", timeoutSeconds: 300 },
  { type: "Ready", status: "False", timeoutSeconds: 300 },
];

/** Where CAREN's kubeletConfiguration patches land; kubeadm reads patches only from a configured directory. */
const kubeadmPatchesDirectory = "/etc/kubernetes/patches";

/** Inputs of the class: everything that is not a tenant's choice. */
export interface HetznerClusterClassOptions {
  /** Handler names of the installed CAREN release. */
  readonly carenExtensionNames: CarenExtensionNames;
  /** `spec.kubernetesVersions`; defaults to the catalog's tenant versions. */
  readonly kubernetesVersions?: readonly string[];
  /** The node scripts' text as committed, comments included; defaults to the committed files. */
  readonly nodeScripts?: NodeScripts;
}

/** The roles of the templates the class references. */
export type TemplateRole = "infrastructureCluster" | "controlPlane" | "controlPlaneMachine" | "workerMachine" | "workerBootstrap" | "remediation";

/** The templates the class references, by role. */
export type HetznerClusterClassTemplates = Readonly<Record<TemplateRole, Manifest>>;

/** The class and its templates. */
export interface HetznerClusterClassManifests {
  readonly templates: HetznerClusterClassTemplates;
  readonly clusterClass: Manifest;
}

/** Builds the ClusterClass and its templates. */
export function hetznerClusterClassManifests(options: HetznerClusterClassOptions): HetznerClusterClassManifests {
  const templates = hetznerClusterClassTemplates(options.nodeScripts);
  const ref = (manifest: Manifest) => ({ apiVersion: manifest.apiVersion, kind: manifest.kind, name: manifest.metadata.name });
  const healthChecks = { nodeStartupTimeoutSeconds, unhealthyNodeConditions };
  const clusterClass: Manifest = {
    apiVersion: apiVersions.cluster,
    kind: "ClusterClass",
    metadata: { name: clusterClassName, namespace: clusterClassNamespace },
    spec: {
      // One patch per minor, no gaps: CAPI walks every minor up to a Cluster's target.
      kubernetesVersions: [...(options.kubernetesVersions ?? catalog.tenantKubernetesVersions)],
      infrastructure: { templateRef: ref(templates.infrastructureCluster), naming: { template: infrastructureClusterNamingTemplate } },
      controlPlane: {
        templateRef: ref(templates.controlPlane),
        machineInfrastructure: { templateRef: ref(templates.controlPlaneMachine) },
        healthCheck: { checks: healthChecks, remediation: { templateRef: ref(templates.remediation) } },
      },
      workers: {
        machineDeployments: [
          {
            class: workerClassName,
            bootstrap: { templateRef: ref(templates.workerBootstrap) },
            infrastructure: { templateRef: ref(templates.workerMachine) },
            healthCheck: { checks: healthChecks, remediation: { templateRef: ref(templates.remediation) } },
          },
        ],
      },
      variables: clusterClassVariables(),
      patches: clusterClassPatches(options.carenExtensionNames),
    },
  };
  return { templates, clusterClass };
}

/**
 * The templates. Each is named after a hash of its content: CAPI and CAPH reject changes
 * to a template's spec, so a changed template is a new object (Pulumi creates it, points
 * the class at it, then deletes the old one), and CAPI rolls the machines.
 */
export function hetznerClusterClassTemplates(nodeScripts: NodeScripts = committedNodeScripts): HetznerClusterClassTemplates {
  return {
    infrastructureCluster: template(apiVersions.hetzner, "HetznerClusterTemplate", "cluster", {
      template: {
        spec: {
          // Placeholders, each overwritten by the `hetzner-cluster` patch from a required variable.
          // Stryker disable next-line ArrayDeclaration: equivalent, the patch always replaces the list (CAPH's CRD requires only that it is there)
          controlPlaneRegions: [hetznerLocations[0]],
          // Stryker disable next-line ObjectLiteral: equivalent, CAPH's CRD defaults `enabled` to true and the patch sets type and region
          controlPlaneLoadBalancer: { enabled: true, type: loadBalancerTypes[0], region: hetznerLocations[0] },
          // Stryker disable next-line BooleanLiteral: equivalent, the patch replaces the whole hcloudNetwork (CAPH's CRD requires `enabled`)
          hcloudNetwork: { enabled: true },
          sshKeys: {},
          hetznerSecretRef: { name: hcloudSecret.name, key: { hcloudToken: hcloudSecret.tokenKey } },
        },
      },
    }),
    controlPlaneMachine: hcloudMachineTemplate("control-plane"),
    workerMachine: hcloudMachineTemplate("worker"),
    controlPlane: template(apiVersions.kubeadmControlPlane, "KubeadmControlPlaneTemplate", "control-plane", {
      template: {
        spec: {
          kubeadmConfigSpec: {
            initConfiguration: { nodeRegistration: externalCloudProviderRegistration(), patches: { directory: kubeadmPatchesDirectory } },
            joinConfiguration: { nodeRegistration: externalCloudProviderRegistration(), patches: { directory: kubeadmPatchesDirectory } },
            ...nodeBootstrapFiles("control-plane", nodeScripts),
          },
        },
      },
    }),
    workerBootstrap: template(apiVersions.kubeadmBootstrap, "KubeadmConfigTemplate", "worker", {
      template: {
        spec: {
          joinConfiguration: { nodeRegistration: externalCloudProviderRegistration(), patches: { directory: kubeadmPatchesDirectory } },
          // Stryker disable next-line StringLiteral: equivalent, nodeBootstrapFiles tells only "control-plane" apart
          ...nodeBootstrapFiles("worker", nodeScripts),
        },
      },
    }),
    // A server that stays unhealthy is first rebooted once, then replaced by CAPI.
    remediation: movedByClusterctl(
      template(apiVersions.hetzner, "HCloudRemediationTemplate", "remediation", {
        template: { spec: { strategy: { type: "Reboot", retryLimit: 1, timeout: "180s" } } },
      }),
    ),
  };
}

/**
 * The class's remediation template, in a tenant's namespace. The MachineHealthChecks CAPI's topology
 * creates copy the class's `remediation.templateRef`, which has no namespace, and the health-check
 * controller resolves it in the check's own namespace, the tenant's
 * (sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/machinehealthcheck/machinehealthcheck_controller.go,
 * `TemplateRef.ToObjectReference(m.Namespace)`); unlike the machine templates, nothing clones it there.
 * Same name as the class's, so a changed template reaches the tenants under its new name.
 */
export function remediationTemplateIn(namespace: string): Manifest {
  const { remediation } = hetznerClusterClassTemplates();
  return { ...remediation, metadata: { ...remediation.metadata, namespace } };
}

function hcloudMachineTemplate(role: "control-plane" | "worker"): Manifest {
  return template(apiVersions.hetzner, "HCloudMachineTemplate", role, {
    // Placeholders, overwritten by the machine patches from the tenant's variables.
    // Stryker disable next-line StringLiteral: equivalent, the machine patch always sets type (machineType is a required variable)
    template: { spec: { type: "cx23", imageName: catalog.tenantNodeImage } },
  });
}

/** The kubelet leaves node initialisation (providerID, addresses) to the hcloud CCM. */
function externalCloudProviderRegistration() {
  return { kubeletExtraArgs: [{ name: "cloud-provider", value: "external" }] };
}

/**
 * The first entry of every template's `preKubeadmCommands`, harmless and idempotent (kubeadm's
 * patch directory, where CAREN's kubelet patches land). It exists so that the list is never
 * empty (v1beta2 refuses an empty list, minItems 1) and the `kubernetes-install` patch can
 * insert at index 0 instead of setting the whole list: CAREN's GeneratePatches append their own
 * commands (containerd reconfiguration), and a whole-list `add` running after them would drop
 * those silently, whatever the patch order. CAPI refuses `replace .../0` on a template.
 */
export const preKubeadmCommandsSeed = `mkdir -p ${kubeadmPatchesDirectory}`;

/**
 * The install script as a file, and on control planes the script that makes kubeadm advertise
 * the private address (the tenant firewall closes the public one); the commands that run them
 * come from the `kubernetes-install` patch, in front of {@link preKubeadmCommandsSeed}.
 */
function nodeBootstrapFiles(role: "control-plane" | "worker", nodeScripts: NodeScripts) {
  const script = (path: string, content: string) => ({ path, owner: "root:root", permissions: "0755", content });
  return {
    files: [
      script(installKubernetesScriptPath, shippedNodeScript(nodeScripts.installKubernetes, installKubernetesScriptFile)),
      ...(role === "control-plane"
        ? [script(advertisePrivateAddressScriptPath, shippedNodeScript(nodeScripts.advertisePrivateAddress, advertisePrivateAddressScriptFile))]
        : []),
    ],
    preKubeadmCommands: [preKubeadmCommandsSeed],
  };
}

/**
 * The label that makes `clusterctl move` (the fleet backup) take an object along even when no
 * ownerReference leads to it (sigs.k8s.io/cluster-api@v1.12.10:
 * cmd/clusterctl/client/cluster/objectgraph.go, objMetaToNode): the class's remediation template,
 * and a tenant's Secrets and ConfigMap (tenant/tenant-cluster-plan.ts).
 */
// Stryker disable next-line StringLiteral: equivalent, clusterctl checks only that the label is there (objMetaToNode)
export const clusterctlMoveLabels: Readonly<Record<string, string>> = { "clusterctl.cluster.x-k8s.io/move": "" };

/**
 * `clusterctl move` takes the class's templates along through the ownerReferences CAPI gives
 * them, which it sets on every template but the remediation one
 * (sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/clusterclass/clusterclass_controller.go,
 * reconcileExternalReferences); the {@link clusterctlMoveLabels} move it anyway.
 */
function movedByClusterctl(manifest: Manifest): Manifest {
  return { ...manifest, metadata: { ...manifest.metadata, labels: { ...manifest.metadata.labels, ...clusterctlMoveLabels } } };
}

function template(apiVersion: string, kind: string, role: string, spec: Record<string, unknown>): Manifest {
  const digest = createHash("sha256").update(JSON.stringify({ apiVersion, kind, spec })).digest("hex").slice(0, 10);
  return { apiVersion, kind, metadata: { name: `${clusterClassName}-${role}-${digest}`, namespace: clusterClassNamespace }, spec };
}

const stringEnum = (values: readonly string[]) => ({ type: "string", enum: [...values] });

/**
 * The class's own variables (inline schemas); `clusterConfig` comes from CAREN (see the module comment).
 * Every optional one has a default, which CAPI's Cluster webhook fills in before it checks the
 * required ones (sigs.k8s.io/cluster-api@v1.12.10: internal/topology/variables/cluster_variable_defaulting.go).
 */
export function clusterClassVariables(): Record<string, unknown>[] {
  const variable = (name: string, required: boolean, openAPIV3Schema: Record<string, unknown>) => ({
    name,
    required,
    schema: { openAPIV3Schema },
  });
  const names = classVariables;
  return [
    variable(names.regions, true, { type: "array", minItems: 1, items: stringEnum(hetznerLocations) }),
    variable(names.network, true, {
      type: "object",
      required: ["enabled", "cidrBlock", "subnetCidrBlock", "networkZone"],
      properties: {
        enabled: { type: "boolean" },
        cidrBlock: { type: "string" },
        subnetCidrBlock: { type: "string" },
        networkZone: stringEnum(["eu-central", "us-east", "us-west", "ap-southeast"]),
      },
    }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.placementGroups, false, {
      type: "array",
      default: [],
      items: { type: "object", required: ["name", "type"], properties: { name: { type: "string", minLength: 1 }, type: stringEnum(["spread"]) } },
    }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.sshKeys, false, {
      type: "array",
      default: [],
      items: { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 1 } } },
    }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.apiLoadBalancerType, false, { ...stringEnum(loadBalancerTypes), default: loadBalancerTypes[0] }),
    variable(names.controlPlaneMachineType, true, { type: "string", minLength: 1 }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.controlPlaneImage, false, { type: "string", minLength: 1, default: catalog.tenantNodeImage }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.controlPlanePlacementGroup, false, { type: "string", default: "" }),
    variable(names.workerMachineType, true, { type: "string", minLength: 1 }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.workerImage, false, { type: "string", minLength: 1, default: catalog.tenantNodeImage }),
    // Stryker disable next-line BooleanLiteral: equivalent, CAPI creates a missing variable from its default before it checks the required ones
    variable(names.workerPlacementGroup, false, { type: "string", default: "" }),
  ];
}

type JsonPatch = { op: "add"; path: string; valueFrom: { variable: string } | { template: string } };
const fromVariable = (path: string, variable: string): JsonPatch => ({ op: "add", path, valueFrom: { variable } });
const fromTemplate = (path: string, template: string): JsonPatch => ({ op: "add", path, valueFrom: { template } });
const nonEmpty = (variable: string) => `{{ if .${variable} }}true{{ end }}`;
/**
 * JSON patches that put the node's commands in front of `preKubeadmCommands`, in order: the
 * install command for a version expression, then on control planes the advertise-address
 * script (after the install, so that its failure can take the installed kubeadm out of the
 * way). Each is an insert at index 0, so commands that other patches appended stay; CAPI's
 * webhook takes no other index ("arrays can only be accessed using "0" (prepend) or "-"
 * (append)", sigs.k8s.io/cluster-api@v1.12.10: internal/webhooks/patch_validation.go), so
 * the commands are prepended last one first.
 */
const commandInserts = (listPath: string, versionTemplate: string, role: "control-plane" | "worker"): JsonPatch[] =>
  [installKubernetesCommand(versionTemplate), ...(role === "control-plane" ? [advertisePrivateAddressScriptPath] : [])]
    .reverse()
    // A JSON string is a YAML scalar CAPI parses back to the same string.
    .map((command) => fromTemplate(`${listPath}/0`, JSON.stringify(command)));

/**
 * Patches, applied in order: the Hetzner settings and the per-node Kubernetes install
 * first, then CAREN's generic cluster and worker patches, which append their own
 * preKubeadmCommands (the containerd reconfiguration). Both CAREN entries take the
 * `clusterConfig` schema from CAREN's discovery handler, so CAPI passes them the variable.
 */
export function clusterClassPatches(caren: CarenExtensionNames): Record<string, unknown>[] {
  const names = classVariables;
  const hetznerCluster = { apiVersion: apiVersions.hetzner, kind: "HetznerClusterTemplate", matchResources: { infrastructureCluster: true } };
  const controlPlaneMachines = { apiVersion: apiVersions.hetzner, kind: "HCloudMachineTemplate", matchResources: { controlPlane: true } };
  const workerMachines = {
    apiVersion: apiVersions.hetzner,
    kind: "HCloudMachineTemplate",
    matchResources: { machineDeploymentClass: { names: [workerClassName] } },
  };
  const controlPlane = { apiVersion: apiVersions.kubeadmControlPlane, kind: "KubeadmControlPlaneTemplate", matchResources: { controlPlane: true } };
  const workerBootstrap = {
    apiVersion: apiVersions.kubeadmBootstrap,
    kind: "KubeadmConfigTemplate",
    matchResources: { machineDeploymentClass: { names: [workerClassName] } },
  };
  const spec = "/spec/template/spec";
  return [
    {
      name: "hetzner-cluster",
      definitions: [
        {
          selector: hetznerCluster,
          jsonPatches: [
            fromVariable(`${spec}/controlPlaneRegions`, names.regions),
            fromTemplate(`${spec}/controlPlaneLoadBalancer/region`, `{{ index .${names.regions} 0 }}`),
            fromVariable(`${spec}/controlPlaneLoadBalancer/type`, names.apiLoadBalancerType),
            fromVariable(`${spec}/hcloudNetwork`, names.network),
            fromVariable(`${spec}/hcloudPlacementGroups`, names.placementGroups),
            fromVariable(`${spec}/sshKeys/hcloud`, names.sshKeys),
          ],
        },
      ],
    },
    {
      name: "control-plane-machines",
      definitions: [
        {
          selector: controlPlaneMachines,
          jsonPatches: [
            fromVariable(`${spec}/type`, names.controlPlaneMachineType),
            fromVariable(`${spec}/imageName`, names.controlPlaneImage),
          ],
        },
      ],
    },
    {
      name: "control-plane-placement-group",
      enabledIf: nonEmpty(names.controlPlanePlacementGroup),
      definitions: [{ selector: controlPlaneMachines, jsonPatches: [fromVariable(`${spec}/placementGroupName`, names.controlPlanePlacementGroup)] }],
    },
    {
      name: "worker-machines",
      definitions: [
        {
          selector: workerMachines,
          jsonPatches: [fromVariable(`${spec}/type`, names.workerMachineType), fromVariable(`${spec}/imageName`, names.workerImage)],
        },
      ],
    },
    {
      name: "worker-placement-group",
      enabledIf: nonEmpty(names.workerPlacementGroup),
      definitions: [{ selector: workerMachines, jsonPatches: [fromVariable(`${spec}/placementGroupName`, names.workerPlacementGroup)] }],
    },
    {
      // Each node installs the kubelet of its own version: mid-chain the control plane
      // and the workers run different versions, and both differ from the Cluster's target.
      name: "kubernetes-install",
      definitions: [
        {
          selector: controlPlane,
          jsonPatches: commandInserts(`${spec}/kubeadmConfigSpec/preKubeadmCommands`, "{{ .builtin.controlPlane.version }}", "control-plane"),
        },
        {
          selector: workerBootstrap,
          jsonPatches: commandInserts(`${spec}/preKubeadmCommands`, "{{ .builtin.machineDeployment.version }}", "worker"),
        },
      ],
    },
    {
      name: "caren-cluster",
      external: { generatePatchesExtension: caren.clusterPatches("generic"), discoverVariablesExtension: caren.clusterConfigVariables(carenClusterConfigSchema) },
    },
    {
      name: "caren-workers",
      external: { generatePatchesExtension: caren.workerPatches("generic"), discoverVariablesExtension: caren.clusterConfigVariables(carenClusterConfigSchema) },
    },
  ];
}

/** How long Pulumi waits, by default, for CAPI to accept the class's variables. */
export const defaultClassReadyTimeoutSeconds = 300;

/**
 * The ClusterClass as the HetznerClusterClass component (components/hetzner-cluster-class)
 * registers it: awaited until CAPI has reconciled its variables (`VariablesReady`), which needs
 * CAREN's discovery handler to answer.
 */
export function awaitedClusterClass(clusterClass: Manifest, readyTimeoutSeconds: number = defaultClassReadyTimeoutSeconds): Manifest {
  const metadata = clusterClass.metadata;
  return {
    ...clusterClass,
    metadata: {
      ...metadata,
      annotations: {
        ...metadata.annotations,
        "pulumi.com/waitFor": "condition=VariablesReady",
        "pulumi.com/timeoutSeconds": String(readyTimeoutSeconds),
      },
    },
  };
}
