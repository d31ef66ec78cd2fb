import type { HelmChartPin } from "../versions/catalog";
import type { ClusterApiProviderSpec } from "./cluster-api-providers";

/**
 * Where the platform's artifacts come from when not from their public sources (`mirrors` in the
 * stack config; docs/delivery.md, *Mirrors and air-gapped installs*). Each field is optional: an
 * unset one keeps the catalog's public source.
 */
export interface Mirrors {
  /**
   * One chart repository for every chart the fleet installs, each under its catalog name and
   * version: an https:// Helm repository, or an oci:// registry path (the chart is then
   * `<charts>/<chart>:<version>`).
   */
  readonly charts?: string;
  /**
   * An OCI repository prefix for the Cluster API providers' components: each provider is the
   * artifact `<providers>/<type>-<name>`, tagged with its version (`providerArtifact`).
   * `http://` in front for a registry that serves plain HTTP.
   */
  readonly providers?: string;
}

/** A chart pin with its repository replaced by the charts mirror, when there is one. */
export function mirroredChart(pin: HelmChartPin, mirrors: Mirrors = {}): HelmChartPin {
  return mirrors.charts ? { ...pin, repository: mirrors.charts } : pin;
}

/**
 * The provider type cluster-api-operator names each kind by, which it also uses in the file
 * names it looks for in an OCI artifact (sigs.k8s.io/cluster-api-operator@v0.28.0:
 * api/v1alpha2/*provider_wrapper.go, `GetType`).
 */
export const operatorProviderType: Readonly<Record<ClusterApiProviderSpec["kind"], string>> = {
  CoreProvider: "core",
  BootstrapProvider: "bootstrap",
  ControlPlaneProvider: "control-plane",
  InfrastructureProvider: "infrastructure",
  AddonProvider: "addon",
};

/**
 * The OCI artifact a provider's components come from in the providers mirror, without a tag: the
 * operator tags it with the provider's `spec.version` and reads `metadata.yaml` and
 * `<type>-components.yaml` from it, the names of the release's own assets
 * (sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/oci_source.go, `NewMapStore`,
 * `parseOCISource`, `CopyOCIStore`). `<type>-<name>` keeps the kubeadm bootstrap and control-plane
 * providers apart.
 */
export function providerArtifact(provider: Pick<ClusterApiProviderSpec, "kind" | "name">, mirror: string): string {
  return `${mirror}/${operatorProviderType[provider.kind]}-${provider.name}`;
}

/**
 * The provider's `spec.fetchConfig`: from the providers mirror, or absent, so the operator fetches
 * the release from GitHub. Only OCI: the operator takes a `url` only on github.com or a GitLab
 * package registry, over https (sigs.k8s.io/cluster-api-operator@v0.28.0: util/util.go, `RepositoryFactory`).
 */
export function providerFetchConfig(provider: Pick<ClusterApiProviderSpec, "kind" | "name">, mirrors: Mirrors = {}): { oci: string } | undefined {
  return mirrors.providers ? { oci: providerArtifact(provider, mirrors.providers) } : undefined;
}
