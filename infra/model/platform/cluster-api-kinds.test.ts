import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiVersions, kubernetesTypeToken } from "./cluster-api-kinds";

// The type token @pulumi/kubernetes registers a custom resource under, read from its own
// source (@pulumi/kubernetes: apiextensions/customResource.js, the CustomResource constructor).
const customResourceSource = readFileSync(require.resolve("@pulumi/kubernetes/apiextensions/customResource.js"), "utf8");

/** The token the CustomResource constructor builds for an apiVersion and kind. */
function pulumiCustomResourceToken(apiVersion: string, kind: string): string {
  const template = /super\(`(kubernetes:[^`]*)`/.exec(customResourceSource)?.[1];
  if (!template) throw new Error("@pulumi/kubernetes: no CustomResource type token template found");
  return template.replace("${args.apiVersion}", apiVersion).replace("${args.kind}", kind);
}

describe("kubernetesTypeToken", () => {
  it("is the type token the engine and the policy pack see for a custom resource", () => {
    for (const [apiVersion, kind] of [
      [apiVersions.cluster, "Cluster"],
      [apiVersions.hetzner, "HetznerClusterTemplate"],
      [apiVersions.helmChartProxy, "HelmChartProxy"],
    ] as const) {
      expect(kubernetesTypeToken(apiVersion, kind)).toBe(pulumiCustomResourceToken(apiVersion, kind));
    }
  });
});
