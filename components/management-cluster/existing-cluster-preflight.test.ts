import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { configKeys } from "../../infra/model/config/stack-config";
import { catalog } from "../../infra/model/versions/catalog";
import { runRegisteredCommand } from "../../tests/support/engine-pwd";
import { byType, one, runStack, useExistingCluster, waitsFor } from "../../tests/support/fleet-run";
import { adminKubeconfig, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../../tests/support/kube-apiserver";
import type { Registration } from "../../tests/support/pulumi-mocks";
import { goModule } from "../../tests/support/upstream";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

// An existing cluster that already runs cert-manager: Helm would refuse the fleet's cert-manager
// release over CRDs another owner holds, after other platform resources were created. The
// program's preflight command, run as the program registers it (command line, `dir`,
// environment) against a real kube-apiserver holding cert-manager's own CRD
// (github.com/cert-manager/cert-manager@v1.21.2: deploy/crds), stops `up` first; and
// `management.certManager: existing` uses the cluster's cert-manager instead.

const commandType = "command:local:Command";
const releaseType = "kubernetes:helm.sh/v3:Release";
const crdName = "certificates.cert-manager.io";
const existingVersion = catalog.tenantKubernetesVersions[1];

let api: KubeApiServer | undefined;
afterAll(async () => {
  await api?.stop();
});

/** The program in existing mode, `certManager` set when given. */
async function existingStack(certManager?: string): Promise<Registration[]> {
  const { registrations } = await runStack("dev", (values, secretKeys) => {
    useExistingCluster(existingVersion)(values, secretKeys);
    if (certManager) {
      const management = JSON.parse(values[configKeys.management]!) as Record<string, unknown>;
      values[configKeys.management] = JSON.stringify({ ...management, certManager });
    }
  });
  return registrations;
}

/** A kube-apiserver (started once) and cert-manager's Certificate CRD from its module, as released. */
async function cluster(): Promise<KubeApiServer> {
  api ??= await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "existing-cluster-preflight");
  return api;
}

function certManagerCrd(): Record<string, unknown> {
  const module = goModule("github.com/cert-manager/cert-manager", catalog.certManager.chart.version);
  if ("unavailable" in module) throw new Error(module.unavailable);
  return parse(readFileSync(path.join(module.dir, "deploy", "crds", "cert-manager.io_certificates.yaml"), "utf8")) as Record<string, unknown>;
}

async function removeCrd(server: KubeApiServer): Promise<void> {
  await server.request("DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
  for (let attempt = 0; (await server.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`)).status !== 404; attempt += 1) {
    if (attempt > 100) throw new Error(`${crdName} is not deleted`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Puts cert-manager's CRD on the cluster, annotated as Helm annotates what a release owns (or, without `owner`, as kubectl leaves it). */
async function installCrd(server: KubeApiServer, owner?: { release: string; namespace: string }): Promise<void> {
  await removeCrd(server);
  const crd = certManagerCrd();
  const metadata = crd.metadata as { annotations?: Record<string, string>; labels?: Record<string, string> };
  metadata.labels = { ...metadata.labels, "app.kubernetes.io/version": catalog.certManager.chart.version, ...(owner ? { "app.kubernetes.io/managed-by": "Helm" } : {}) };
  if (owner) metadata.annotations = { ...metadata.annotations, "meta.helm.sh/release-name": owner.release, "meta.helm.sh/release-namespace": owner.namespace };
  const created = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  if (created.status !== 201) throw new Error(`creating ${crdName}: HTTP ${created.status}`);
}

/** Runs the registered preflight, its kubeconfig pointed at `server`. */
function runPreflight(command: Registration, server: KubeApiServer) {
  return runRegisteredCommand(command, "create", { ...(command.inputs.environment as Record<string, string>), MANAGEMENT_KUBECONFIG: adminKubeconfig(server) });
}

describe("an existing cluster that may already run cert-manager", () => {
  it("declares the preflight before the cluster's provider, so nothing in the cluster is created before it passes", async () => {
    const registrations = await existingStack();
    const preflight = one(registrations, commandType, "management-preflight");
    expect(preflight.inputs.create).toBe(`node ${scriptEntryPoints.existingClusterPreflight}`);
    expect(preflight.secretInputs).toContain("environment");
    const provider = one(registrations, "pulumi:providers:kubernetes");
    expect(provider.dependencies).toContain(preflight.urn);
    const inCluster = registrations.filter((r) => r.type.startsWith("kubernetes:"));
    expect(inCluster.length).toBeGreaterThan(10);
    for (const resource of inCluster) expect(resource.provider.startsWith(`${provider.urn}::`), resource.name).toBe(true);
    expect(one(registrations, releaseType, "cluster-api-cert-manager").inputs.name).toBe("cert-manager");
  });

  it("with certManager: existing, installs no cert-manager and starts the operator's release without waiting for one", async () => {
    const registrations = await existingStack("existing");
    expect(byType(registrations, releaseType).map((r) => r.inputs.name)).not.toContain("cert-manager");
    const operator = one(registrations, releaseType, "cluster-api-operator");
    expect(waitsFor(registrations, operator, one(registrations, "pulumi:providers:kubernetes"))).toBe(true);
    expect((one(registrations, commandType, "management-preflight").inputs.environment as Record<string, string>).CERT_MANAGER).toBe("existing");
  });

  it("the preflight, run against a real API server: passes on an empty cluster and over the fleet's own cert-manager, stops over another's", async () => {
    const server = await cluster();
    const preflight = one(await existingStack(), commandType, "management-preflight");
    await removeCrd(server);
    const empty = await runPreflight(preflight, server);
    expect(empty.code, empty.stderr).toBe(0);

    const environment = preflight.inputs.environment as Record<string, string>;
    await installCrd(server, { release: environment.CERT_MANAGER_RELEASE!, namespace: environment.CERT_MANAGER_NAMESPACE! });
    const ours = await runPreflight(preflight, server);
    expect(ours.code, ours.stderr).toBe(0);

    await installCrd(server, { release: "cert-manager", namespace: "platform-tools" });
    const others = await runPreflight(preflight, server);
    expect(others.code).toBe(1);
    expect(others.stderr).toContain(`the cluster already runs cert-manager ${catalog.certManager.chart.version}, installed by Helm release platform-tools/cert-manager`);
    expect(others.stderr).toContain("Nothing was changed. Set management.certManager: existing");

    await installCrd(server);
    const unmanaged = await runPreflight(preflight, server);
    expect(unmanaged.code).toBe(1);
    expect(unmanaged.stderr).toContain("installed by something other than Helm");
  }, 45 * 60_000);

  it("the preflight with certManager: existing, against a real API server: passes over the cluster's cert-manager, stops without one", async () => {
    const server = await cluster();
    const preflight = one(await existingStack("existing"), commandType, "management-preflight");
    await installCrd(server, { release: "cert-manager", namespace: "platform-tools" });
    const present = await runPreflight(preflight, server);
    expect(present.code, present.stderr).toBe(0);
    expect(present.stderr).toContain(`using the cluster's cert-manager ${catalog.certManager.chart.version}`);
    await removeCrd(server);
    const absent = await runPreflight(preflight, server);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain("management.certManager is existing, but the cluster runs no cert-manager (no CustomResourceDefinition certificates.cert-manager.io)");
  }, 45 * 60_000);
});
