import * as command from "@pulumi/command";
import * as hcloud from "@pulumi/hcloud";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { tenantClusterPlan, type PlannedSecret, type SecretRef, type TenantPlanStep } from "../../infra/model/tenant/tenant-cluster-plan";
import type { TenantClusterSettings } from "../../infra/model/tenant/tenant-cluster";
import { ClusterAutoscaler } from "../cluster-autoscaler";
import { Karpenter } from "../karpenter";
import { localCommandDir } from "../local-command-dir";
import type { Mirrors } from "../../infra/model/platform/mirrors";
import type { ReleaseRecovery } from "../helm-release";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

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
 * What each of them is, and what waits for what, is the tenant's plan
 * (infra/model/tenant/tenant-cluster-plan.ts, which also gives the deletion order); the component
 * only registers it, filling in the secret values the plan refers to.
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
    if (tenant.apps && !args.fluxInstance) {
      throw new Error(`tenant ${tenant.name} has apps but no FluxInstance was passed`);
    }
    const plan = tenantClusterPlan({
      name,
      tenant,
      registryCredentials: Object.fromEntries(Object.entries(args.registryCredentials ?? {}).map(([credentials, { caCrt }]) => [credentials, { caCrt: caCrt !== undefined }])),
      ...(args.adminCidrs ? { adminCidrs: args.adminCidrs } : {}),
      ...(args.mirrors ? { mirrors: args.mirrors } : {}),
      ...(args.kubeconfigWaitSeconds !== undefined ? { kubeconfigWaitSeconds: args.kubeconfigWaitSeconds } : {}),
      ...(args.drainWaitSeconds !== undefined ? { drainWaitSeconds: args.drainWaitSeconds } : {}),
      ...(args.deleteTimeoutMinutes !== undefined ? { deleteTimeoutMinutes: args.deleteTimeoutMinutes } : {}),
    });
    const facts = new DeclaredFacts();

    // What each step of the plan registered; a part waits for the steps it names.
    const registered = new Map<TenantPlanStep, readonly pulumi.Resource[]>([
      ["upstream", upstreamOf(opts)],
      ["clusterClass", [args.clusterClass]],
      ["carenReady", [args.carenReady]],
      ...(args.fluxInstance ? [["fluxInstance", [args.fluxInstance]] as const] : []),
    ]);
    const done = (step: TenantPlanStep, ...resources: pulumi.Resource[]) => registered.set(step, resources);
    const after = (part: { dependsOn: readonly TenantPlanStep[] }) => ({
      parent: this,
      dependsOn: part.dependsOn.flatMap((step) => {
        const resources = registered.get(step);
        if (!resources) throw new Error(`TenantCluster ${name}: the plan waits for ${step} before it is registered`);
        return resources;
      }),
    });
    const secretValue = (ref: SecretRef): pulumi.Input<string> => {
      switch (ref.secret) {
        case "hcloud-token":
          return args.hcloudToken;
        case "management-kubeconfig":
          return args.managementKubeconfig;
        case "workload-kubeconfig":
          return this.kubeconfig;
        case "registry-credential": {
          const value = args.registryCredentials?.[ref.credentials]?.[ref.field];
          if (value === undefined) throw new Error(`TenantCluster ${name}: no ${ref.field} in the registry credentials ${ref.credentials}`);
          return value;
        }
      }
    };
    // Plain values and secret references, in the plan's order, as one secret.
    const withSecrets = (entries: Readonly<Record<string, string | SecretRef>>): pulumi.Output<Record<string, string>> =>
      pulumi.secret(pulumi.all(Object.fromEntries(Object.entries(entries).map(([key, value]) => [key, typeof value === "string" ? value : secretValue(value)]))));
    const secret = (part: PlannedSecret) => new k8s.core.v1.Secret(part.resourceName, { metadata: part.metadata, stringData: withSecrets(part.stringData) }, after(part));

    done("namespace", new k8s.core.v1.Namespace(plan.namespace.resourceName, { metadata: plan.namespace.metadata }, after(plan.namespace)));
    done("hcloudSecret", secret(plan.hcloudSecret));
    // The tenant's own Hetzner project: its token, never the management cluster's.
    const hcloudProvider = new hcloud.Provider(plan.hcloudProject.resourceName, { token: pulumi.secret(secretValue(plan.hcloudProject.token)) }, after(plan.hcloudProject));
    const firewall = plan.firewall;
    this.firewall = new hcloud.Firewall(
      firewall.resourceName,
      {
        name: firewall.name,
        labels: firewall.labels,
        rules: firewall.rules.map((rule) => ({ ...rule, sourceIps: [...rule.sourceIps] })),
        applyTos: firewall.applyTos.map((applyTo) => ({ ...applyTo })),
      },
      { ...after(firewall), provider: hcloudProvider },
    );
    done("firewall", this.firewall);
    done("registryCredentials", ...plan.registryCredentials.map(secret));
    const cilium = plan.ciliumValues;
    done("ciliumValues", ...(cilium ? [new k8s.core.v1.ConfigMap(cilium.resourceName, { metadata: cilium.metadata, data: cilium.data }, after(cilium))] : []));
    done("addons", ...plan.addons.map((addon) => facts.add(new k8s.apiextensions.CustomResource(addon.resourceName, addon.manifest, after(addon)), addon.manifest)));
    const remediation = plan.remediationTemplate;
    done("remediationTemplate", new k8s.apiextensions.CustomResource(remediation.resourceName, remediation.manifest, after(remediation)));

    // skipAwait does not skip the delete await of a custom resource: Pulumi waits until CAPI has
    // removed the servers and load balancers (the plan's deleteTimeout), and only then deletes
    // the Secret with the token CAPH needs for that.
    this.cluster = new k8s.apiextensions.CustomResource(plan.cluster.resourceName, plan.cluster.manifest, { ...after(plan.cluster), customTimeouts: { delete: plan.cluster.deleteTimeout } });
    facts.add(this.cluster, plan.cluster.manifest);
    done("cluster", this.cluster);

    const kubeconfigCommand = new command.local.Command(
      plan.kubeconfigCommand.resourceName,
      { create: plan.kubeconfigCommand.create, dir: localCommandDir(), environment: withSecrets(plan.kubeconfigCommand.environment), logging: command.local.Logging.Stderr },
      { ...after(plan.kubeconfigCommand), additionalSecretOutputs: ["stdout"] },
    );
    done("kubeconfigCommand", kubeconfigCommand);

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
    const read = plan.kubeconfigRead;
    const liveKubeconfig = k8s.core.v1.Secret.get(
      read.resourceName,
      pulumi.unsecret(kubeconfigCommand.stdout).apply(() => read.id),
      after(read),
    );
    this.kubeconfig = pulumi.secret(
      liveKubeconfig.data.apply((data) => {
        const value = data[read.key];
        if (!value) {
          throw new Error(`Secret ${read.id} has no data.${read.key}; Cluster API writes the kubeconfig there`);
        }
        return Buffer.from(value, "base64").toString("utf8");
      }),
    );

    const autoscaler = plan.clusterAutoscaler;
    if (autoscaler) {
      new ClusterAutoscaler(
        autoscaler.resourceName,
        { target: autoscaler.target, ...(autoscaler.mirrors ? { mirrors: autoscaler.mirrors } : {}), releaseRecovery: args.releaseRecovery },
        after(autoscaler),
      );
    }
    const karpenter = plan.karpenter;
    if (karpenter) {
      new Karpenter(
        karpenter.resourceName,
        { target: karpenter.target, pools: karpenter.pools, clusterSelector: karpenter.clusterSelector, managementKubeconfig: secretValue(karpenter.managementKubeconfig) },
        after(karpenter),
      );
    }

    const drain = plan.loadBalancerDrain;
    this.loadBalancerDrain = new command.local.Command(
      drain.resourceName,
      { delete: drain.delete, dir: localCommandDir(), environment: withSecrets(drain.environment), logging: command.local.Logging.Stderr },
      after(drain),
    );
    facts.add(this.loadBalancerDrain, { delete: drain.delete });

    if (plan.apps) {
      new k8s.apiextensions.CustomResource(plan.apps.resourceName, plan.apps.manifest, after(plan.apps));
    }
    this.registerOutputs(facts.outputs());
  }
}
