import { stringify } from "yaml";
import type { TenantSettings } from "../config/fleet-config";

/**
 * The tenant settings CAREN applies, mapped from the stack config to CAREN's `clusterConfig`
 * fields (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 * api/v1alpha1/clusterconfig_types.go; the schema the class publishes is CAREN's Docker one,
 * hetzner-cluster-class.ts). The stack config is the interface: it allows only what works on
 * Hetzner, and names its keys for users (`additionalNoProxy`), not after CAREN's (`additionalNo`).
 */

/** The tenant's kube-proxy mode (`cni.kubeProxyReplacement: true` is `disabled`); undefined: kubeadm's default, iptables. */
export function kubeProxyModeOf(tenant: Pick<TenantSettings, "cni" | "kubeProxy">): string | undefined {
  return tenant.cni.kubeProxyReplacement ? "disabled" : tenant.kubeProxy?.mode;
}

/**
 * ConfigMap with the tenant's Cilium values, in the tenant's namespace (CAREN's
 * `values.sourceRef` is a local reference: pkg/handlers/lifecycle/cni/cilium/handler.go reads it
 * from the Cluster's namespace, and makes the Cluster its owner).
 */
export const ciliumValuesConfigMapName = "capi-fleet-cilium-values";
/** The key CAREN reads the values template from (pkg/handlers/lifecycle/addons/helmaddon.go). */
export const ciliumValuesKey = "values.yaml";

/**
 * Secret with one set of registry credentials. CAREN reads it under this one name in two
 * namespaces, so the program writes it into both (docs/architecture.md, "Where CAREN reads the
 * registry credentials"):
 * - the namespace of the template it patches, which is the ClusterClass's
 *   (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0:
 *   pkg/handlers/generic/mutation/generic/imageregistries/credentials/inject.go and
 *   …/generic/mirrors/inject.go, `obj.GetNamespace()`), for the credentials themselves;
 * - the Cluster's namespace, where it makes the Cluster the Secret's owner (same file,
 *   `ensureOwnerReferenceOnCredentialsSecrets` → pkg/handlers/utils/owner_reference.go,
 *   `cluster.Namespace`) and where its preflight webhook looks for it
 *   (pkg/webhook/preflight/generic/registry.go, `r.cluster.Namespace`).
 * The class's namespace is shared by every tenant, so the name carries the tenant; the dots keep
 * it unambiguous (neither a tenant nor a credentials name may contain one).
 */
export const registryCredentialsSecretName = (tenant: string, name: string): string => `registry-credentials.${tenant}.${name}`;
/** The keys CAREN reads (pkg/handlers/generic/mutation/generic/imageregistries/credentials/inject.go, mirrors/containerd_files.go). */
export const registryCredentialsKeys = { username: "username", password: "password", caCrt: "ca.crt" } as const;

/** `addons.cni` for CAREN's Cilium hook. */
export function carenCniConfig(tenant: Pick<TenantSettings, "cni" | "namespace">): Record<string, unknown> {
  return {
    provider: "Cilium",
    strategy: tenant.cni.strategy,
    ...(tenant.cni.values ? { values: { sourceRef: { kind: "ConfigMap", name: ciliumValuesConfigMapName } } } : {}),
  };
}

/** Every other `clusterConfig` field the tenant sets (each only when set). */
export function carenClusterSettings(tenant: TenantSettings): Record<string, unknown> {
  const mode = kubeProxyModeOf(tenant);
  const credentials = (name: string | undefined) => (name ? { credentials: { secretRef: { name: registryCredentialsSecretName(tenant.name, name) } } } : {});
  const { proxy, ntp, imageRegistries, globalImageRegistryMirror, users } = tenant;
  return {
    ...(mode ? { kubeProxy: { mode } } : {}),
    ...(ntp ? { ntp: { servers: [...ntp.servers] } } : {}),
    ...(proxy
      ? {
          proxy: {
            ...(proxy.http ? { http: proxy.http } : {}),
            ...(proxy.https ? { https: proxy.https } : {}),
            // CAREN's no-proxy list has localhost, the pod and service ranges and the cluster's
            // domains, but not the nodes' range (api/v1alpha1/http_proxy.go, `GenerateNoProxy`:
            // only AWS, Azure and GCP get more), so containerd and the kubelet would reach
            // anything in the tenant's network through the proxy. The program adds it.
            additionalNo: [...new Set([...(proxy.additionalNoProxy ?? []), tenant.network.nodesCidr])],
          },
        }
      : {}),
    ...(imageRegistries ? { imageRegistries: imageRegistries.map((registry) => ({ url: registry.url, ...credentials(registry.credentials) })) } : {}),
    ...(globalImageRegistryMirror ? { globalImageRegistryMirror: { url: globalImageRegistryMirror.url, ...credentials(globalImageRegistryMirror.credentials) } } : {}),
    ...(users
      ? { users: users.map((user) => ({ name: user.name, sshAuthorizedKeys: [...user.sshAuthorizedKeys], ...(user.sudo ? { sudo: user.sudo } : {}) })) }
      : {}),
  };
}

/**
 * The key CAREN's Cilium handler reads the values of the upgrade preflight from, in the same
 * ConfigMap (pkg/handlers/lifecycle/addons/helmaddon.go, `defaultCiliumPreflightValuesTemplateKey`;
 * an absent key gives the preflight release no values at all: pkg/handlers/utils/utils.go,
 * `RetrieveValuesTemplate`).
 */
export const ciliumPreflightValuesKey = "preflight-values.yaml";

type Values = Record<string, unknown>;
const mapping = (value: unknown): Values | undefined => (value && typeof value === "object" && !Array.isArray(value) ? (value as Values) : undefined);

/**
 * Cilium's upgrade preflight for a tenant with its own values. On BeforeClusterUpgrade CAREN
 * installs a `cilium-preflight` release from this template before it upgrades Cilium, and waits
 * for its pre-pull DaemonSet (pkg/handlers/lifecycle/cni/cilium/handler.go, `shouldRunPreflight`).
 * It is CAREN's chart default (charts/cluster-api-runtime-extensions-nutanix/addons/cni/cilium/
 * preflight-values-template.yaml: no agent, no operator, the preflight on, images by tag; a test
 * compares the two) derived from the tenant's settings:
 * - the images the preflight pre-pulls are the tenant's (`image` → `preflight.image`,
 *   `envoy.image` → `preflight.envoy.image`), and the tenant's own `preflight` block is kept;
 * - with kube-proxy disabled, the API endpoint: the tenant's `k8sServiceHost`/`k8sServicePort`,
 *   else the chart's expressions (CAREN renders the template with `.ControlPlaneEndpoint`:
 *   pkg/handlers/lifecycle/cni/cilium/template.go, `preflightTemplateValues`).
 * Nothing else of the tenant's values goes in: Hubble relay or UI settings would install a
 * second relay beside the real one.
 */
export function ciliumPreflightValues(tenant: Pick<TenantSettings, "cni" | "kubeProxy">): Values {
  const values = tenant.cni.values ?? {};
  const own = mapping(values.preflight) ?? {};
  const envoyImage = mapping(mapping(values.envoy)?.image);
  const image = mapping(values.image);
  const endpoint =
    kubeProxyModeOf(tenant) === "disabled"
      ? {
          k8sServiceHost: values.k8sServiceHost ?? '{{ trimPrefix .ControlPlaneEndpoint.Host "https://" }}',
          k8sServicePort: values.k8sServicePort ?? "{{ .ControlPlaneEndpoint.Port }}",
        }
      : {};
  return {
    agent: false,
    operator: { enabled: false },
    preflight: {
      ...own,
      enabled: true,
      envoy: { ...mapping(own.envoy), image: { useDigest: false, ...envoyImage, ...mapping(mapping(own.envoy)?.image) } },
      image: { useDigest: false, ...image, ...mapping(own.image) },
    },
    ...endpoint,
  };
}

/** The data of the ConfigMap with the tenant's Cilium values ({@link ciliumValuesConfigMapName}), if it sets any. */
export function ciliumValuesData(tenant: Pick<TenantSettings, "cni" | "kubeProxy">): Record<string, string> | undefined {
  return tenant.cni.values ? { [ciliumValuesKey]: stringify(tenant.cni.values), [ciliumPreflightValuesKey]: stringify(ciliumPreflightValues(tenant)) } : undefined;
}
