import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { goModule } from "../../../tests/support/upstream";
import { catalog } from "../versions/catalog";
import {
  clusterApiFeatureGates,
  clusterApiOperatorValues,
  clusterApiProviders,
  featureGateSecretData,
  featureGatesSecretName,
  githubTokenSecretName,
  providerConfigSecret,
} from "./cluster-api-providers";

describe("clusterApiProviders", () => {
  it("lists the core provider first, then kubeadm, Hetzner and Helm", () => {
    expect(clusterApiProviders.map((p) => `${p.kind}/${p.name}`)).toEqual([
      "CoreProvider/cluster-api",
      "BootstrapProvider/kubeadm",
      "ControlPlaneProvider/kubeadm",
      "InfrastructureProvider/hetzner",
      "AddonProvider/helm",
    ]);
  });

  it("takes every version from the catalog", () => {
    const versions = Object.fromEntries(clusterApiProviders.map((p) => [p.kind, p.version]));
    expect(versions).toEqual({
      CoreProvider: catalog.clusterApi.version,
      BootstrapProvider: catalog.clusterApi.version,
      ControlPlaneProvider: catalog.clusterApi.version,
      InfrastructureProvider: catalog.caph.version,
      AddonProvider: catalog.caaph.version,
    });
  });

  it("never repeats a (kind, name) pair or a namespace (the operator refuses duplicates)", () => {
    expect(new Set(clusterApiProviders.map((p) => `${p.kind}/${p.name}`)).size).toBe(clusterApiProviders.length);
    expect(new Set(clusterApiProviders.map((p) => p.namespace)).size).toBe(clusterApiProviders.length);
  });

  it("turns ClusterTopology on in core and KCP, RuntimeSDK only in core", () => {
    const gates = Object.fromEntries(clusterApiProviders.map((p) => [p.kind, p.featureGates]));
    expect(gates.CoreProvider).toEqual(["ClusterTopology", "RuntimeSDK"]);
    expect(gates.ControlPlaneProvider).toEqual(["ClusterTopology"]);
    expect([gates.BootstrapProvider, gates.InfrastructureProvider, gates.AddonProvider]).toEqual([[], [], []]);
  });
});

describe("featureGateSecretData", () => {
  it("maps gates to the clusterctl variables the manifests template", () => {
    expect(featureGateSecretData(["ClusterTopology", "RuntimeSDK"])).toEqual({ CLUSTER_TOPOLOGY: "true", EXP_RUNTIME_SDK: "true" });
    expect(featureGateSecretData([])).toEqual({});
  });
});

// What each CAPI manager ends up with: the operator fills the provider manifest's clusterctl
// variables from the provider's configSecret (sigs.k8s.io/cluster-api-operator@v0.28.0:
// internal/controller/phase_initialize.go `initReaderVariables`), and the manifest's
// `--feature-gates` flag templates each gate as `${VARIABLE:=default}`
// (sigs.k8s.io/cluster-api@v1.12.10: config/manager/manager.yaml and the kubeadm twins), read
// here from the module the resolver downloads (tests/support/upstream.ts).
const capiModule = () => {
  const module = goModule("sigs.k8s.io/cluster-api", catalog.clusterApi.version);
  if ("unavailable" in module) throw new Error(module.unavailable);
  return module.dir;
};
const managerManifests: Record<string, string> = {
  CoreProvider: "config/manager/manager.yaml",
  BootstrapProvider: "bootstrap/kubeadm/config/manager/manager.yaml",
  ControlPlaneProvider: "controlplane/kubeadm/config/manager/manager.yaml",
};

/** The gates a manager runs with, after clusterctl's `${VAR:=default}` substitution from `variables`. */
function managerGates(kind: string, variables: Record<string, string>): Record<string, string> {
  const manifest = readFileSync(path.join(capiModule(), managerManifests[kind]!), "utf8");
  const flag = /--feature-gates=([^"\s]+)/.exec(manifest)![1]!;
  const substituted = flag.replaceAll(/\$\{(\w+):=(\w*)\}/g, (_all, name: string, fallback: string) => variables[name] ?? fallback);
  return Object.fromEntries(substituted.split(",").map((pair) => pair.split("=") as [string, string]));
}

describe("the feature gates each CAPI manager runs with", () => {
  it("are on for the gates its provider row asks for, from the configSecret it names, with or without a GitHub token", () => {
    for (const githubToken of [false, true]) {
      for (const provider of clusterApiProviders.filter((p) => p.kind in managerManifests)) {
        const ref = providerConfigSecret(provider, { githubToken });
        // The component fills the gates Secret with every fleet gate, a token-only Secret with no gate.
        const data = ref?.name === featureGatesSecretName ? featureGateSecretData(clusterApiFeatureGates) : {};
        const gates = managerGates(provider.kind, data);
        for (const gate of provider.featureGates) expect(gates[gate], `${provider.kind} ${gate}`).toBe("true");
      }
    }
    // Without the fleet's Secret the manifests leave both gates off (negative control).
    expect(managerGates("CoreProvider", {})).toMatchObject({ ClusterTopology: "false", RuntimeSDK: "false" });
  });
});

/** A file of sigs.k8s.io/cluster-api-operator at the catalog's chart version. */
function operatorFile(...segments: string[]): string {
  const module = goModule("sigs.k8s.io/cluster-api-operator", `v${catalog.clusterApiOperator.chart.version}`);
  if ("unavailable" in module) throw new Error(module.unavailable);
  return readFileSync(path.join(module.dir, ...segments), "utf8");
}

/** The doc comment of the operator's `ConfigSecret` field (api/v1alpha2/provider_types.go), as one line. */
function configSecretFieldDoc(): string {
  const source = operatorFile("api", "v1alpha2", "provider_types.go");
  const comment = /((?:\n\t\/\/[^\n]*)+)\n\tConfigSecret \*SecretReference/.exec(source)?.[1];
  if (!comment) throw new Error("provider_types.go: no ConfigSecret field with a doc comment");
  return comment.replaceAll(/\n\t\/\/ ?/g, " ").replaceAll(/\s+/g, " ").trim();
}

describe("providerConfigSecret", () => {
  it("puts every provider's config Secret in the provider's own namespace, as the operator's API requires", () => {
    expect(configSecretFieldDoc()).toContain("This secret must be in the same namespace as the provider.");
    for (const githubToken of [false, true]) {
      for (const provider of clusterApiProviders) {
        const ref = providerConfigSecret(provider, { githubToken });
        if (ref) expect(ref.namespace, `${provider.kind} with${githubToken ? "" : "out"} a token`).toBe(provider.namespace);
      }
    }
  });

  it("gives each provider with gates a gates Secret, token or not", () => {
    for (const githubToken of [false, true]) {
      const gated = clusterApiProviders.filter((p) => p.featureGates.length > 0);
      expect(gated.length).toBeGreaterThan(1);
      for (const provider of gated) expect(providerConfigSecret(provider, { githubToken })?.name, provider.kind).toBe(featureGatesSecretName);
    }
  });

  it("gives a provider without gates a token Secret in its own namespace when there is a token, and none otherwise", () => {
    const ungated = clusterApiProviders.filter((p) => p.featureGates.length === 0);
    expect(ungated.length).toBeGreaterThan(0);
    for (const provider of ungated) {
      expect(providerConfigSecret(provider, { githubToken: false })).toBeUndefined();
      expect(providerConfigSecret(provider, { githubToken: true })).toEqual({ name: githubTokenSecretName, namespace: provider.namespace });
    }
    expect(githubTokenSecretName).not.toBe(featureGatesSecretName);
  });
});

// The operator's chart (hack/charts/cluster-api-operator; `make release-chart` packages it as is,
// adding only RBAC, CRDs and webhooks) and what its manager does with the flags.
type Values = Record<string, unknown>;
const chart = (...segments: string[]) => operatorFile("hack", "charts", "cluster-api-operator", ...segments);

/** Helm's merge of user values over the chart's (maps merge, anything else replaces). */
function mergeValues(base: Values, over: Values): Values {
  const isMap = (value: unknown): value is Values => typeof value === "object" && value !== null && !Array.isArray(value);
  return Object.fromEntries(
    [...new Set([...Object.keys(base), ...Object.keys(over)])].map((key) => {
      const [a, b] = [base[key], over[key]];
      return [key, isMap(a) && isMap(b) ? mergeValues(a, b) : key in over ? b : a];
    }),
  );
}

/**
 * The manager container's args as templates/deployment.yaml renders them: a reading of its
 * `if`/`with` blocks over the values (Go template truth: false, 0, "" and empty are false),
 * not Helm; any other action in the args fails the test.
 */
function managerArgs(values: Values): string[] {
  const template = chart("templates", "deployment.yaml");
  const lines = /\n\s*- args:\n([\s\S]*?)\n\s*command:/.exec(template)?.[1]?.split("\n") ?? [];
  expect(lines.length).toBeGreaterThan(0);
  const lookup = (expression: string, context: unknown): unknown =>
    expression
      .replace(/^\$?\./, "")
      .split(".")
      .filter(Boolean)
      .reduce<unknown>((value, key) => (typeof value === "object" && value !== null ? (value as Values)[key] : undefined), expression.startsWith("$") ? { Values: values } : context);
  const truthy = (value: unknown) => Boolean(value) && !(Array.isArray(value) && value.length === 0) && !(typeof value === "object" && value !== null && Object.keys(value).length === 0);
  const stack: { on: boolean; context: unknown }[] = [{ on: true, context: { Values: values } }];
  const args: string[] = [];
  for (const line of lines) {
    const top = stack.at(-1)!;
    const action = /^\s*\{\{-?\s*(if|with|end)\s*([^}]*?)\s*-?\}\}\s*$/.exec(line);
    if (action?.[1] === "end") stack.pop();
    else if (action) {
      const value = lookup(action[2]!, top.context);
      stack.push({ on: top.on && truthy(value), context: action[1] === "with" ? value : top.context });
    } else if (/\{\{-?\s*(else|range|define|template)\b/.test(line)) throw new Error(`unread action: ${line.trim()}`);
    else if (top.on) args.push(line.trim().replace(/^- /, ""));
  }
  return args;
}

describe("the operator's chart values", () => {
  const defaults = () => parse(chart("values.yaml")) as Values;

  it("are values of the chart, each changing its default", () => {
    for (const [key, value] of Object.entries(clusterApiOperatorValues)) {
      expect(defaults(), key).toHaveProperty(key);
      expect(defaults()[key], key).not.toEqual(value);
    }
  });

  it("make the manager watch config Secrets, so a changed token reaches each provider at once", () => {
    // cmd/main.go: the flag, off by default, sets each reconciler's WatchConfigSecretChanges;
    // internal/controller/genericprovider_controller.go then watches Secrets and enqueues the providers that name one.
    const main = operatorFile("cmd", "main.go");
    expect(main).toMatch(/fs\.BoolVar\(&watchConfigSecretChanges, "watch-configsecret", false,/);
    expect(main).toContain("WatchConfigSecretChanges: watchConfigSecretChanges,");
    const controller = operatorFile("internal", "controller", "genericprovider_controller.go");
    expect(controller).toMatch(/if r\.WatchConfigSecretChanges \{[\s\S]*?builder\.Watches\(\s*&corev1\.Secret\{\},\s*handler\.EnqueueRequestsFromMapFunc\(newSecretToProviderFuncMapForProviderList/);
    expect(managerArgs(mergeValues(defaults(), clusterApiOperatorValues))).toContain("--watch-configsecret");
    // Negative control: the chart's defaults leave the watch off.
    expect(managerArgs(defaults())).not.toContain("--watch-configsecret");
    expect(managerArgs(defaults())).toContain("--leader-elect={{ .enabled }}");
  });
});
