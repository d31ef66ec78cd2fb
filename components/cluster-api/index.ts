import * as command from "@pulumi/command";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/versions/catalog";
import { apiVersions } from "../../infra/model/platform/cluster-api-kinds";
import {
  clusterApiFeatureGates,
  clusterApiOperatorValues,
  clusterApiProviders,
  featureGateSecretData,
  featureGatesSecretName,
  githubTokenVariable,
  providerConfigSecret,
  providerManagerContainer,
  type ClusterApiProviderSpec,
} from "../../infra/model/platform/cluster-api-providers";
import { mirroredChart, mirroredImage, providerFetchConfig, type Mirrors } from "../../infra/model/platform/mirrors";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import type { DeclaredResource } from "../../infra/model/contract/policy-facts";
import { pinnedRelease, type ReleaseRecovery } from "../helm-release";
import { localCommandDir } from "../local-command-dir";
import { DeclaredFacts } from "../policy-facts";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";

/** API group and version of cluster-api-operator's provider resources. */

/** Namespaces of the two charts this component installs. */
export const certManagerNamespace = platformNamespaces.certManager;
export const operatorNamespace = platformNamespaces.clusterApiOperator;

/** Name of the Secret whose keys the operator substitutes into the provider manifests. */
export { featureGatesSecretName };

/** The admission wait's program, relative to the repository root (the command's `dir`). */
export const waitForAdmissionScript = "scripts/wait-for-admission.mjs";

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
    const timeoutSeconds = String(args.providerReadyTimeoutSeconds ?? 900);

    const certManager =
      args.installCertManager === false
        ? undefined
        : pinnedRelease(
            `${name}-cert-manager`,
            { pin: mirroredChart(catalog.certManager.chart, args.mirrors), namespace: certManagerNamespace, values: { crds: { enabled: true }, ...(args.mirrors?.images ? { imageRegistry: args.mirrors.images } : {}) }, recovery: args.releaseRecovery },
            first,
          );
    const operator = pinnedRelease(
      `${name}-operator`,
      { pin: mirroredChart(catalog.clusterApiOperator.chart, args.mirrors), namespace: operatorNamespace, values: { ...clusterApiOperatorValues, ...(args.mirrors?.images ? { image: { manager: { repository: mirroredImage(catalog.clusterApiOperator.image, args.mirrors) } } } : {}) }, recovery: args.releaseRecovery },
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

    const [core, ...others] = clusterApiProviders;
    if (core?.kind !== "CoreProvider") {
      throw new Error("ClusterApi: the provider list must start with the CoreProvider");
    }
    const githubToken = args.githubToken === undefined ? undefined : pulumi.secret(args.githubToken);
    const gates = featureGateSecretData(clusterApiFeatureGates);
    const configData = (gated: boolean): pulumi.Input<Record<string, string>> => {
      const plain = gated ? gates : {};
      // With a token the whole data is a secret; the gates alone stay readable in diffs.
      return githubToken ? pulumi.secret(githubToken.apply((token) => ({ ...plain, [githubTokenVariable]: token }))) : plain;
    };
    // One config Secret per provider that needs one, in the provider's own namespace (the operator's API requires it).
    const configSecrets = new Map<ClusterApiProviderSpec, k8s.core.v1.Secret>();
    for (const provider of clusterApiProviders) {
      const ref = providerConfigSecret(provider, { githubToken: githubToken !== undefined });
      if (!ref) continue;
      if (ref.namespace !== provider.namespace) {
        throw new Error(`ClusterApi: the config Secret of ${provider.kind} must be in ${provider.namespace}`);
      }
      const gated = ref.name === featureGatesSecretName;
      // The core's gates Secret keeps the resource name it had as the only one, so it is not replaced.
      const resourceName = gated && provider === core ? `${name}-feature-gates` : `${name}-${ref.namespace}-${gated ? "feature-gates" : "github-token"}`;
      configSecrets.set(
        provider,
        new k8s.core.v1.Secret(
          resourceName,
          { metadata: { name: ref.name, namespace: ref.namespace }, stringData: configData(gated) },
          { ...child, dependsOn: [namespaceOf(provider)] },
        ),
      );
    }
    const configSecretOf = (provider: ClusterApiProviderSpec): pulumi.Resource[] => {
      const secret = configSecrets.get(provider);
      return secret ? [secret] : [];
    };

    const facts = new DeclaredFacts();
    const providerResource = (provider: ClusterApiProviderSpec, dependsOn: pulumi.Resource[]) => {
      const inputs = {
        apiVersion: apiVersions.clusterApiOperatorProvider,
        kind: provider.kind,
        metadata: {
          name: provider.name,
          namespace: provider.namespace,
          annotations: {
            // Custom resources are not awaited by default; the operator sets Ready once
            // the provider's controller Deployment is available.
            "pulumi.com/waitFor": "condition=Ready",
            "pulumi.com/timeoutSeconds": timeoutSeconds,
          },
        },
        spec: providerSpec(provider, { githubToken: githubToken !== undefined, mirrors: args.mirrors }),
      };
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
        create: `node ${waitForAdmissionScript}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((managementKubeconfig) => ({
            MANAGEMENT_KUBECONFIG: managementKubeconfig,
            ADMISSION_REQUESTS: JSON.stringify(clusterApiProviders.map((provider) => admissionRequest(provider, { githubToken: githubToken !== undefined, mirrors: args.mirrors }))),
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

/** The server-side dry run of one provider resource: its collection and the object (no secret in it). */
export function admissionRequest(provider: ClusterApiProviderSpec, options: { githubToken: boolean; mirrors?: Mirrors }): { path: string; body: Record<string, unknown> } {
  const [group, version] = apiVersions.clusterApiOperatorProvider.split("/");
  return {
    path: `/apis/${group}/${version}/namespaces/${provider.namespace}/${provider.kind.toLowerCase()}s`,
    body: { apiVersion: apiVersions.clusterApiOperatorProvider, kind: provider.kind, metadata: { name: provider.name, namespace: provider.namespace }, spec: providerSpec(provider, options) },
  };
}

/**
 * The `spec` of one provider resource. Gates go in twice on purpose: the configSecret
 * fills the `${CLUSTER_TOPOLOGY}`-style variables in the upstream manifests (what
 * `CLUSTER_TOPOLOGY=true clusterctl init` does), and `manager.featureGates` makes the
 * operator set the flag explicitly, so neither path alone can leave a gate off. With a
 * GitHub token every provider names a configSecret that holds it (`providerConfigSecret`).
 */
export function providerSpec(provider: ClusterApiProviderSpec, options: { githubToken: boolean; mirrors?: Mirrors } = { githubToken: false }): Record<string, unknown> {
  const gates = provider.featureGates;
  const configSecret = providerConfigSecret(provider, options);
  const fetchConfig = providerFetchConfig(provider, options.mirrors);
  return {
    version: provider.version,
    ...(fetchConfig ? { fetchConfig } : {}),
    ...(configSecret ? { configSecret: { name: configSecret.name, namespace: configSecret.namespace } } : {}),
    ...(gates.length > 0 ? { manager: { featureGates: Object.fromEntries(gates.map((gate) => [gate, true])) } } : {}),
    // The operator sets the image of the named container of the provider's Deployments
    // (sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/component_customizer.go, customizeContainer).
    ...(options.mirrors?.images ? { deployment: { containers: [{ name: providerManagerContainer, imageUrl: `${mirroredImage(provider.image, options.mirrors)}:${provider.version}` }] } } : {}),
  };
}
