import type { FirewallRuleSpec } from "../management/firewall-rules";
import { apiVersions, type Manifest } from "../platform/cluster-api-kinds";
import { clusterAutoscalerBounds, type ClusterAutoscalerTarget } from "../platform/cluster-autoscaler";
import { fleetRepositoryName, kustomizationSpec } from "../platform/flux";
import { clusterClassNamespace, clusterctlMoveLabels, hcloudSecret, remediationTemplateIn } from "../platform/hetzner-cluster-class";
import { isKarpenterPool, type KarpenterPool, type KarpenterTarget } from "../platform/karpenter";
import type { Mirrors } from "../platform/mirrors";
import { platformNamespaces } from "../platform/platform-namespaces";
import { ciliumValuesConfigMapName, ciliumValuesData, registryCredentialsKeys, registryCredentialsSecretName } from "./caren-cluster-config";
import { hcloudCcmProxy, hcloudCsiProxy, tenantClusterManifest, tenantLabels, workloadKubeconfigSecret, type TenantClusterSettings } from "./tenant-cluster";
import { tenantFirewallRules, tenantServerLabelSelector } from "./tenant-firewall";
import { scriptEntryPoints } from "../contract/script-entry-points";

/**
 * A tenant's whole desired state as plain data, the way Cluster API computes a Cluster's
 * (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/desired_state.go): every object,
 * its Pulumi resource name and what it waits for. The TenantCluster component
 * (components/tenant-cluster) asks for the plan and registers it, in one direction; secret
 * values never enter it, only which of the component's secrets goes where ({@link SecretRef}).
 *
 * Deletion order (Pulumi deletes dependents first): apps, drain, autoscaler and Karpenter →
 * kubeconfig → Cluster → HelmChartProxies, Secrets, ConfigMap, firewall → namespace. The CCM
 * therefore still runs while the drain and CAREN's BeforeClusterDelete hook delete load
 * balancers, CAPH still has its token while it deletes the servers, and the firewall exists
 * before CAPH creates the first server and until the last one is gone.
 */

/**
 * How pulumi-kubernetes deletes an object: "foreground" (its default), "background" or
 * "orphan" (pulumi/pulumi-kubernetes provider/pkg/metadata/annotations.go and overrides.go).
 */
export const deletionPropagationAnnotation = "pulumi.com/deletionPropagationPolicy";

/** What the plan is computed from: the tenant's settings and the component's plain arguments. */
export interface TenantClusterPlanInput {
  /** The component's name; every resource's name starts with it. */
  readonly name: string;
  readonly tenant: TenantClusterSettings;
  /** The registry credentials the component holds, by name, and whether a CA certificate is among them (their values stay Pulumi secrets). */
  readonly registryCredentials?: Readonly<Record<string, { readonly caCrt: boolean }>>;
  /** Sources allowed to reach SSH on the tenant's servers (`management.adminCidrs`); default none. */
  readonly adminCidrs?: readonly string[];
  /** Where the add-on charts come from instead of their public repositories (`mirrors`). */
  readonly mirrors?: Mirrors;
  /** How long `up` waits for the Cluster (or only its kubeconfig). Default 1800. */
  readonly kubeconfigWaitSeconds?: number;
  /** How long the load-balancer drain may take on deletion. Default 600. */
  readonly drainWaitSeconds?: number;
  /** How long Pulumi waits for CAPI to delete the cluster. Default 60. */
  readonly deleteTimeoutMinutes?: number;
}

/** A secret value the component holds as a Pulumi secret; the plan only says which one goes where. */
export type SecretRef =
  /** The tenant's hcloud token (its own Hetzner project). */
  | { readonly secret: "hcloud-token" }
  /** The management cluster's admin kubeconfig. */
  | { readonly secret: "management-kubeconfig" }
  /** The workload cluster's admin kubeconfig, as the component reads it from CAPI's Secret. */
  | { readonly secret: "workload-kubeconfig" }
  /** One field of a set of registry credentials. */
  | { readonly secret: "registry-credential"; readonly credentials: string; readonly field: "username" | "password" | "caCrt" };

/** What a part waits for: another part of the plan, or one of the component's own inputs. */
export type TenantPlanStep =
  /** The resources the component itself was told to wait for (its `dependsOn`). */
  | "upstream"
  | "clusterClass"
  | "carenReady"
  | "fluxInstance"
  | "namespace"
  | "hcloudSecret"
  | "firewall"
  | "registryCredentials"
  | "ciliumValues"
  | "addons"
  | "remediationTemplate"
  | "cluster"
  | "kubeconfigCommand";

/** One resource of the plan: its Pulumi name and what it waits for (so Pulumi deletes it first). */
export interface PlannedPart {
  readonly resourceName: string;
  readonly dependsOn: readonly TenantPlanStep[];
}

/** Labels and place of an object on the management cluster. */
export interface PlannedMetadata {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A Secret: its metadata and, for each key, which secret value it holds. */
export interface PlannedSecret extends PlannedPart {
  readonly metadata: PlannedMetadata;
  readonly stringData: Readonly<Record<string, SecretRef>>;
}

/** A Kubernetes object given whole. */
export interface PlannedManifest extends PlannedPart {
  readonly manifest: Manifest;
}

/** A local command (components/local-command-dir.ts says where it runs): its command line and environment, plain values and secret references in order. */
export interface PlannedCommand extends PlannedPart {
  readonly create?: string;
  readonly delete?: string;
  readonly environment: Readonly<Record<string, string | SecretRef>>;
}

/** The tenant's desired state (see the module comment), in the order the component registers it. */
export interface TenantClusterPlan {
  readonly namespace: PlannedPart & { readonly metadata: { readonly name: string } };
  /** The `hcloud` Secret CAPH reads (and copies into the workload cluster for the CCM and CSI driver). */
  readonly hcloudSecret: PlannedSecret;
  /** The tenant's own Hetzner project: the firewall is created there, with its token. */
  readonly hcloudProject: PlannedPart & { readonly token: SecretRef };
  /** The firewall of the tenant's servers, applied by Hetzner to every server CAPH labels as the cluster's. */
  readonly firewall: PlannedPart & {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly rules: readonly FirewallRuleSpec[];
    readonly applyTos: readonly { readonly labelSelector: string }[];
  };
  /** Per set of registry credentials, the tenant's copy and then the class's (caren-cluster-config.ts, registryCredentialsSecretName). */
  readonly registryCredentials: readonly PlannedSecret[];
  /** The ConfigMap with the tenant's Cilium values, when it sets any. */
  readonly ciliumValues?: PlannedPart & { readonly metadata: PlannedMetadata; readonly data: Readonly<Record<string, string>> };
  /** The hcloud CCM and CSI driver (CAAPH HelmChartProxies). */
  readonly addons: readonly PlannedManifest[];
  /** The remediation template the health checks look up in the tenant's namespace. */
  readonly remediationTemplate: PlannedManifest;
  /** The topology Cluster, and how long Pulumi waits for CAPI to delete it. */
  readonly cluster: PlannedManifest & { readonly deleteTimeout: string };
  /** The bounded wait for the Cluster, after which CAPI's kubeconfig Secret exists. */
  readonly kubeconfigCommand: PlannedCommand;
  /** CAPI's kubeconfig Secret, read (never managed) once the command has waited: its id and the key of the kubeconfig. */
  readonly kubeconfigRead: PlannedPart & { readonly id: string; readonly key: string };
  /** The cluster autoscaler of the tenant's autoscaled pools, on the management cluster. */
  readonly clusterAutoscaler?: PlannedPart & { readonly target: ClusterAutoscalerTarget; readonly mirrors?: Mirrors };
  /** Karpenter (experimental) for the tenant's Karpenter pools, on the management cluster. */
  readonly karpenter?: PlannedPart & {
    readonly target: KarpenterTarget;
    readonly pools: readonly KarpenterPool[];
    readonly clusterSelector: Readonly<Record<string, string>>;
    readonly managementKubeconfig: SecretRef;
  };
  /** Does nothing on create; its delete drains the LoadBalancer Services before the Cluster is deleted. */
  readonly loadBalancerDrain: PlannedCommand;
  /** The Flux Kustomization that applies the tenant's apps inside the workload cluster. */
  readonly apps?: PlannedManifest;
}

/** The tenant's whole desired state (see the module comment). */
export function tenantClusterPlan(input: TenantClusterPlanInput): TenantClusterPlan {
  const { name, tenant, mirrors } = input;
  const kubeconfigSecret = workloadKubeconfigSecret(tenant.name);
  const tenantObject = (objectName: string) => ({ name: objectName, namespace: tenant.namespace, labels: clusterctlMoveLabels });
  const manifestPart = (manifest: Manifest): PlannedManifest => ({ resourceName: `${name}-${manifest.metadata.name}`, manifest, dependsOn: ["namespace"] });
  const location = { TENANT_NAMESPACE: tenant.namespace, TENANT_CLUSTER: tenant.name };
  const managementKubeconfig: SecretRef = { secret: "management-kubeconfig" };
  const ciliumData = ciliumValuesData(tenant);
  const registryCredentials = Object.entries(input.registryCredentials ?? {}).flatMap(([credentials, { caCrt }]) => registryCredentialSecrets(input, credentials, caCrt));
  const karpenterPools = tenant.workers.filter((pool): pool is typeof pool & KarpenterPool => isKarpenterPool(pool));
  return {
    namespace: { resourceName: `${name}-namespace`, metadata: { name: tenant.namespace }, dependsOn: ["upstream"] },
    hcloudSecret: {
      resourceName: `${name}-hcloud`,
      metadata: tenantObject(hcloudSecret.name),
      stringData: { [hcloudSecret.tokenKey]: { secret: "hcloud-token" } },
      dependsOn: ["namespace"],
    },
    hcloudProject: { resourceName: `${name}-hcloud`, token: { secret: "hcloud-token" }, dependsOn: [] },
    firewall: {
      resourceName: `${name}-firewall`,
      name: `${tenant.name}-nodes`,
      labels: { [tenantLabels.tenant]: tenant.name },
      rules: tenantFirewallRules({ nodesCidr: tenant.network.nodesCidr, adminCidrs: input.adminCidrs ?? [], sshKeyName: tenant.sshKeyName }),
      applyTos: [{ labelSelector: tenantServerLabelSelector(tenant.name) }],
      dependsOn: [],
    },
    registryCredentials,
    ...(ciliumData
      ? { ciliumValues: { resourceName: `${name}-cilium-values`, metadata: tenantObject(ciliumValuesConfigMapName), data: ciliumData, dependsOn: ["namespace"] } }
      : {}),
    addons: [hcloudCcmProxy(tenant, mirrors), hcloudCsiProxy(tenant, mirrors)].map(manifestPart),
    remediationTemplate: manifestPart(remediationTemplateIn(tenant.namespace)),
    cluster: {
      resourceName: name,
      manifest: clusterManifest(tenant),
      // Pulumi waits this long for CAPI's teardown (servers, load balancers) before it deletes
      // what the Cluster depends on, such as the token CAPH needs for it.
      deleteTimeout: `${input.deleteTimeoutMinutes ?? 60}m`,
      // CAREN reads the Secrets and the ConfigMap while it patches and installs, CAPH the token;
      // the class, CAREN's webhooks and its discovered handlers must be there before a topology Cluster.
      dependsOn: [
        "namespace",
        "hcloudSecret",
        ...(registryCredentials.length > 0 ? (["registryCredentials"] as const) : []),
        ...(ciliumData ? (["ciliumValues"] as const) : []),
        "remediationTemplate",
        "firewall",
        "addons",
        "clusterClass",
        "carenReady",
      ],
    },
    kubeconfigCommand: {
      resourceName: `${name}-kubeconfig`,
      create: `node ${scriptEntryPoints.workloadKubeconfig}`,
      environment: {
        ...location,
        MANAGEMENT_KUBECONFIG: managementKubeconfig,
        WAIT_SECONDS: String(input.kubeconfigWaitSeconds ?? 1800),
        // The script waits for the Cluster's v1beta2 Available condition first.
        WAIT_FOR_READY: String(tenant.waitForReady),
      },
      dependsOn: ["cluster"],
    },
    kubeconfigRead: { resourceName: `${name}-kubeconfig-secret`, id: `${tenant.namespace}/${kubeconfigSecret.name}`, key: kubeconfigSecret.key, dependsOn: ["kubeconfigCommand"] },
    // The autoscaler mounts CAPI's kubeconfig Secret, which the command has waited for; Pulumi deletes it before the Cluster.
    ...(tenant.workers.some((pool) => clusterAutoscalerBounds(pool) !== undefined)
      ? {
          clusterAutoscaler: {
            resourceName: `${name}-autoscaler`,
            target: { name: tenant.name, namespace: tenant.namespace, kubernetesVersion: tenant.kubernetesVersion, kubeconfigSecret },
            ...(mirrors ? { mirrors } : {}),
            dependsOn: ["kubeconfigCommand"],
          },
        }
      : {}),
    // Karpenter starts once the Cluster is Available (its MachineDeployments exist), and is deleted before it.
    ...(karpenterPools.length > 0 && tenant.karpenter
      ? {
          karpenter: {
            resourceName: `${name}-karpenter`,
            target: { name: tenant.name, namespace: tenant.namespace, kubeconfigSecret, image: tenant.karpenter.image },
            pools: karpenterPools,
            clusterSelector: { [tenantLabels.tenant]: tenant.name },
            managementKubeconfig,
            dependsOn: ["kubeconfigCommand"],
          },
        }
      : {}),
    loadBalancerDrain: {
      resourceName: `${name}-load-balancer-drain`,
      delete: `node ${scriptEntryPoints.drainLoadBalancers}`,
      environment: {
        ...location,
        MANAGEMENT_KUBECONFIG: managementKubeconfig,
        WORKLOAD_KUBECONFIG: { secret: "workload-kubeconfig" },
        HCLOUD_TOKEN: { secret: "hcloud-token" },
        DRAIN_WAIT_SECONDS: String(input.drainWaitSeconds ?? 600),
      },
      dependsOn: ["cluster", "kubeconfigCommand"],
    },
    ...(tenant.apps ? { apps: { resourceName: `${name}-apps`, manifest: appsKustomization(tenant, tenant.apps.path), dependsOn: ["kubeconfigCommand", "fluxInstance"] } } : {}),
  };
}

/**
 * The two copies of one set of registry credentials. CAREN reads the Secret under one name in two
 * namespaces (caren-cluster-config.ts, registryCredentialsSecretName): its data in the
 * ClusterClass's namespace, where it patches the class's templates, and in the tenant's namespace,
 * where its preflight webhook checks it and where it makes the Cluster the owner. Only the
 * tenant's copy gets that owner (an owner in another namespace would make the garbage collector
 * delete the class's copy), so the class's copy carries the tenant's label instead.
 */
function registryCredentialSecrets(input: TenantClusterPlanInput, credentials: string, caCrt: boolean): PlannedSecret[] {
  const { name, tenant } = input;
  const secretName = registryCredentialsSecretName(tenant.name, credentials);
  const field = (key: "username" | "password" | "caCrt"): SecretRef => ({ secret: "registry-credential", credentials, field: key });
  const stringData = {
    [registryCredentialsKeys.username]: field("username"),
    [registryCredentialsKeys.password]: field("password"),
    ...(caCrt ? { [registryCredentialsKeys.caCrt]: field("caCrt") } : {}),
  };
  return [
    { resourceName: `${name}-registry-credentials-${credentials}`, metadata: { name: secretName, namespace: tenant.namespace, labels: clusterctlMoveLabels }, stringData, dependsOn: ["namespace"] },
    {
      resourceName: `${name}-registry-credentials-${credentials}-class`,
      metadata: { name: secretName, namespace: clusterClassNamespace, labels: { ...clusterctlMoveLabels, [tenantLabels.tenant]: tenant.name } },
      stringData,
      // The class's namespace exists once the class does.
      dependsOn: ["clusterClass", "upstream"],
    },
  ];
}

/** The tenant's topology Cluster as Pulumi registers it. */
function clusterManifest(tenant: TenantClusterSettings): Manifest {
  const manifest = tenantClusterManifest(tenant);
  return {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      annotations: {
        ...manifest.metadata.annotations,
        // Provisioning takes many minutes and v1beta2 Clusters have no Ready condition; the
        // kubeconfig command is the bounded wait for Available instead.
        "pulumi.com/skipAwait": "true",
        // Foreground deletion (pulumi-kubernetes' default) lets the garbage collector delete
        // the MachineDeployments, control plane and HetznerCluster at once, around CAPI's own
        // teardown order (cluster-api #4085); in the background only CAPI deletes them.
        [deletionPropagationAnnotation]: "background",
      },
    },
  };
}

/** The Flux Kustomization of the tenant's apps: the fleet repository's `path`, applied inside the workload cluster with the admin kubeconfig CAPI maintains. */
function appsKustomization(tenant: TenantClusterSettings, path: string): Manifest {
  const kubeconfigSecret = workloadKubeconfigSecret(tenant.name);
  return {
    apiVersion: apiVersions.fluxKustomization,
    kind: "Kustomization",
    metadata: { name: `${tenant.name}-apps`, namespace: tenant.namespace },
    spec: {
      ...kustomizationSpec(path),
      sourceRef: { kind: "GitRepository", name: fleetRepositoryName, namespace: platformNamespaces.flux },
      kubeConfig: { secretRef: { name: kubeconfigSecret.name, key: kubeconfigSecret.key } },
    },
  };
}
