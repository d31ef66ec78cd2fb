import { beforeAll, describe, expect, it } from "vitest";
import { providerSpec } from "./model/platform/cluster-api";
import { byType, one, runStack, waitsFor } from "../tests/support/fleet-run";
import type { Registration } from "../tests/support/pulumi-mocks";
import { clusterApiProviders, githubTokenVariable } from "./model/platform/cluster-api-providers";
import { componentTypes } from "./model/contract/component-types";

// cluster-api-operator fetches each provider's release from GitHub; with `githubToken` set,
// every provider's configSecret carries it, and it stays a secret end to end.

const token = `ghp_${"Q1w2E3r4T5".repeat(3)}y6U7i8`;
const providerTypes = new Set(clusterApiProviders.map((provider) => `kubernetes:operator.cluster.x-k8s.io/v1alpha2:${provider.kind}`));

/** Every input (by resource and key) that carries the value outside a secret. */
function plainLeaks(registrations: readonly Registration[], value: string): string[] {
  return registrations.flatMap((registration) =>
    Object.entries(registration.inputs)
      .filter(([key, input]) => !registration.secretInputs.includes(key) && JSON.stringify(input ?? null).includes(value))
      .map(([key]) => `${registration.type} ${registration.name}.${key}`),
  );
}

describe("a stack with githubToken", () => {
  let registrations: Registration[];

  beforeAll(async () => {
    ({ registrations } = await runStack("dev", (values, secretKeys) => {
      values["capi-fleet:githubToken"] = token;
      secretKeys.push("capi-fleet:githubToken");
    }));
  });

  it("points every provider at a config Secret that holds the token, and waits for it", () => {
    const providers = registrations.filter((r) => providerTypes.has(r.type));
    expect(providers).toHaveLength(clusterApiProviders.length);
    for (const provider of providers) {
      const ref = (provider.inputs.spec as { configSecret?: { name: string; namespace: string } }).configSecret;
      expect(ref, provider.name).toBeDefined();
      const secret = byType(registrations, "kubernetes:core/v1:Secret").find((r) => {
        const metadata = r.inputs.metadata as { name: string; namespace: string };
        return metadata.name === ref!.name && metadata.namespace === ref!.namespace;
      });
      expect(secret, `${provider.name}: Secret ${ref!.namespace}/${ref!.name}`).toBeDefined();
      expect((secret!.inputs.stringData as Record<string, string>)[githubTokenVariable]).toBe(token);
      expect(secret!.secretInputs).toContain("stringData");
      expect(waitsFor(registrations, provider, secret!)).toBe(true);
    }
  });

  it("keeps the gates in the core's config Secret", () => {
    const gates = one(registrations, "kubernetes:core/v1:Secret", "cluster-api-feature-gates");
    expect(gates.inputs.stringData).toEqual({ CLUSTER_TOPOLOGY: "true", EXP_RUNTIME_SDK: "true", [githubTokenVariable]: token });
  });

  it("never puts the token in a plain input (the ClusterApi component's included)", () => {
    expect(plainLeaks(registrations, token)).toEqual([]);
    expect(one(registrations, componentTypes.clusterApi).inputs).not.toHaveProperty("githubToken");
  });

  it("the leak check sees a token in a plain input (negative control)", () => {
    const gates = one(registrations, "kubernetes:core/v1:Secret", "cluster-api-feature-gates");
    expect(plainLeaks([{ ...gates, secretInputs: [] }], token)).toEqual(["kubernetes:core/v1:Secret cluster-api-feature-gates.stringData"]);
  });
});

describe("a stack without githubToken", () => {
  it("gives the providers without gates no configSecret, and adds no token Secret", async () => {
    const { registrations } = await runStack("dev");
    for (const provider of clusterApiProviders.filter((p) => p.featureGates.length === 0)) {
      expect(providerSpec(provider)).not.toHaveProperty("configSecret");
    }
    const tokenSecrets = byType(registrations, "kubernetes:core/v1:Secret").filter((r) => JSON.stringify(r.inputs.stringData ?? {}).includes(githubTokenVariable));
    expect(tokenSecrets).toEqual([]);
  });
});
