import type { MirrorSettings } from "../config/fleet-config";
import type { HelmChartPin } from "../versions/catalog";
import type { ClusterApiProviderSpec } from "./cluster-api-providers";

/**
 * Where the platform's artifacts come from when not from their public sources: `mirrors` in the
 * stack config, whose schema describes each field (docs/delivery.md, *Mirrors and air-gapped
 * installs*). An unset field keeps the catalog's public source.
 */
export type Mirrors = Readonly<MirrorSettings>;

/**
 * An image repository (`registry/path`, no tag) split as container runtimes split it: the first
 * component is the registry only when it holds a `.` or a `:` or is `localhost`; otherwise the
 * image is on docker.io, and a one-component path is under `library/`
 * (github.com/distribution/reference@v0.6.0: normalize.go, `splitDockerDomain`).
 */
export function splitImageRepository(repository: string): { registry: string; path: string } {
  const slash = repository.indexOf("/");
  const first = slash === -1 ? "" : repository.slice(0, slash);
  if (slash === -1 || (!/[.:]/.test(first) && first !== "localhost" && first.toLowerCase() === first)) {
    return { registry: "docker.io", path: slash === -1 ? `library/${repository}` : repository };
  }
  return { registry: first, path: repository.slice(slash + 1) };
}

/** An image repository (or registry prefix) moved into the images mirror, its path kept: `<images>/<path>`; unchanged without one. */
export function mirroredImage(repository: string, mirrors: Mirrors = {}): string {
  return mirrors.images ? `${mirrors.images}/${splitImageRepository(repository).path}` : repository;
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
