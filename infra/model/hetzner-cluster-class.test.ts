import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { carenExtensionNames } from "./caren-extensions";
import { catalog } from "./catalog";
import type { Manifest } from "./cluster-api-kinds";
import {
  classVariables,
  clusterClassName,
  clusterClassNamespace,
  hetznerClusterClassManifests,
  hetznerClusterClassTemplates,
  preKubeadmCommandsSeed,
  workerClassName,
} from "./hetzner-cluster-class";
import { installKubernetesScript } from "./node-bootstrap";
import { validateKubernetesVersionsList } from "./upgrade-plan";

const caren = carenExtensionNames();
const { clusterClass, templates } = hetznerClusterClassManifests({ carenExtensionNames: caren });
type Ref = Record<"apiVersion" | "kind" | "name", string>;
const spec = clusterClass.spec as {
  kubernetesVersions: string[];
  infrastructure: { templateRef: Ref };
  controlPlane: { templateRef: Ref; machineInfrastructure: { templateRef: Ref }; healthCheck: { remediation: { templateRef: Ref } } };
  workers: { machineDeployments: Record<string, unknown>[] };
  variables: { name: string; required: boolean; schema: { openAPIV3Schema: Record<string, unknown> } }[];
  patches: Record<string, unknown>[];
};

/** Every Kubernetes version the catalog knows, in the forms a kubelet install could use. */
function kubernetesVersionLiterals(text: string): string[] {
  const versions = [...new Set([...catalog.tenantKubernetesVersions, catalog.k3s.version.split("+")[0]!])];
  return versions.flatMap((version) => [version, version.slice(1)]).filter((version) => text.includes(version));
}

/**
 * What is wrong with where a class's nodes get their Kubernetes version: each role's install must
 * read its own builtin version (they differ during a chained upgrade), and no version may be
 * written anywhere but spec.kubernetesVersions, which lists them on purpose.
 */
function installVersionProblems(classManifest: Manifest, classTemplates: Record<string, Manifest>): string[] {
  const { kubernetesVersions: _listed, ...rest } = classManifest.spec as { kubernetesVersions: string[]; patches: { name: string }[] };
  const install = JSON.stringify(rest.patches.find((patch) => patch.name === "kubernetes-install"));
  return [
    ...["{{ .builtin.controlPlane.version }}", "{{ .builtin.machineDeployment.version }}"].filter((read) => !install.includes(read)).map((read) => `does not read ${read}`),
    ...(install.includes("builtin.cluster.topology.version") ? ["reads the Cluster's target version"] : []),
    ...kubernetesVersionLiterals(JSON.stringify({ rest, classTemplates })).map((literal) => `hard-codes ${literal}`),
  ];
}

describe("the Hetzner ClusterClass", () => {
  it("is a v1beta2 ClusterClass in its own namespace", () => {
    expect(clusterClass).toMatchObject({
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "ClusterClass",
      metadata: { name: clusterClassName, namespace: clusterClassNamespace },
    });
  });

  it("references its templates with v1beta2 templateRefs (apiVersion, kind, name; no namespace, no v1beta1 ref)", () => {
    const refs = [
      spec.infrastructure.templateRef,
      spec.controlPlane.templateRef,
      spec.controlPlane.machineInfrastructure.templateRef,
      spec.controlPlane.healthCheck.remediation.templateRef,
    ];
    for (const ref of refs) {
      expect(Object.keys(ref).sort()).toEqual(["apiVersion", "kind", "name"]);
    }
    const byName = new Map(Object.values(templates).map((manifest: Manifest) => [manifest.metadata.name, manifest]));
    for (const ref of refs) {
      expect(byName.get(ref.name)?.kind).toBe(ref.kind);
    }
    expect(JSON.stringify(clusterClass)).not.toMatch(/"ref"|"generateExtension"|"validateExtension"/);
  });

  it("uses the template API versions the providers serve", () => {
    expect(Object.fromEntries(Object.values(templates).map((t: Manifest) => [t.kind, t.apiVersion]))).toEqual({
      HetznerClusterTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
      HCloudMachineTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
      KubeadmControlPlaneTemplate: "controlplane.cluster.x-k8s.io/v1beta2",
      KubeadmConfigTemplate: "bootstrap.cluster.x-k8s.io/v1beta2",
      HCloudRemediationTemplate: `infrastructure.cluster.x-k8s.io/${catalog.caph.contract}`,
    });
  });

  it("lists the catalog's tenant versions as kubernetesVersions, which CAPI's webhook rules accept", () => {
    expect(spec.kubernetesVersions).toEqual(catalog.tenantKubernetesVersions);
    expect(validateKubernetesVersionsList(spec.kubernetesVersions)).toBeUndefined();
  });

  it("calls CAREN's suffixed, generation-numbered patch handlers, each with CAREN's Docker clusterConfig discovery", () => {
    const external = spec.patches.filter((patch) => "external" in patch).map((patch) => patch.external);
    const discovery = "dockerclusterconfigvars-dv.cluster-api-runtime-extensions-nutanix";
    expect(external).toEqual([
      { generatePatchesExtension: `genericclusterv${caren.patchGeneration}configpatch-gp.cluster-api-runtime-extensions-nutanix`, discoverVariablesExtension: discovery },
      { generatePatchesExtension: `genericworkerv${caren.patchGeneration}configpatch-gp.cluster-api-runtime-extensions-nutanix`, discoverVariablesExtension: discovery },
    ]);
    expect(spec.patches.at(-1)).toMatchObject({ name: "caren-workers" });
  });

  it("does not declare clusterConfig itself: CAPI refuses an inline schema next to a discovered one", () => {
    expect(spec.variables.map((variable) => variable.name)).not.toContain(classVariables.clusterConfig);
  });

  it("declares every variable a patch reads", () => {
    const declared = new Set(spec.variables.map((variable) => variable.name));
    const text = JSON.stringify(spec.patches);
    const fromVariables = [...text.matchAll(/"variable":"([^"]+)"/g)].map((match) => match[1]!);
    const fromTemplates = [...text.matchAll(/\{\{[^}]*?\.([A-Za-z]+)[ }]/g)].map((match) => match[1]!).filter((name) => name !== "version");
    expect(fromVariables.length).toBeGreaterThan(8);
    expect([...fromVariables, ...fromTemplates].filter((name) => !declared.has(name))).toEqual([]);
  });

  it("has one worker class, with health checks and remediation", () => {
    expect(spec.workers.machineDeployments).toHaveLength(1);
    expect(spec.workers.machineDeployments[0]).toMatchObject({
      class: workerClassName,
      healthCheck: { checks: { nodeStartupTimeoutSeconds: expect.any(Number) }, remediation: { templateRef: { kind: "HCloudRemediationTemplate" } } },
    });
  });
});

describe("the kubelet install", () => {
  it("takes each node's version from the builtin variables, never from a literal", () => {
    expect(installVersionProblems(clusterClass, templates)).toEqual([]);
  });

  it("negative control: the program's class with the mistakes CAPH's shipped class makes fails that check", () => {
    // The class as built, with the control plane's install pinned to a version (CAPH's class
    // hard-codes one) and the workers' reading the Cluster's target version.
    const pinned = catalog.tenantKubernetesVersions[1];
    const broken = JSON.parse(
      JSON.stringify(clusterClass)
        .replaceAll("{{ .builtin.controlPlane.version }}", pinned)
        .replaceAll("{{ .builtin.machineDeployment.version }}", "{{ .builtin.cluster.topology.version }}"),
    ) as Manifest;
    expect(installVersionProblems(broken, templates)).toEqual([
      "does not read {{ .builtin.controlPlane.version }}",
      "does not read {{ .builtin.machineDeployment.version }}",
      "reads the Cluster's target version",
      `hard-codes ${pinned}`,
      `hard-codes ${pinned.slice(1)}`,
    ]);
  });

  it("prepends its commands to a seeded preKubeadmCommands list, never setting the whole list (CAREN's appended commands stay)", () => {
    const text = JSON.stringify(templates);
    expect(text).not.toMatch(/"(files|preKubeadmCommands|postKubeadmCommands|mounts)":\[\]/);
    const seeded = [
      (templates.controlPlane.spec as { template: { spec: { kubeadmConfigSpec: { preKubeadmCommands: string[] } } } }).template.spec.kubeadmConfigSpec.preKubeadmCommands,
      (templates.workerBootstrap.spec as { template: { spec: { preKubeadmCommands: string[] } } }).template.spec.preKubeadmCommands,
    ];
    expect(seeded).toEqual([[preKubeadmCommandsSeed], [preKubeadmCommandsSeed]]);
    const install = spec.patches.find((patch) => patch.name === "kubernetes-install") as { definitions: { jsonPatches: { op: string; path: string }[] }[] };
    const paths = install.definitions.flatMap((definition) => definition.jsonPatches.map((jsonPatch) => `${jsonPatch.op} ${jsonPatch.path}`));
    // CAPI's webhook takes "0" (prepend) or "-" (append) only: every command is prepended.
    expect(paths).toEqual([
      "add /spec/template/spec/kubeadmConfigSpec/preKubeadmCommands/0",
      "add /spec/template/spec/kubeadmConfigSpec/preKubeadmCommands/0",
      "add /spec/template/spec/preKubeadmCommands/0",
    ]);
  });

  it("is a shell script that parses and refuses anything but vMAJOR.MINOR.PATCH before touching the node", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "install-kubernetes-"));
    const script = path.join(dir, "install-kubernetes.sh");
    writeFileSync(script, installKubernetesScript);
    execFileSync("bash", ["-n", script]);
    const refused = spawnSync("bash", [script, "latest"], { encoding: "utf8" });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("is not a Kubernetes version");
  });
});

describe("template names", () => {
  it("are stable for the same content, unique, and end in a content hash (CAPI refuses in-place template changes)", () => {
    expect(hetznerClusterClassTemplates()).toEqual(templates);
    const names = Object.values(templates).map((t: Manifest) => t.metadata.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(new RegExp(`^${clusterClassName}-[a-z-]+-[0-9a-f]{10}$`));
    }
  });
});
