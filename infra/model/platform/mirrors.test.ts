import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildGoProgram } from "../../../tests/support/go-programs";
import { fleetConfigSchema } from "../config/fleet-config";
import { catalog } from "../versions/catalog";
import { clusterApiProviders } from "./cluster-api-providers";
import { mirroredChart, mirroredImage, providerArtifact, providerFetchConfig, splitImageRepository } from "./mirrors";

/** What cluster-api-operator v0.28.0 makes of each `fetchConfig.oci` value with the provider's version (tests/go/oras-repository). */
function operatorReads(artifacts: readonly { oci: string; version: string }[]): string[] {
  const { binary } = buildGoProgram("oras-repository");
  const run = spawnSync(binary, { input: artifacts.map(({ oci, version }) => `${oci} ${version}\n`).join(""), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`oras-repository failed: ${run.stderr}`);
  return run.stdout.trimEnd().split("\n");
}

/** How the container runtime reads each image reference (tests/go/image-reference: the real distribution/reference). */
function runtimeReads(images: readonly string[]): string[] {
  const { binary } = buildGoProgram("image-reference");
  const run = spawnSync(binary, { input: images.map((image) => `${image}\n`).join(""), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`image-reference failed: ${run.stderr}`);
  return run.stdout.trimEnd().split("\n");
}

/** Every image repository of the platform the images mirror moves (catalog). */
const platformImages = [
  catalog.clusterApiOperator.image,
  catalog.caren.image,
  catalog.flux.operatorImage,
  catalog.flux.registry,
  catalog.clusterAutoscaler.image,
  ...clusterApiProviders.map((provider) => provider.image),
];

/** True when the stack config takes `images` as the images mirror. */
const imagesAccepted = (images: string) => fleetConfigSchema.shape.mirrors.safeParse({ images }).success;

/** True when the stack config takes `providers` as the providers mirror. */
const configAccepts = (providers: string) => fleetConfigSchema.shape.mirrors.safeParse({ providers }).success;

describe("mirrors", () => {
  it("leaves every chart at its public repository without a charts mirror, and moves only the repository with one", () => {
    const pin = catalog.certManager.chart;
    expect(mirroredChart(pin)).toBe(pin);
    expect(mirroredChart(pin, { providers: "registry.example.com/capi" })).toBe(pin);
    expect(mirroredChart(pin, { charts: "oci://registry.example.com/charts" })).toEqual({ chart: pin.chart, version: pin.version, repository: "oci://registry.example.com/charts" });
  });

  it("splits an image repository into registry and path as the container runtime does", () => {
    const repositories = [...platformImages, "nginx", "library/nginx", "hetznercloud/hcloud-cloud-controller-manager", "localhost/a", "localhost:5000/a/b", "registry.example.com:5443/a/b/c", "Registry.Example.com/a", "A/b", "Abc/x"];
    const read = runtimeReads(repositories);
    repositories.forEach((repository, index) => {
      const { registry, path } = splitImageRepository(repository);
      expect(read[index], repository).toBe(`ok ${registry} ${path} -`);
    });
  });

  it("leaves every image at its public registry without an images mirror", () => {
    for (const image of platformImages) expect(mirroredImage(image)).toBe(image);
    expect(mirroredImage(catalog.caren.image, { charts: "oci://registry.example.com/charts" })).toBe(catalog.caren.image);
  });

  it("moves each image into the images mirror with its path, where the runtime pulls it from the mirror's registry (2,000 generated mirrors)", () => {
    const segment = fc.stringMatching(/^[a-z0-9]{1,6}$/);
    const mirrors = fc.sample(
      fc.tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), fc.array(segment, { maxLength: 3 })).map(([host, port, path]) => [host.join(".") + (port ? `:${port}` : ""), ...path].join("/")),
      { numRuns: 2_000, seed: 41 },
    ).filter(imagesAccepted);
    expect(mirrors.length).toBeGreaterThan(1_000);
    const pulls = mirrors.flatMap((images) => platformImages.map((image) => ({ images, image, moved: `${mirroredImage(image, { images })}:v1.0.0` })));
    const read = runtimeReads(pulls.map((pull) => pull.moved));
    const wrong = pulls.filter(({ images, image }, index) => {
      const [registry, ...prefix] = images.split("/");
      return read[index] !== `ok ${registry} ${[...prefix, splitImageRepository(image).path].join("/")} v1.0.0`;
    });
    expect(wrong).toEqual([]);
  });

  it("refuses as an images mirror what the runtime would read as a docker.io path, a scheme, a tag or a trailing '/'", () => {
    for (const value of ["mirror/platform", "mirror", "https://registry.example.com/mirror", "registry.example.com/mirror:v1", "registry.example.com/mirror/", "registry.example.com//mirror"]) {
      expect(imagesAccepted(value), value).toBe(false);
    }
    for (const value of ["registry.example.com", "registry.example.com/mirror", "localhost:5000/mirror", "localhost/a", "10.0.0.1:5000"]) expect(imagesAccepted(value), value).toBe(true);
    // What the refused first one would pull: docker.io.
    expect(runtimeReads([`${mirroredImage(catalog.caren.image, { images: "mirror/platform" })}:v1`])[0]).toMatch(/^ok docker\.io mirror\/platform\//);
  });

  it("fetches the providers from GitHub without a providers mirror", () => {
    for (const provider of clusterApiProviders) expect(providerFetchConfig(provider)).toBeUndefined();
  });

  it("gives every provider its own artifact in the mirror, which the operator pulls from that registry and repository at the provider's version", () => {
    const mirrors = ["registry.example.com/capi-providers", "http://127.0.0.1:5000/mirror", "registry.example.com:5443/a/b"];
    const pulls = mirrors.flatMap((mirror) => clusterApiProviders.map((provider) => ({ oci: providerFetchConfig(provider, { providers: mirror })!.oci, version: provider.version })));
    const artifacts = pulls.map((pull) => pull.oci);
    expect(new Set(artifacts).size).toBe(artifacts.length);
    // The kubeadm bootstrap and control-plane providers share a name; their artifacts differ by type.
    expect(artifacts.slice(0, clusterApiProviders.length)).toEqual([
      "registry.example.com/capi-providers/core-cluster-api",
      "registry.example.com/capi-providers/bootstrap-kubeadm",
      "registry.example.com/capi-providers/control-plane-kubeadm",
      "registry.example.com/capi-providers/infrastructure-hetzner",
      "registry.example.com/capi-providers/addon-helm",
    ]);
    const read = operatorReads(pulls);
    pulls.forEach(({ oci, version }, index) => {
      const plain = oci.startsWith("http://");
      const [registry, ...path] = oci.replace(/^http:\/\//, "").split("/");
      expect(read[index], oci).toBe(`ok ${registry} ${path.join("/")} ${version} ${plain}`);
    });
  });

  it("takes as a providers mirror only what the operator can pull from, for every provider (3,000 generated values)", () => {
    const alphabet = ["a", "b", "c", "A", "B", "0", "1", "9", ".", "-", "_", ":", "/"].map((character) => fc.constant(character));
    const values = fc.sample(fc.oneof(fc.string({ unit: fc.oneof(...alphabet), minLength: 1, maxLength: 24 }), fc.string({ unit: fc.oneof(...alphabet), minLength: 1, maxLength: 12 }).map((rest) => `registry.example.com/${rest}`)), { numRuns: 3_000, seed: 38 });
    const accepted = values.filter(configAccepts);
    expect(accepted.length).toBeGreaterThan(300); // the generator reaches both sides of the rule
    expect(accepted.length).toBeLessThan(values.length);
    const pulls = accepted.flatMap((value) => clusterApiProviders.map((provider) => ({ oci: providerArtifact(provider, value), version: provider.version })));
    const read = operatorReads(pulls);
    // Pulled at all, and at the provider's version (a value the operator read a tag from would pull another).
    const wrong = pulls.filter(({ version }, index) => !read[index]!.startsWith("ok ") || read[index]!.split(" ")[3] !== version);
    expect(wrong).toEqual([]);
  });

  it("refuses as a providers mirror what the operator refuses, a tag, and a scheme other than http://", () => {
    for (const value of ["Registry.example.com/Capi", "registry.example.com/capi:v1", "https://registry.example.com/capi", "oci://registry.example.com/capi", "registry.example.com/capi/", "registry.example.com//capi"]) {
      expect(configAccepts(value), value).toBe(false);
    }
    expect(operatorReads([{ oci: "registry.example.com/Capi/core-cluster-api", version: "v1.0.0" }])[0]).toMatch(/^error: .*invalid repository/);
    // A tag in the value wins over the provider's version: why the config refuses one.
    expect(operatorReads([{ oci: "registry.example.com/capi/core-cluster-api:v9.9.9", version: "v1.0.0" }])[0]).toBe("ok registry.example.com capi/core-cluster-api v9.9.9 false");
  });
});
