import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildGoProgram } from "../../../tests/go-programs";
import { fleetConfigSchema } from "../config/fleet-config";
import { catalog } from "../versions/catalog";
import { clusterApiProviders } from "./cluster-api-providers";
import { mirroredChart, providerArtifact, providerFetchConfig } from "./mirrors";

/** What cluster-api-operator v0.28.0 makes of each `fetchConfig.oci` value (tests/go/oras-repository). */
function operatorReads(values: readonly string[]): string[] {
  const { binary } = buildGoProgram("oras-repository");
  const run = spawnSync(binary, { input: values.map((value) => `${value}\n`).join(""), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`oras-repository failed: ${run.stderr}`);
  return run.stdout.trimEnd().split("\n");
}

/** True when the stack config takes `providers` as the providers mirror. */
const configAccepts = (providers: string) => fleetConfigSchema.shape.mirrors.safeParse({ providers }).success;

describe("mirrors", () => {
  it("leaves every chart at its public repository without a charts mirror, and moves only the repository with one", () => {
    const pin = catalog.certManager.chart;
    expect(mirroredChart(pin)).toBe(pin);
    expect(mirroredChart(pin, { providers: "registry.example.com/capi" })).toBe(pin);
    expect(mirroredChart(pin, { charts: "oci://registry.example.com/charts" })).toEqual({ chart: pin.chart, version: pin.version, repository: "oci://registry.example.com/charts" });
  });

  it("fetches the providers from GitHub without a providers mirror", () => {
    for (const provider of clusterApiProviders) expect(providerFetchConfig(provider)).toBeUndefined();
  });

  it("gives every provider its own artifact in the mirror, which the operator reads as that registry and repository", () => {
    const mirrors = ["registry.example.com/capi-providers", "http://127.0.0.1:5000/mirror", "registry.example.com:5443/a/b"];
    const artifacts = mirrors.flatMap((mirror) => clusterApiProviders.map((provider) => providerFetchConfig(provider, { providers: mirror })!.oci));
    expect(new Set(artifacts).size).toBe(artifacts.length);
    // The kubeadm bootstrap and control-plane providers share a name; their artifacts differ by type.
    expect(artifacts.slice(0, clusterApiProviders.length)).toEqual([
      "registry.example.com/capi-providers/core-cluster-api",
      "registry.example.com/capi-providers/bootstrap-kubeadm",
      "registry.example.com/capi-providers/control-plane-kubeadm",
      "registry.example.com/capi-providers/infrastructure-hetzner",
      "registry.example.com/capi-providers/addon-helm",
    ]);
    const read = operatorReads(artifacts);
    artifacts.forEach((artifact, index) => {
      const plain = artifact.startsWith("http://");
      const [registry, ...path] = artifact.replace(/^http:\/\//, "").split("/");
      expect(read[index], artifact).toBe(`ok ${registry} ${path.join("/")} ${plain}`);
    });
  });

  it("takes as a providers mirror only what the operator can pull from, for every provider (3,000 generated values)", () => {
    const alphabet = ["a", "b", "c", "A", "B", "0", "1", "9", ".", "-", "_", ":", "/"].map((character) => fc.constant(character));
    const values = fc.sample(fc.oneof(fc.string({ unit: fc.oneof(...alphabet), minLength: 1, maxLength: 24 }), fc.string({ unit: fc.oneof(...alphabet), minLength: 1, maxLength: 12 }).map((rest) => `registry.example.com/${rest}`)), { numRuns: 3_000, seed: 38 });
    const accepted = values.filter(configAccepts);
    expect(accepted.length).toBeGreaterThan(300); // the generator reaches both sides of the rule
    expect(accepted.length).toBeLessThan(values.length);
    const artifacts = accepted.flatMap((value) => clusterApiProviders.map((provider) => providerArtifact(provider, value)));
    const read = operatorReads(artifacts);
    const refused = artifacts.filter((_, index) => !read[index]!.startsWith("ok "));
    expect(refused).toEqual([]);
  });

  it("refuses as a providers mirror what the operator refuses, a tag, and a scheme other than http://", () => {
    for (const value of ["Registry.example.com/Capi", "registry.example.com/capi:v1", "https://registry.example.com/capi", "oci://registry.example.com/capi", "registry.example.com/capi/", "registry.example.com//capi"]) {
      expect(configAccepts(value), value).toBe(false);
    }
    expect(operatorReads(["registry.example.com/Capi/core-cluster-api"])[0]).toMatch(/^error: .*invalid repository/);
  });
});
