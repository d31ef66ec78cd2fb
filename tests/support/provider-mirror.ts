import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { operatorProviderType, providerArtifact } from "../../infra/model/platform/mirrors";
import { clusterApiProviders, type ClusterApiProviderSpec } from "../../infra/model/platform/cluster-api-providers";
import { catalog } from "../../infra/model/versions/catalog";
import { dirOrThrow, upstreamDir, type Upstream } from "./upstream";

/**
 * The providers mirror for a real `up` (`mirrors.providers`): one OCI artifact per provider the
 * program declares, tagged with its version and holding `metadata.yaml` and
 * `<type>-components.yaml`, as `oras push <ref> metadata.yaml <type>-components.yaml` would make it
 * (each file a layer titled with its name; what the operator reads:
 * sigs.k8s.io/cluster-api-operator@v0.28.0: internal/controller/oci_source.go). The components are
 * built the way each release builds them, with the toolchain kubectl's kustomize:
 * - CAPI (sigs.k8s.io/cluster-api@<version>, Makefile `release-manifests`): config/default,
 *   bootstrap/kubeadm/config/default, controlplane/kubeadm/config/default; metadata.yaml;
 * - CAAPH (its module): config/default; metadata.yaml;
 * - CAPH: config/default and metadata.yaml of the data copy (the proxy refuses its module).
 * Served by a STAND-IN registry: a read-only subset of the OCI distribution API (ping, manifests
 * and blobs by tag or digest, over plain HTTP), enough for oras-go to pull. The operator's pull is real.
 */
export interface ProviderMirror {
  /** `mirrors.providers`: http://127.0.0.1:<port>/<prefix> */
  url: string;
  /** Every request path, in order. */
  requests: string[];
  stop(): Promise<void>;
}

interface Blob {
  mediaType: string;
  bytes: Buffer;
}

const digestOf = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** Where a provider's release sources are, and which kustomization makes its components. */
function sourceOf(provider: ClusterApiProviderSpec): { root: string; kustomization: string } {
  const need = (answer: Upstream) => dirOrThrow(`the providers mirror cannot build ${provider.kind} ${provider.name}`, answer);
  switch (provider.kind) {
    case "CoreProvider":
    case "BootstrapProvider":
    case "ControlPlaneProvider": {
      const root = need(upstreamDir({ module: "sigs.k8s.io/cluster-api", version: catalog.clusterApi.version, path: "" }));
      const kustomization = { CoreProvider: "config/default", BootstrapProvider: "bootstrap/kubeadm/config/default", ControlPlaneProvider: "controlplane/kubeadm/config/default" }[provider.kind];
      return { root, kustomization };
    }
    case "AddonProvider":
      return { root: need(upstreamDir({ module: "sigs.k8s.io/cluster-api-addon-provider-helm", version: catalog.caaph.version, path: "" })), kustomization: "config/default" };
    case "InfrastructureProvider":
      return {
        root: need(upstreamDir({ module: "github.com/syself/cluster-api-provider-hetzner", version: catalog.caph.version, path: "", shared: `caph-${catalog.caph.version}` })),
        kustomization: "config/default",
      };
  }
}

export async function startProviderMirror(kubectl: string, prefix = "capi-providers"): Promise<ProviderMirror> {
  const blobs = new Map<string, Blob>();
  const manifests = new Map<string, string>(); // "<repository>:<tag>" → manifest digest
  const put = (mediaType: string, bytes: Buffer) => {
    const digest = digestOf(bytes);
    blobs.set(digest, { mediaType, bytes });
    return { mediaType, digest, size: bytes.length };
  };
  const emptyConfig = put("application/vnd.oci.empty.v1+json", Buffer.from("{}"));
  for (const provider of clusterApiProviders) {
    const { root, kustomization } = sourceOf(provider);
    const metadataFile = path.join(root, "metadata.yaml");
    if (!existsSync(metadataFile)) throw new Error(`${root} has no metadata.yaml`);
    const components = execFileSync(kubectl, ["kustomize", path.join(root, kustomization)], { encoding: "utf8", maxBuffer: 128 * 1024 * 1024 });
    const files: [string, Buffer][] = [
      ["metadata.yaml", readFileSync(metadataFile)],
      [`${operatorProviderType[provider.kind]}-components.yaml`, Buffer.from(components)],
    ];
    const layers = files.map(([title, bytes]) => ({ ...put("application/vnd.oci.image.layer.v1.tar", bytes), annotations: { "org.opencontainers.image.title": title } }));
    const manifest = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", artifactType: "application/vnd.unknown.artifact.v1", config: emptyConfig, layers }),
    );
    const stored = put("application/vnd.oci.image.manifest.v1+json", manifest);
    const repository = providerArtifact(provider, prefix);
    manifests.set(`${repository}:${provider.version}`, stored.digest);
  }
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://registry");
    requests.push(`${request.method ?? "GET"} ${url.pathname}`);
    if (url.pathname === "/v2/" || url.pathname === "/v2") {
      response.writeHead(200, { "Docker-Distribution-API-Version": "registry/2.0" }).end("{}");
      return;
    }
    const match = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    const digest = match === null ? undefined : match[3]!.startsWith("sha256:") ? match[3] : manifests.get(`${match[1]}:${match[3]}`);
    const blob = digest === undefined ? undefined : blobs.get(digest);
    if (match === null || blob === undefined || (match[2] === "manifests" && !blob.mediaType.includes("manifest"))) {
      response.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ errors: [{ code: match?.[2] === "blobs" ? "BLOB_UNKNOWN" : "MANIFEST_UNKNOWN", message: `${url.pathname} is not in this mirror` }] }));
      return;
    }
    response.writeHead(200, { "Content-Type": blob.mediaType, "Content-Length": blob.bytes.length, "Docker-Content-Digest": digest! });
    response.end(request.method === "HEAD" ? undefined : blob.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/${prefix}`,
    requests,
    stop: () => new Promise<void>((resolve) => server.close(() => { resolve(); })),
  };
}
