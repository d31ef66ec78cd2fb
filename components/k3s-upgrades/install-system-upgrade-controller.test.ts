import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { systemUpgrade } from "../../infra/model/management/k3s-upgrades";
import { byType, runStack } from "../../tests/support/fleet-run";
import { adminKubeconfig, runToolchain, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../../tests/support/kube-apiserver";
import { runNodeScript } from "../../tests/support/script-harness";
import { repoRoot } from "../../tests/support/stack-files";
import { crdSources, readSource } from "../../tests/support/upstream-crds";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/**
 * The system-upgrade-controller installer (components/k3s-upgrades/install-system-upgrade-controller.mjs)
 * against a real kube-apiserver: it downloads a release manifest through a redirect, applies
 * every object with server-side apply, and waits for a CRD to be Established.
 *
 * Stand-ins: the manifest is served by a local HTTP server (GitHub is out of reach, and no
 * upstream manifest is kept in the repository), with the same kinds as SUC's release asset
 * (Namespace, ServiceAccount, ConfigMap, ClusterRole, ClusterRoleBinding, Deployment). No
 * controller runs here, so nothing registers the Plan CRD: the manifest carries a CRD of a
 * made-up group in its place, and the script is told to wait for that one.
 *
 * The last test uses upstream instead: SUC's release manifest rebuilt the way its release job
 * builds it (rancher/system-upgrade-controller@v0.20.1: scripts/package-controller, `kustomize
 * build` of the module's kustomization with the image set to the tag; here `kubectl kustomize`
 * of the Go module at the catalog's version), applied for real; the Plan CRD the controller
 * would register (the module's pkg/crds/yaml/generated, which pkg/crds/crds.go embeds) created
 * by the test while the installer waits; then the program's own Plan applied for real.
 */

const script = path.join(repoRoot, scriptEntryPoints.installSystemUpgradeController);
const namespace = "suc-installer-test";
const standInCrd = "widgets.installer.example.test";

let api: KubeApiServer | undefined;
let web: Server | undefined;
let baseUrl = "";
/** What the local server answers at /assets/<name>. */
const assets = new Map<string, string>();

function manifest(controllerEnv: Record<string, string>): string {
  const documents = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "system-upgrade", namespace } },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "default-controller-env", namespace }, data: controllerEnv },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "suc-installer-test" },
      rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "suc-installer-test" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "suc-installer-test" },
      subjects: [{ kind: "ServiceAccount", name: "system-upgrade", namespace }],
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "system-upgrade-controller", namespace },
      spec: {
        selector: { matchLabels: { app: "suc" } },
        template: { metadata: { labels: { app: "suc" } }, spec: { serviceAccountName: "system-upgrade", containers: [{ name: "controller", image: "example.invalid/suc:test" }] } },
      },
    },
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: standInCrd },
      spec: {
        group: "installer.example.test",
        names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
        scope: "Namespaced",
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
      },
    },
  ];
  return documents.map((document) => `---\n${stringify(document)}`).join("");
}

function install(manifestPath: string, extra: Record<string, string> = {}) {
  if (!api) throw new Error("no API server");
  return runNodeScript(
    script,
    { MANAGEMENT_KUBECONFIG: adminKubeconfig(api), MANIFEST_URL: `${baseUrl}${manifestPath}`, WAIT_FOR_CRD: standInCrd, WAIT_SECONDS: "60", POLL_MILLISECONDS: "200", ...extra },
    90_000,
  );
}

beforeAll(async () => {
  api = await startKubeApiServer(await kubeApiServerBinaries(40 * 60_000), 90_000, "suc-installer");
  web = createServer((request, response) => {
    const url = request.url ?? "";
    // GitHub answers a release download with a redirect to its asset storage.
    const release = /^\/releases\/download\/([^/]+)\/system-upgrade-controller\.yaml$/.exec(url);
    if (release) {
      response.writeHead(302, { Location: `/assets/${release[1]}` }).end();
      return;
    }
    const asset = assets.get(url.replace(/^\/assets\//, ""));
    if (asset === undefined) response.writeHead(404).end("not found");
    else response.writeHead(200, { "Content-Type": "application/octet-stream" }).end(asset);
  });
  await new Promise<void>((resolve) => web!.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
}, 45 * 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => {
    if (web) web.close(() => {
      resolve();
    });
    else resolve();
  });
  await api?.stop();
});

describe("install-system-upgrade-controller.mjs against a real kube-apiserver", () => {
  it("applies every object of the release manifest with server-side apply, then waits for the CRD", async () => {
    assets.set("v1", manifest({ SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS: "900" }));
    const run = await install("/releases/download/v1/system-upgrade-controller.yaml");
    expect(run.code, run.output).toBe(0);
    expect(run.stderr).toContain("7 objects in");
    expect(run.stderr).toContain(`CRD ${standInCrd} is Established`);
    const deployment = await api!.request("GET", `/apis/apps/v1/namespaces/${namespace}/deployments/system-upgrade-controller`);
    expect(deployment.status).toBe(200);
    const managers = (deployment.json.metadata as { managedFields: { manager: string; operation: string }[] }).managedFields;
    expect(managers).toEqual([expect.objectContaining({ manager: "capi-fleet", operation: "Apply" })]);
    expect((await api!.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/suc-installer-test")).status).toBe(200);
  }, 120_000);

  it("converges on a newer release: its values win over the old ones and over a hand edit", async () => {
    const configMap = `/api/v1/namespaces/${namespace}/configmaps/default-controller-env`;
    const edited = await api!.request("PATCH", `${configMap}?fieldManager=kubectl-edit`, { data: { SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS: "1" } }, "application/merge-patch+json");
    expect(edited.status).toBe(200);
    assets.set("v2", manifest({ SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS: "1800" }));
    const run = await install("/releases/download/v2/system-upgrade-controller.yaml");
    expect(run.code, run.output).toBe(0);
    const data = (await api!.request("GET", configMap)).json.data as Record<string, string>;
    expect(data.SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS).toBe("1800");
  }, 120_000);

  it("fails naming the download when the release asset is missing", async () => {
    const run = await install("/releases/download/v404/system-upgrade-controller.yaml");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/FAILED downloading .*v404.*: GET .*\/assets\/v404: HTTP 404/);
  }, 60_000);

  it("fails at once, bounded, when the manifest's host cannot be reached", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => {
          resolve(port);
        });
      });
    });
    const run = await install("", { MANIFEST_URL: `http://127.0.0.1:${closed}/system-upgrade-controller.yaml` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("FAILED downloading");
    expect(run.stderr).toContain("no answer: ");
    expect(run.elapsedMs).toBeLessThan(10_000);
  }, 60_000);

  it("fails naming a kind the cluster does not serve", async () => {
    assets.set("unserved", stringify({ apiVersion: "upgrade.cattle.io/v1", kind: "Plan", metadata: { name: "k3s-server", namespace } }));
    const run = await install("/assets/unserved");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("upgrade.cattle.io/v1 Plan is not served by the management cluster");
  }, 60_000);

  it("gives up, bounded, when the CRD never appears, and says where to look", async () => {
    assets.set("no-controller", manifest({}));
    const run = await install("/releases/download/no-controller/system-upgrade-controller.yaml", { WAIT_FOR_CRD: "plans.never.example.test", WAIT_SECONDS: "3" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("FAILED waiting for CRD plans.never.example.test: CRD plans.never.example.test is not registered yet");
    expect(run.stderr).toContain("kubectl -n system-upgrade logs deploy/system-upgrade-controller");
    expect(run.elapsedMs).toBeLessThan(15_000);
  }, 60_000);

  it("installs SUC's release manifest at the pinned tag, waits for the controller's Plan CRD, and the program's Plan is then accepted", async () => {
    // The proxy serves SUC's module at the pinned tag; kubectl comes from the same toolchain as kube-apiserver.
    const module = readSource(crdSources.find((candidate) => candidate.module === "github.com/rancher/system-upgrade-controller")!);
    if (!("crds" in module)) throw new Error(module.unavailable);
    const kubectl = /^KUBECTL=(.+)$/m.exec(await runToolchain(["paths"], 60_000))?.[1];
    if (!kubectl) throw new Error("tools/kube-apiserver-toolchain paths printed no KUBECTL");
    // kustomize refuses an absolute base: the overlay names the module relative to itself.
    const overlay = mkdtempSync(path.join(tmpdir(), "suc-release-"));
    try {
      writeFileSync(
        path.join(overlay, "kustomization.yaml"),
        stringify({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          resources: [path.relative(overlay, module.dir)],
          images: [{ name: "rancher/system-upgrade-controller", newTag: catalog.systemUpgradeController.version }],
        }),
      );
      assets.set("upstream", execFileSync(kubectl, ["kustomize", overlay], { encoding: "utf8" }));
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
    const running = install("/releases/download/upstream/system-upgrade-controller.yaml", { WAIT_FOR_CRD: systemUpgrade.planCrd, WAIT_SECONDS: "60" });
    // The controller's part: once its Deployment exists, register the Plan CRD from the module.
    const deployment = `/apis/apps/v1/namespaces/${systemUpgrade.namespace}/deployments/system-upgrade-controller`;
    for (let tries = 0; (await api!.request("GET", deployment)).status !== 200; tries += 1) {
      if (tries > 200) throw new Error("the installer never applied the Deployment");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const image = ((await api!.request("GET", deployment)).json.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image;
    expect(image).toBe(`rancher/system-upgrade-controller:${catalog.systemUpgradeController.version}`);
    for (const crd of module.crds) expect((await api!.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201);
    const run = await running;
    expect(run.code, run.output).toBe(0);
    expect(run.stderr).toContain(`CRD ${systemUpgrade.planCrd} is Established`);
    expect((await api!.request("GET", `/api/v1/namespaces/${systemUpgrade.namespace}/serviceaccounts/${systemUpgrade.serviceAccount}`)).status).toBe(200);

    const { registrations } = await runStack("dev");
    const [plan] = byType(registrations, "kubernetes:upgrade.cattle.io/v1:Plan");
    const body = plan!.inputs as { metadata: { name: string; namespace: string } };
    const applied = await api!.request(
      "PATCH",
      `/apis/upgrade.cattle.io/v1/namespaces/${body.metadata.namespace}/plans/${body.metadata.name}?fieldManager=pulumi-kubernetes&fieldValidation=Strict`,
      body,
      "application/apply-patch+yaml",
    );
    expect(applied.status, JSON.stringify(applied.json).slice(0, 400)).toBe(201);
    expect(applied.warnings).toEqual([]);
    expect((applied.json.spec as { version: string }).version).toBe(catalog.k3s.version);
  }, 15 * 60_000);

  it("refuses to start without its environment (exit 2)", async () => {
    const run = await runNodeScript(script, { MANIFEST_URL: `${baseUrl}/x` });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("missing environment variables: MANAGEMENT_KUBECONFIG");
  });
});
