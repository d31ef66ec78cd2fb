import * as command from "@pulumi/command";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  admissionRequest,
  certManagerNamespace,
  certManagerRelease,
  clusterApiOperatorRelease,
  operatorNamespace,
  providerConfigSecretPlans,
  providerManifest,
  providersInOrder,
} from "../../infra/model/platform/cluster-api";
import { clusterApiFeatureGates, clusterApiProviders, featureGateSecretData, githubTokenVariable, type ClusterApiProviderSpec } from "../../infra/model/platform/cluster-api-providers";
import type { Mirrors } from "../../infra/model/platform/mirrors";
import type { DeclaredResource } from "../../infra/model/contract/policy-facts";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { localCommandDir } from "../local-command-dir";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** Arguments of {@link ClusterApi}. */
export interface ClusterApiArgs {
  /**
   * How long Pulumi waits for each provider to report Ready. The operator downloads the
   * provider components from GitHub releases first, so allow for a slow network.
   * Default 900.
   */
  providerReadyTimeoutSeconds?: number;
  /**
   * GitHub token (a Pulumi secret) with which the operator fetches the providers' releases;
   * without one it shares GitHub's 60 unauthenticated API requests an hour.
   */
  githubToken?: pulumi.Input<string>;
  /**
   * Where cert-manager's and the operator's charts and the providers' components come from
   * instead of their public sources (`mirrors`).
   */
  mirrors?: Mirrors;
  /**
   * Install cert-manager (default), or use the one the cluster already runs (`existing` mode's
   * `management.certManager: existing`, which the cluster's preflight checks).
   */
  installCertManager?: boolean;
  /**
   * Admin kubeconfig of the management cluster (a Pulumi secret), for the wait until the API server
   * admits the providers (the operator's webhooks serve, with their CA injected).
   */
  managementKubeconfig: pulumi.Input<string>;
  /** How its Helm releases are cleared after an interrupted `up` (absent: the engine cannot run resource hooks). */
  releaseRecovery?: ReleaseRecovery;
}

/**
 * Cluster API on the management cluster: cert-manager, cluster-api-operator, then one
 * provider resource per provider in `infra/model/platform/cluster-api-providers.ts` (core, kubeadm
 * bootstrap and control plane, Hetzner, Helm add-ons) at catalog versions, each awaited
 * until Ready. Pass the management cluster's Kubernetes provider in `opts.providers`, so the
 * CRDs (from the charts) and the custom resources go through one provider instance.
 */
export class ClusterApi extends pulumi.ComponentResource {
  /** The provider resources, by kind; dependents wait on them. */
  public readonly providers: Readonly<Record<ClusterApiProviderSpec["kind"], k8s.apiextensions.CustomResource>>;
  /** Installed CAPI core version. */
  public readonly version: pulumi.Output<string>;
  /** What it declared for the policy pack (its `declared` output). */
  public readonly declared: pulumi.Output<DeclaredResource[]>;

  constructor(name: string, args: ClusterApiArgs, opts?: pulumi.ComponentResourceOptions) {
    // Component args become recorded inputs: never the token or a kubeconfig.
    const { githubToken: _token, managementKubeconfig: _kubeconfig, releaseRecovery: _recovery, ...recorded } = args;
    super(componentTypes.clusterApi, name, recorded, opts);
    const child = { parent: this };
    const first = { parent: this, dependsOn: upstreamOf(opts) };
    const providerOptions = { githubToken: args.githubToken !== undefined, mirrors: args.mirrors };

    const certManager =
      args.installCertManager === false
        ? undefined
        : pinnedRelease(`${name}-cert-manager`, { ...certManagerRelease(args.mirrors), namespace: certManagerNamespace, recovery: args.releaseRecovery }, first);
    const operator = pinnedRelease(
      `${name}-operator`,
      { ...clusterApiOperatorRelease(args.mirrors), namespace: operatorNamespace, recovery: args.releaseRecovery },
      certManager ? { ...child, dependsOn: [certManager] } : first,
    );

    const namespaces = new Map(
      clusterApiProviders.map((provider) => [
        provider.namespace,
        new k8s.core.v1.Namespace(`${name}-${provider.namespace}`, { metadata: { name: provider.namespace } }, first),
      ]),
    );
    const namespaceOf = (provider: ClusterApiProviderSpec) => {
      const namespace = namespaces.get(provider.namespace);
      if (!namespace) {
        throw new Error(`ClusterApi: no namespace for ${provider.kind}`);
      }
      return namespace;
    };

    const { core, others } = providersInOrder();
    const githubToken = args.githubToken === undefined ? undefined : pulumi.secret(args.githubToken);
    const gates = featureGateSecretData(clusterApiFeatureGates);
    const configData = (gated: boolean): pulumi.Input<Record<string, string>> => {
      const plain = gated ? gates : {};
      // With a token the whole data is a secret; the gates alone stay readable in diffs.
      return githubToken ? pulumi.secret(githubToken.apply((token) => ({ ...plain, [githubTokenVariable]: token }))) : plain;
    };
    // One config Secret per provider that needs one, in the provider's own namespace.
    const configSecrets = new Map<ClusterApiProviderSpec, k8s.core.v1.Secret>();
    for (const plan of providerConfigSecretPlans(providerOptions)) {
      configSecrets.set(
        plan.provider,
        new k8s.core.v1.Secret(
          `${name}-${plan.resourceSuffix}`,
          { metadata: { name: plan.name, namespace: plan.namespace }, stringData: configData(plan.gated) },
          { ...child, dependsOn: [namespaceOf(plan.provider)] },
        ),
      );
    }
    const configSecretOf = (provider: ClusterApiProviderSpec): pulumi.Resource[] => {
      const secret = configSecrets.get(provider);
      return secret ? [secret] : [];
    };

    const facts = new DeclaredFacts();
    const providerResource = (provider: ClusterApiProviderSpec, dependsOn: pulumi.Resource[]) => {
      const inputs = providerManifest(provider, providerOptions, args.providerReadyTimeoutSeconds);
      return facts.add(
        new k8s.apiextensions.CustomResource(`${name}-${provider.kind.toLowerCase()}-${provider.name}`, inputs, {
          ...child,
          dependsOn: [operator, namespaceOf(provider), ...configSecretOf(provider), ...dependsOn],
        }),
        inputs,
      );
    };

    // The API server must admit the providers before they are created: the operator's webhooks
    // serve only once its pod runs, and trust only once cert-manager's cainjector has put the CA in
    // (components/cluster-api/wait-for-admission.mjs says why Helm's wait does not cover it).
    const admission = new command.local.Command(
      `${name}-wait-for-admission`,
      {
        create: `node ${scriptEntryPoints.waitForAdmission}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((managementKubeconfig) => ({
            MANAGEMENT_KUBECONFIG: managementKubeconfig,
            ADMISSION_REQUESTS: JSON.stringify(clusterApiProviders.map((provider) => admissionRequest(provider, providerOptions))),
          })),
        ),
        logging: command.local.Logging.Stderr,
      },
      { ...child, dependsOn: [operator, ...namespaces.values(), ...configSecrets.values()] },
    );

    const coreProvider = providerResource(core, [admission]);
    const providers = { CoreProvider: coreProvider } as Record<ClusterApiProviderSpec["kind"], k8s.apiextensions.CustomResource>;
    for (const provider of others) {
      providers[provider.kind] = providerResource(provider, [admission, coreProvider]);
    }
    this.providers = providers;
    this.version = pulumi.output(core.version);
    this.declared = facts.all();
    this.registerOutputs({ version: this.version, ...facts.outputs() });
  }
}
