import { stringify } from "yaml";
import type { TenantSettings } from "./fleet-config";

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

/** Secret with one set of registry credentials, in the tenant's namespace. */
export const registryCredentialsSecretName = (name: string): string => `registry-credentials-${name}`;
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
  const credentials = (name: string | undefined) => (name ? { credentials: { secretRef: { name: registryCredentialsSecretName(name) } } } : {});
  const { proxy, ntp, imageRegistries, globalImageRegistryMirror, users } = tenant;
  return {
    ...(mode ? { kubeProxy: { mode } } : {}),
    ...(ntp ? { ntp: { servers: [...ntp.servers] } } : {}),
    ...(proxy
      ? {
          proxy: {
            ...(proxy.http ? { http: proxy.http } : {}),
            ...(proxy.https ? { https: proxy.https } : {}),
            ...(proxy.additionalNoProxy ? { additionalNo: [...proxy.additionalNoProxy] } : {}),
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

/** Names of the registry credentials the tenant references, each once. */
export function registryCredentialNames(tenant: Pick<TenantSettings, "imageRegistries" | "globalImageRegistryMirror">): string[] {
  const names = [...(tenant.imageRegistries ?? []).map((registry) => registry.credentials), tenant.globalImageRegistryMirror?.credentials];
  return [...new Set(names.filter((name): name is string => name !== undefined))];
}

/** The data of the ConfigMap with the tenant's Cilium values ({@link ciliumValuesConfigMapName}), if it sets any. */
export function ciliumValuesData(tenant: Pick<TenantSettings, "cni">): Record<string, string> | undefined {
  return tenant.cni.values ? { [ciliumValuesKey]: stringify(tenant.cni.values) } : undefined;
}
