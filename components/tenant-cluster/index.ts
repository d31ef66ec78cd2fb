import * as command from "@pulumi/command";
import * as hcloud from "@pulumi/hcloud";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ciliumValuesConfigMapName, ciliumValuesData, registryCredentialsKeys, registryCredentialsSecretName } from "../../infra/model/tenant/caren-cluster-config";
import { apiVersions } from "../../infra/model/platform/cluster-api-kinds";
import { clusterAutoscalerBounds } from "../../infra/model/platform/cluster-autoscaler";
import { isKarpenterPool, type KarpenterPool } from "../../infra/model/platform/karpenter";
import { clusterClassNamespace, hcloudSecret, remediationTemplateIn } from "../../infra/model/platform/hetzner-cluster-class";
import {
  drainLoadBalancersScript,
  hcloudCcmProxy,
  hcloudCsiProxy,
  tenantClusterManifest,
  tenantLabels,
  workloadKubeconfigSecret,
  type TenantClusterSettings,
} from "../../infra/model/tenant/tenant-cluster";
import { tenantFirewallRules, tenantServerLabelSelector } from "../../infra/model/tenant/tenant-firewall";
import { ClusterAutoscaler } from "../cluster-autoscaler";
import { Karpenter } from "../karpenter";
import { fluxNamespace, fleetRepositoryName, kustomizationSpec } from "../../infra/model/platform/flux";
import { localCommandDir } from "../local-command-dir";
import type { Mirrors } from "../../infra/model/platform/mirrors";
import type { ReleaseRecovery } from "../helm-release";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** Scripts the command provider runs from the project root. */
export const workloadKubeconfigScript = "scripts/workload-kubeconfig.mjs";

/**
 * How pulumi-kubernetes deletes an object: "foreground" (its default), "background" or
 * "orphan" (pulumi/pulumi-kubernetes provider/pkg/metadata/annotations.go and overrides.go).
 */
export const deletionPropagationAnnotation = "pulumi.com/deletionPropagationPolicy";

/** Arguments of {@link TenantCluster}. */
export interface TenantClusterArgs {
  /** The tenant's validated settings (no secrets). */
  tenant: TenantClusterSettings;
  /** hcloud API token of the tenant's own Hetzner project (a Pulumi secret). */
  hcloudToken: pulumi.Input<string>;
  /**
   * Registry credentials by the name the tenant's `imageRegistries` / `globalImageRegistryMirror`
   * reference (Pulumi secrets); each becomes a Secret, in the tenant's namespace and in the
   * ClusterClass's, that CAREN reads (infra/model/tenant/caren-cluster-config.ts, registryCredentialsSecretName).
   */
  registryCredentials?: Record<string, { username: pulumi.Input<string>; password: pulumi.Input<string>; caCrt?: pulumi.Input<string> }>;
  /** The ClusterClass; the Cluster depends on it, so it is deleted first. */
  clusterClass: pulumi.Resource;
  /**
   * CAREN's readiness (`Caren.ready`): its webhooks reject topology Clusters while it is
   * down, and its handlers must be discovered before the class's patches can run.
   */
  carenReady: pulumi.Resource;
  /** Sources allowed to reach SSH on the tenant's servers (`management.adminCidrs`); default none. */
  adminCidrs?: readonly string[];
  /** Admin kubeconfig of the management cluster (secret), for the kubeconfig and drain scripts. */
  managementKubeconfig: pulumi.Input<string>;
  /** The FluxInstance; only needed with `tenant.apps`. */
  fluxInstance?: pulumi.Resource;
  /**
   * How long `up` waits on creation for the Cluster to be Available (or, with
   * `tenant.waitForReady: false`, only for its kubeconfig Secret). Default 1800.
   */
  kubeconfigWaitSeconds?: number;
  /** How long the load-balancer drain may take on deletion. Default 600. */
  drainWaitSeconds?: number;
  /** How long Pulumi waits for CAPI to delete the cluster. Default 60. */
  deleteTimeoutMinutes?: number;
  /** Where the add-on charts (hcloud CCM and CSI, the cluster autoscaler) come from instead of their public repositories (`mirrors`). */
  mirrors?: Mirrors;
  /** How the cluster autoscaler's Helm release is cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * One tenant workload cluster: its namespace, the `hcloud` Secret CAPH reads, the firewall of
 * its servers (in the tenant's Hetzner project, with its token), the topology Cluster, the
 * hcloud CCM and CSI driver (CAAPH HelmChartProxies), its kubeconfig as a secret output, a
 * load-balancer drain that runs before the Cluster is deleted, the cluster autoscaler when a
 * pool is autoscaled (on the management cluster, components/cluster-autoscaler), and optionally
 * a Flux Kustomization with the tenant's apps.
 *
 * Deletion order (Pulumi deletes dependents first): apps, drain and autoscaler → kubeconfig → Cluster →
 * HelmChartProxies, Secret, firewall → namespace. The CCM therefore still runs while the drain
 * and CAREN's BeforeClusterDelete hook delete load balancers, CAPH still has its token while
 * it deletes the servers, and the firewall exists before CAPH creates the first server and
 * until the last one is gone.
 */
export class TenantCluster extends pulumi.ComponentResource {
  /** The topology Cluster. */
  public readonly cluster: k8s.apiextensions.CustomResource;
  /**
   * The workload cluster's admin kubeconfig (secret), read from CAPI's `<name>-kubeconfig`
   * Secret at every preview and update, so it follows KCP's rotation.
   */
  public readonly kubeconfig: pulumi.Output<string>;
  /** The resource that drains LoadBalancer Services when it is deleted. */
  public readonly loadBalancerDrain: command.local.Command;
  /** The hcloud Firewall of the tenant's servers, in the tenant's own Hetzner project. */
  public readonly firewall: hcloud.Firewall;

  constructor(name: string, args: TenantClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    // Component args become recorded inputs; only the settings go in, never the token.
    super(componentTypes.tenantCluster, name, { tenant: args.tenant }, opts);
    const tenant = args.tenant;
    const child = (dependsOn: pulumi.Resource[]) => ({ parent: this, dependsOn });
    const facts = new DeclaredFacts();

    const namespace = new k8s.core.v1.Namespace(`${name}-namespace`, { metadata: { name: tenant.namespace } }, child(upstreamOf(opts)));
    const secret = new k8s.core.v1.Secret(
      `${name}-hcloud`,
      {
        metadata: {
          name: hcloudSecret.name,
          namespace: tenant.namespace,
          // clusterctl move takes the Secret along with the Cluster.
          labels: { "clusterctl.cluster.x-k8s.io/move": "" },
        },
        stringData: { [hcloudSecret.tokenKey]: pulumi.secret(args.hcloudToken) },
      },
      child([namespace]),
    );
    // The tenant's own Hetzner project: its token, never the management cluster's.
    const hcloudProvider = new hcloud.Provider(`${name}-hcloud`, { token: pulumi.secret(args.hcloudToken) }, { parent: this });
    this.firewall = new hcloud.Firewall(
      `${name}-firewall`,
      {
        name: `${tenant.name}-nodes`,
        labels: { [tenantLabels.tenant]: tenant.name },
        rules: tenantFirewallRules({ nodesCidr: tenant.network.nodesCidr, adminCidrs: args.adminCidrs ?? [], sshKeyName: tenant.sshKeyName }).map((rule) => ({
          ...rule,
          sourceIps: [...rule.sourceIps],
        })),
        // Applied by Hetzner to every server carrying CAPH's ownership label, now and later.
        applyTos: [{ labelSelector: tenantServerLabelSelector(tenant.name) }],
      },
      { parent: this, provider: hcloudProvider },
    );
    // What CAREN reads while it patches and installs: the registry credentials and the Cilium
    // values. The Cluster waits for them. CAREN reads a credential Secret under one name in two
    // namespaces (infra/model/tenant/caren-cluster-config.ts, registryCredentialsSecretName): its data
    // in the ClusterClass's namespace, where it patches the class's templates, and in the
    // tenant's namespace, where its preflight webhook checks it and where it makes the Cluster the
    // owner. So each Secret is written into both; only the tenant's copy gets that owner (an owner
    // in another namespace would make the garbage collector delete the class's copy).
    const credentials = Object.entries(args.registryCredentials ?? {}).flatMap(([credentialsName, { username, password, caCrt }]) => {
      const secretName = registryCredentialsSecretName(tenant.name, credentialsName);
      const stringData = pulumi.secret(
        pulumi.all([username, password, caCrt]).apply(([user, pass, ca]) => ({
          [registryCredentialsKeys.username]: user,
          [registryCredentialsKeys.password]: pass,
          ...(ca ? { [registryCredentialsKeys.caCrt]: ca } : {}),
        })),
      );
      return [
        new k8s.core.v1.Secret(
          `${name}-registry-credentials-${credentialsName}`,
          { metadata: { name: secretName, namespace: tenant.namespace, labels: { "clusterctl.cluster.x-k8s.io/move": "" } }, stringData },
          child([namespace]),
        ),
        new k8s.core.v1.Secret(
          `${name}-registry-credentials-${credentialsName}-class`,
          {
            metadata: { name: secretName, namespace: clusterClassNamespace, labels: { "clusterctl.cluster.x-k8s.io/move": "", [tenantLabels.tenant]: tenant.name } },
            stringData,
          },
          // The class's namespace exists once the class does.
          child([args.clusterClass, ...upstreamOf(opts)]),
        ),
      ];
    });
    const ciliumData = ciliumValuesData(tenant);
    const ciliumValues = ciliumData
      ? [
          new k8s.core.v1.ConfigMap(
            `${name}-cilium-values`,
            { metadata: { name: ciliumValuesConfigMapName, namespace: tenant.namespace, labels: { "clusterctl.cluster.x-k8s.io/move": "" } }, data: ciliumData },
            child([namespace]),
          ),
        ]
      : [];
    const addons = [hcloudCcmProxy(tenant, args.mirrors), hcloudCsiProxy(tenant, args.mirrors)].map((manifest) =>
      facts.add(new k8s.apiextensions.CustomResource(`${name}-${manifest.metadata.name}`, manifest, child([namespace])), manifest),
    );

    // The health checks look their remediation template up in the tenant's namespace.
    const remediationTemplate = remediationTemplateIn(tenant.namespace);
    const remediation = new k8s.apiextensions.CustomResource(`${name}-${remediationTemplate.metadata.name}`, remediationTemplate, child([namespace]));

    const manifest = tenantClusterManifest(tenant);
    const clusterInputs = {
      ...manifest,
      metadata: {
        ...manifest.metadata,
        // Provisioning takes many minutes and v1beta2 Clusters have no Ready condition;
        // the kubeconfig command below is the bounded wait for Available instead.
        annotations: {
          ...manifest.metadata.annotations,
          "pulumi.com/skipAwait": "true",
          // Foreground deletion (pulumi-kubernetes' default) lets the garbage collector delete
          // the MachineDeployments, control plane and HetznerCluster at once, around CAPI's own
          // teardown order (cluster-api #4085); in the background only CAPI deletes them.
          [deletionPropagationAnnotation]: "background",
        },
      },
    };
    this.cluster = new k8s.apiextensions.CustomResource(
      name,
      clusterInputs,
      {
        ...child([namespace, secret, ...credentials, ...ciliumValues, remediation, this.firewall, ...addons, args.clusterClass, args.carenReady]),
        // skipAwait does not skip the delete await of a custom resource: Pulumi waits until
        // CAPI has removed the servers and load balancers, and only then deletes the Secret
        // with the token CAPH needs for that. An hour covers a slow cluster teardown.
        customTimeouts: { delete: `${args.deleteTimeoutMinutes ?? 60}m` },
      },
    );
    facts.add(this.cluster, clusterInputs);

    const location = { TENANT_NAMESPACE: tenant.namespace, TENANT_CLUSTER: tenant.name };
    const kubeconfigCommand = new command.local.Command(
      `${name}-kubeconfig`,
      {
        create: `node ${workloadKubeconfigScript}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((managementKubeconfig) => ({
            ...location,
            MANAGEMENT_KUBECONFIG: managementKubeconfig,
            WAIT_SECONDS: String(args.kubeconfigWaitSeconds ?? 1800),
            // The script waits for the Cluster's v1beta2 Available condition first.
            WAIT_FOR_READY: String(tenant.waitForReady),
          })),
        ),
        logging: command.local.Logging.Stderr,
      },
      { ...child([this.cluster]), additionalSecretOutputs: ["stdout"] },
    );

    // The command runs once, but KCP rewrites the Secret when its client certificate nears
    // expiry (sigs.k8s.io/cluster-api@v1.12.10: controlplane/kubeadm/internal/controllers/helpers.go,
    // reconcileKubeconfig). So the output comes from a read of the live Secret, which the engine
    // performs at every preview and update, and skips while its id is unknown
    // (pulumi/pulumi@v3.248.0: pkg/resource/deploy/step.go, ReadStep.Apply). The id waits for the
    // command's stdout, not its id: pulumi-command returns a known id even when it previews a new
    // command (pulumi-command v1.2.1: provider/pkg/provider/local/commandController.go, Create),
    // while its stdout stays unknown until it ran. So a new tenant's read is deferred at preview
    // even when the management cluster's provider is known (an update, a shard stack), where a
    // read of the not yet existing Secret would fail the preview; at `up` it runs once the cluster
    // is Available. pulumi-kubernetes reads "<namespace>/<name>" ids (pulumi/pulumi-kubernetes@v4.25.0:
    // provider/pkg/provider/util.go, parseFqName), and @pulumi/kubernetes 4.32.0's Secret marks
    // `data` secret (core/v1/secret.ts, additionalSecretOutputs); the output is made secret anyway.
    const kubeconfigSecret = workloadKubeconfigSecret(tenant.name);
    const liveKubeconfig = k8s.core.v1.Secret.get(
      `${name}-kubeconfig-secret`,
      pulumi.unsecret(kubeconfigCommand.stdout).apply(() => `${tenant.namespace}/${kubeconfigSecret.name}`),
      { parent: this, dependsOn: [kubeconfigCommand] },
    );
    this.kubeconfig = pulumi.secret(
      liveKubeconfig.data.apply((data) => {
        const value = data[kubeconfigSecret.key];
        if (!value) {
          throw new Error(`Secret ${tenant.namespace}/${kubeconfigSecret.name} has no data.${kubeconfigSecret.key}; Cluster API writes the kubeconfig there`);
        }
        return Buffer.from(value, "base64").toString("utf8");
      }),
    );

    // The autoscaler of the tenant's autoscaled pools runs here, on the management cluster: it
    // mounts CAPI's kubeconfig Secret, which the command above has waited for, and Pulumi
    // deletes it before the Cluster.
    if (tenant.workers.some((pool) => clusterAutoscalerBounds(pool) !== undefined)) {
      new ClusterAutoscaler(
        `${name}-autoscaler`,
        { target: { name: tenant.name, namespace: tenant.namespace, kubernetesVersion: tenant.kubernetesVersion, kubeconfigSecret: workloadKubeconfigSecret(tenant.name) }, ...(args.mirrors ? { mirrors: args.mirrors } : {}), releaseRecovery: args.releaseRecovery },
        child([kubeconfigCommand]),
      );
    }

    // Karpenter (experimental) for the tenant's Karpenter pools, on the management cluster beside
    // the autoscaler: after the Cluster is Available (its MachineDeployments exist), deleted before it.
    const karpenterPools = tenant.workers.filter((pool): pool is typeof pool & KarpenterPool => isKarpenterPool(pool));
    if (karpenterPools.length > 0 && tenant.karpenter) {
      new Karpenter(
        `${name}-karpenter`,
        {
          target: { name: tenant.name, namespace: tenant.namespace, kubeconfigSecret: workloadKubeconfigSecret(tenant.name), image: tenant.karpenter.image },
          pools: karpenterPools,
          clusterSelector: { [tenantLabels.tenant]: tenant.name },
          managementKubeconfig: args.managementKubeconfig,
        },
        child([kubeconfigCommand]),
      );
    }

    // Does nothing on create; its delete runs before the Cluster's (it depends on it).
    const drainCommand = `node ${drainLoadBalancersScript}`;
    this.loadBalancerDrain = new command.local.Command(
      `${name}-load-balancer-drain`,
      {
        delete: drainCommand,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.all([pulumi.output(args.managementKubeconfig), this.kubeconfig, pulumi.output(args.hcloudToken)]).apply(([managementKubeconfig, workloadKubeconfig, token]) => ({
            ...location,
            MANAGEMENT_KUBECONFIG: managementKubeconfig,
            WORKLOAD_KUBECONFIG: workloadKubeconfig,
            HCLOUD_TOKEN: token,
            DRAIN_WAIT_SECONDS: String(args.drainWaitSeconds ?? 600),
          })),
        ),
        logging: command.local.Logging.Stderr,
      },
      child([this.cluster, kubeconfigCommand]),
    );
    facts.add(this.loadBalancerDrain, { delete: drainCommand });

    if (tenant.apps) {
      if (!args.fluxInstance) {
        throw new Error(`tenant ${tenant.name} has apps but no FluxInstance was passed`);
      }
      new k8s.apiextensions.CustomResource(
        `${name}-apps`,
        {
          apiVersion: apiVersions.fluxKustomization,
          kind: "Kustomization",
          metadata: { name: `${tenant.name}-apps`, namespace: tenant.namespace },
          spec: {
            ...kustomizationSpec(tenant.apps.path),
            sourceRef: { kind: "GitRepository", name: fleetRepositoryName, namespace: fluxNamespace },
            // Applied inside the workload cluster, with the admin kubeconfig CAPI maintains.
            kubeConfig: { secretRef: { name: kubeconfigSecret.name, key: kubeconfigSecret.key } },
          },
        },
        child([kubeconfigCommand, args.fluxInstance]),
      );
    }
    this.registerOutputs(facts.outputs());
  }
}
