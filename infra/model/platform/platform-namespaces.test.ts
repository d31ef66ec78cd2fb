import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { capiModuleDir, moduleDir } from "../../../tests/support/cluster-class-topology";
import { clusterApiProviders } from "./cluster-api-providers";
import { clusterClassNamespace } from "./hetzner-cluster-class";
import { platformNamespaces, reservedNamespaces } from "./platform-namespaces";

/**
 * The namespaces every cluster starts with, read from Kubernetes' own constants at the version
 * Cluster API builds with (sigs.k8s.io/cluster-api@v1.12.10: go.mod): k8s.io/api core/v1/types.go
 * (NamespaceDefault, NamespaceNodeLease) and k8s.io/apimachinery pkg/apis/meta/v1/types.go
 * (NamespaceSystem, NamespacePublic).
 */
function kubernetesInitialNamespaces(): string[] {
  const goMod = readFileSync(path.join(capiModuleDir(), "go.mod"), "utf8");
  const versionOf = (module: string) => {
    const version = new RegExp(`^\\s*${module.replace(/\./g, "\\.")} (v\\S+)`, "m").exec(goMod)?.[1];
    if (!version) throw new Error(`Cluster API's go.mod requires no ${module}`);
    return version;
  };
  const sources = [
    ["k8s.io/api", "core/v1/types.go", ["NamespaceDefault", "NamespaceNodeLease"]],
    ["k8s.io/apimachinery", "pkg/apis/meta/v1/types.go", ["NamespaceSystem", "NamespacePublic"]],
  ] as const;
  const names: string[] = [];
  for (const [module, file, constants] of sources) {
    const text = readFileSync(path.join(moduleDir(module, versionOf(module)), file), "utf8");
    for (const constant of constants) names.push(new RegExp(`\\b${constant}(?: string)? = "([^"]+)"`).exec(text)![1]!);
  }
  return names;
}

describe("reservedNamespaces", () => {
  it("reserves the namespaces every cluster starts with, as Kubernetes names them", () => {
    const initial = kubernetesInitialNamespaces();
    expect(initial).toHaveLength(4);
    const reserved = reservedNamespaces();
    expect(initial.filter((namespace) => !reserved.has(namespace))).toEqual([]);
  });

  it("reserves every namespace the platform installs into, each with a named owner", () => {
    const reserved = reservedNamespaces();
    const platform = [...Object.values(platformNamespaces), ...clusterApiProviders.map((provider) => provider.namespace), clusterClassNamespace];
    expect(platform.filter((namespace) => !reserved.has(namespace))).toEqual([]);
    expect([...reserved].filter(([, owner]) => owner.trim() === "")).toEqual([]);
    // A provider's namespace names the provider, so that the refusal says whose it is.
    for (const provider of clusterApiProviders) expect(reserved.get(provider.namespace)).toContain(provider.name);
  });
});
