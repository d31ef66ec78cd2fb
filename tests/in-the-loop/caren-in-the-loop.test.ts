import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { catalog } from "../../infra/model/versions/catalog";
import { ciliumPreflightValuesKey, ciliumValuesConfigMapName, ciliumValuesKey } from "../../infra/model/tenant/caren-cluster-config";
import { conditionOf, createNamespacesOf, dependencyOrder, eventually, isPatch, objectOf, responseMessage, startCapiWithExtension, type CapiLoopWith, type KubeObject } from "../support/capi-in-the-loop";
import { carenBinary, readCarenChart, startRealCaren, type RealCaren } from "../support/caren-in-the-loop";
import { runStack } from "../support/fleet-run";
import { skipIfDeclared } from "../support/unverified";
import { carenPreflightSkipAnnotation } from "../../infra/model/facts/caren";

// The real CAREN in the loop: CAPI in the loop (tests/support/capi-in-the-loop.ts) with the CAREN manager
// built from the catalog's release tag in place of the recording stand-in, wired from CAREN's own
// chart (tests/support/caren-in-the-loop.ts): its arguments, admission webhooks and ConfigMaps. Every
// Kubernetes object the dev and prod stacks declare is applied in the program's order, and then
// what CAREN really does with them is checked: admission (its mutating, validating and preflight
// webhooks), GeneratePatches into the kubeadm objects, the Cilium HelmChartProxy at a faked
// control-plane initialization, and the Cilium upgrade preflight at an upgrade. Negative controls
// in the same run: a credential Secret where CAREN does not look, an unreachable registry without
// the tenant's skip, a values ConfigMap without `preflight-values.yaml` (an empty preflight
// release), and the two design candidates the fleet did not choose
// (docs/architecture.md, "Where CAREN reads the registry credentials").
//
// Stand-ins, as CAPI's envtest suites have them: no infrastructure or CAAPH controller and no
// workload cluster. A faked control plane (its `status.initialization.controlPlaneInitialized` and
// `status.version` written by the test, as CAPI's topology tests do) stands in for kubeadm; the
// HelmChartProxies CAREN creates are checked as objects, and stay unready.
//
// The binary: CAPI_FLEET_CAREN_BIN (a manager built from the release tag by hand), else the Go
// module proxy, which refuses CAREN here, so the check is in the skip ledger (tests/unverified.json).

const buildTimeoutMs = 75 * 60_000;
const reconcileTimeoutMs = 180_000;
const stacks = ["dev", "prod"] as const;

interface TopologyVariable {
  name: string;
  value: unknown;
}
interface Topology {
  version: string;
  classRef: { name: string; namespace?: string };
  variables: TopologyVariable[];
}
const topologyOf = (cluster: KubeObject) => (cluster.spec as { topology: Topology }).topology;
const clusterConfigOf = (cluster: KubeObject) => topologyOf(cluster).variables.find((v) => v.name === "clusterConfig")!.value as Record<string, unknown>;
const at = (object: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((node, key) => (node === undefined || node === null ? undefined : (node as Record<string, unknown>)[key]), object);
/** The tenant's nodes range: the cidrBlock of its hcloudNetwork variable. */
const nodesCidrOf = (cluster: KubeObject) => (topologyOf(cluster).variables.find((v) => v.name === "hcloudNetwork")!.value as { cidrBlock: string }).cidrBlock;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`CAREN ${catalog.caren.chart.version} in the loop`, () => {
  it("the real CAREN admits and reconciles every tenant of dev and prod, renders their settings, installs Cilium and runs its upgrade preflight, and refuses what it cannot find", async (context) => {
    const binary = carenBinary();
    if ("unavailable" in binary) return skipIfDeclared(context, binary.unavailable);
    const chart = readCarenChart();
    if ("unavailable" in chart) throw new Error(`CAREN's chart is unavailable, so CAREN cannot be wired as its chart does: ${chart.unavailable}`);

    const report: string[] = [];
    const started = Date.now();
    let loop: CapiLoopWith<RealCaren> | undefined;
    let failed = true;
    const L = () => loop!;
    try {
      loop = await startCapiWithExtension({ buildTimeoutMs, progress: (line) => report.push(`  ${seconds(Date.now() - started)}: ${line}`) }, startRealCaren(binary.path, chart));
      report.push(`CAREN ${binary.path}: ${L().extension.args.join(" ")}`);
      const caren = L().extension;
      const get = (object: KubeObject) => L().get(object.apiVersion, object.kind, object.metadata.name!, object.metadata.namespace);
      const reconciled = (cluster: KubeObject, status: "True" | "False", timeoutMs = reconcileTimeoutMs) =>
        eventually(`Cluster ${cluster.metadata.namespace!}/${cluster.metadata.name!} TopologyReconciled=${status}`, timeoutMs, async () => {
          const condition = conditionOf(await get(cluster), "TopologyReconciled");
          return condition?.status === status ? condition : undefined;
        }, async () => `${JSON.stringify(conditionOf(await get(cluster), "TopologyReconciled"))}\n${caren.logs()}`);

      // 1. The stacks' objects, in the program's order. A `…Patch` with pulumi.com/patchForce takes the field over, as Pulumi does.
      const objects: Record<(typeof stacks)[number], KubeObject[]> = { dev: [], prod: [] };
      for (const stack of stacks) {
        const { registrations } = await runStack(stack);
        const ordered = dependencyOrder(registrations);
        // Namespaces the program expects to exist (created by charts, the operator, …) before anything else.
        await createNamespacesOf(L(), ordered);
        for (const registration of ordered) {
          const object = objectOf(registration);
          const patch = isPatch(registration);
          const response = patch
            ? await L().apply(object, { manager: "pulumi-kubernetes-patch", force: object.metadata.annotations?.["pulumi.com/patchForce"] === "true" })
            : await L().apply(object);
          const label = `${stack}: ${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name!}`;
          if (response.status >= 300) throw new Error(`${label}: HTTP ${response.status}: ${responseMessage(response)}`);
          if (!patch) objects[stack].push(object);
        }
      }
      const clusters = stacks.flatMap((stack) => objects[stack].filter((o) => o.kind === "Cluster"));
      report.push(`applied ${objects.dev.length} dev + ${objects.prod.length} prod objects; Clusters admitted by CAREN's webhooks: ${clusters.map((c) => c.metadata.name).join(", ")}`);
      expect(clusters.length).toBe(4);
      const payments = clusters.find((c) => c.metadata.name === "payments")!;
      expect(payments).toBeDefined();

      // 2. Every tenant TopologyReconciled=True: CAREN's GeneratePatches answered for each.
      for (const cluster of clusters) {
        const t0 = Date.now();
        await reconciled(cluster, "True");
        report.push(`${cluster.metadata.name!}: TopologyReconciled=True after ${seconds(Date.now() - t0)}`);
      }
      // Only the opt-outs the stack config asks for: CAREN's skip annotations as the program declared them.
      const carenOptOuts = (cluster: KubeObject | undefined) =>
        Object.entries(cluster?.metadata.annotations ?? {}).filter(([key]) => key === carenPreflightSkipAnnotation || key.startsWith("caren.nutanix.com/skip"));
      for (const cluster of clusters) {
        const live = await get(cluster);
        expect(carenOptOuts(live), cluster.metadata.name).toEqual(carenOptOuts(cluster));
        report.push(`${cluster.metadata.name!}: CAREN opt-outs ${JSON.stringify(Object.fromEntries(carenOptOuts(live)))}; cluster UUID ${live?.metadata.annotations?.["caren.nutanix.com/cluster-uuid"] ?? "none"}`);
      }
      expect(clusters.filter((c) => carenOptOuts(c).length > 0).map((c) => c.metadata.name)).toEqual(["payments"]);

      // What CAREN's schema defaults added to what the program declared (docs/architecture.md says which).
      for (const cluster of clusters) {
        const held = JSON.stringify(clusterConfigOf((await get(cluster))!));
        report.push(`${cluster.metadata.name!}: clusterConfig as admitted ${held === JSON.stringify(clusterConfigOf(cluster)) ? "is byte-identical to the declared one" : `differs: ${held.slice(0, 300)}`}; ignorePreflightErrors ${held.includes("ignorePreflightErrors") ? "present" : "absent"}`);
      }

      // 3. payments' settings in what CAREN rendered: the KubeadmControlPlane and every worker's KubeadmConfigTemplate.
      const selector = (cluster: KubeObject) => `cluster.x-k8s.io/cluster-name=${cluster.metadata.name!}`;
      const [kcp] = await L().list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", payments.metadata.namespace, selector(payments));
      const mds = await L().list("cluster.x-k8s.io/v1beta2", "MachineDeployment", payments.metadata.namespace, selector(payments));
      const bootstraps = await Promise.all(
        mds.map((md) => L().get("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", at(md.spec, "template.spec.bootstrap.configRef.name") as string, payments.metadata.namespace)),
      );
      const config = clusterConfigOf(payments) as {
        ntp: { servers: string[] };
        proxy: { http: string; https: string; additionalNo: string[] };
        imageRegistries: { url: string }[];
        globalImageRegistryMirror: { url: string };
        users: { name: string; sshAuthorizedKeys: string[]; sudo: string }[];
      };
      const specs = [
        { what: "KubeadmControlPlane", spec: at(kcp?.spec, "kubeadmConfigSpec") as Record<string, unknown> },
        ...bootstraps.map((b) => ({ what: `KubeadmConfigTemplate ${b?.metadata.name ?? "?"}`, spec: at(b?.spec, "template.spec") as Record<string, unknown> })),
      ];
      expect(specs.length).toBe(1 + mds.length);
      for (const { what, spec } of specs) {
        const files = (spec.files as { path: string; content?: string }[] | undefined) ?? [];
        const fileText = JSON.stringify(files);
        expect(at(spec, "ntp.servers"), `${what}: NTP`).toEqual(config.ntp.servers);
        const users = (spec.users as { name: string; sshAuthorizedKeys?: string[]; sudo?: string }[] | undefined) ?? [];
        expect(users.find((u) => u.name === config.users[0]!.name), `${what}: users`).toMatchObject({ sshAuthorizedKeys: config.users[0]!.sshAuthorizedKeys, sudo: config.users[0]!.sudo });
        const proxyFiles = files.filter((f) => f.path.endsWith("/http-proxy.conf"));
        expect(proxyFiles.map((f) => f.path).sort(), `${what}: proxy drop-ins`).toEqual(["/etc/systemd/system/containerd.service.d/http-proxy.conf", "/etc/systemd/system/kubelet.service.d/http-proxy.conf"]);
        for (const file of proxyFiles) {
          expect(file.content, `${what}: ${file.path}`).toContain(`HTTPS_PROXY=${config.proxy.https}`);
          for (const entry of config.proxy.additionalNo) expect(file.content, `${what}: ${file.path} NO_PROXY`).toContain(entry);
        }
        for (const url of [...config.imageRegistries.map((r) => r.url), config.globalImageRegistryMirror.url]) expect(fileText, `${what}: ${url}`).toContain(new URL(url).host);
        // The nodes' range, which the program adds to CAREN's list; and the credential provider each node pulls at boot (docs/tenants.md, "What every tenant node must reach").
        for (const file of proxyFiles) expect(file.content, `${what}: ${file.path} NO_PROXY`).toContain(nodesCidrOf(payments));
        expect(fileText, `${what}: dynamic credential provider`).toContain("ghcr.io/mesosphere/dynamic-credential-provider");
        if (what === "KubeadmControlPlane") {
          report.push(`payments ${what}: ${files.length} files (${files.map((f) => f.path).join(", ")}); NO_PROXY: ${/NO_PROXY=([^"\n]*)/.exec(proxyFiles[0]?.content ?? "")?.[1] ?? "?"}`);
          expect(at(spec, "initConfiguration.skipPhases")).toEqual(["addon/kube-proxy"]);
        }
      }

      // 4. Negative control, credentials: a Secret only in the tenant's namespace (where the program wrote
      //    it before) fails GeneratePatches, naming the Secret CAREN looked for in the class's namespace;
      //    the same Secret also in the class's namespace (the design) reconciles.
      const probeSecret = "registry-credentials-probe";
      const secretObject = (namespace: string): KubeObject => ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: probeSecret, namespace },
        stringData: { username: "probe", password: "probe" },
      });
      expect((await L().apply(secretObject(payments.metadata.namespace!))).status).toBeLessThan(300);
      const probe = (name: string, mutate: (cluster: KubeObject) => void = () => {}) => {
        const copy = structuredClone(payments);
        copy.metadata = { name, namespace: payments.metadata.namespace, labels: { "capi-fleet.io/tenant": name }, annotations: { ...payments.metadata.annotations } };
        const cc = clusterConfigOf(copy) as { imageRegistries: { credentials?: { secretRef: { name: string } } }[]; globalImageRegistryMirror: { credentials?: { secretRef: { name: string } } } };
        for (const registry of [...cc.imageRegistries, cc.globalImageRegistryMirror]) if (registry.credentials) registry.credentials.secretRef.name = probeSecret;
        mutate(copy);
        return copy;
      };
      const tenantOnly = probe("payments-probe");
      const created = await L().apply(tenantOnly);
      expect(created.status, responseMessage(created)).toBeLessThan(300);
      const failure = await reconciled(tenantOnly, "False");
      const lookedFor = `capi-fleet-system/${probeSecret}`;
      await eventually(`CAREN's log names ${lookedFor}`, 60_000, () => Promise.resolve(caren.logText().includes(lookedFor) ? true : undefined));
      const logLine = caren.logText().split("\n").find((line) => line.includes(lookedFor)) ?? "";
      report.push(`negative control, Secret only in ${payments.metadata.namespace!}: TopologyReconciled=False: ${failure.message ?? failure.reason ?? ""}`, `  CAREN log: ${logLine.slice(0, 400)}`);
      expect(failure.message ?? "").toMatch(/failed to generate patches|GeneratePatches|patch/i);
      expect(logLine).toMatch(/error getting secret/);
      // Positive control: the same Secret also where CAREN reads it.
      expect((await L().apply(secretObject("capi-fleet-system"))).status).toBeLessThan(300);
      await reconciled(tenantOnly, "True");
      report.push(`  with the Secret also in capi-fleet-system: TopologyReconciled=True`);
      const owned = await L().get("v1", "Secret", probeSecret, payments.metadata.namespace);
      const classCopy = await L().get("v1", "Secret", probeSecret, "capi-fleet-system");
      report.push(`  owners: ${payments.metadata.namespace!}/${probeSecret} ${JSON.stringify(owned?.metadata.ownerReferences ?? [])}; capi-fleet-system/${probeSecret} ${JSON.stringify(classCopy?.metadata.ownerReferences ?? [])}`);
      expect(((classCopy?.metadata.ownerReferences as unknown[] | undefined) ?? []).length).toBe(0);

      // 5. Candidate: a class per tenant namespace. The fleet's class and its templates in the tenant's
      //    namespace; a Cluster of it reads the Secret from its own namespace only.
      const classObjects = objects.dev.filter((o) => o.metadata.namespace === "capi-fleet-system" && (o.kind === "ClusterClass" || o.kind.endsWith("Template")));
      const copyInto = async (namespace: string) => {
        for (const object of classObjects) {
          const copy = structuredClone(object);
          copy.metadata = { name: object.metadata.name, namespace, ...(object.metadata.labels ? { labels: object.metadata.labels } : {}) };
          const response = await L().apply(copy);
          if (response.status >= 300) throw new Error(`${object.kind} ${namespace}/${object.metadata.name!}: HTTP ${response.status}: ${responseMessage(response)}`);
        }
      };
      await copyInto(payments.metadata.namespace!);
      const clusterClass = classObjects.find((o) => o.kind === "ClusterClass")!;
      await eventually("the tenant namespace's class VariablesReady", reconcileTimeoutMs, async () =>
        conditionOf(await L().get(clusterClass.apiVersion, "ClusterClass", clusterClass.metadata.name!, payments.metadata.namespace), "VariablesReady")?.status === "True" ? true : undefined,
      );
      await L().api.request("DELETE", `/api/v1/namespaces/capi-fleet-system/secrets/${probeSecret}`);
      const ownClass = probe("payments-own-class", (copy) => (topologyOf(copy).classRef = { name: clusterClass.metadata.name!, namespace: payments.metadata.namespace! }));
      const ownCreated = await L().apply(ownClass);
      expect(ownCreated.status, responseMessage(ownCreated)).toBeLessThan(300);
      await reconciled(ownClass, "True");
      report.push(`candidate, a class per tenant namespace: a Cluster of the class in ${payments.metadata.namespace!} reconciles with the Secret in that namespace only`);

      // 6. Candidate: CAREN's namespace sync. A class in its source namespace is copied into a labelled
      //    namespace, once: a later change of the source does not reach the copy.
      const sourceNamespace = caren.args.find((a) => a.startsWith("--namespacesync-source-namespace="))!.split("=")[1]!;
      const labelKey = caren.args.find((a) => a.startsWith("--namespacesync-target-namespace-label-selector="))!.split("=")[1]!;
      await copyInto(sourceNamespace);
      const synced = "caren-sync-probe";
      expect((await L().api.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: synced, labels: { [labelKey]: "" } } })).status).toBeLessThan(300);
      const copied = await eventually(`namespace sync copies the class into ${synced}`, reconcileTimeoutMs, () => L().get(clusterClass.apiVersion, "ClusterClass", clusterClass.metadata.name!, synced));
      const versionsOf = (object: KubeObject | undefined) => (object?.spec as { kubernetesVersions?: string[] } | undefined)?.kubernetesVersions ?? [];
      const source = (await L().get(clusterClass.apiVersion, "ClusterClass", clusterClass.metadata.name!, sourceNamespace))!;
      const fewer = versionsOf(source).slice(0, -1);
      const changed = await L().api.request("PATCH", await L().objectPath(source), { spec: { kubernetesVersions: fewer } }, "application/merge-patch+json");
      expect(changed.status, responseMessage(changed)).toBeLessThan(300);
      // Touch the namespace too, so the sync reconciles it again.
      await L().api.request("PATCH", `/api/v1/namespaces/${synced}`, { metadata: { annotations: { probe: "touched" } } }, "application/merge-patch+json");
      await sleep(15_000);
      const after = await L().get(clusterClass.apiVersion, "ClusterClass", clusterClass.metadata.name!, synced);
      report.push(
        `candidate, namespace sync (${sourceNamespace} → namespaces labelled ${labelKey}): copied ${clusterClass.metadata.name!} with kubernetesVersions ${versionsOf(copied).join(",")}; after the source dropped ${versionsOf(source).at(-1)!}, the copy lists ${versionsOf(after).join(",")}`,
      );
      expect(versionsOf(after)).toEqual(versionsOf(copied));
      expect(versionsOf(after)).not.toEqual(fewer);
      await L().api.request("DELETE", await L().objectPath(source));

      // 7. Negative control, preflight: payments without its skip is refused for its unreachable
      //    registries; with it, admitted. A missing credential Secret is refused by name.
      const dryRun = (cluster: KubeObject) => L().apply(cluster, { dryRun: true });
      const withoutSkip = structuredClone(payments);
      withoutSkip.metadata = { name: "payments-preflight", namespace: payments.metadata.namespace, labels: { "capi-fleet.io/tenant": "payments-preflight" } };
      const refused = await dryRun(withoutSkip);
      report.push(`negative control, preflight without carenPreflight.skip: HTTP ${refused.status}: ${responseMessage(refused).slice(0, 600)}`);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(responseMessage(refused)).toMatch(/Failed to ping registry "https:\/\/registry\.internal\.example"/);
      const skipped = structuredClone(withoutSkip);
      skipped.metadata.annotations = { [carenPreflightSkipAnnotation]: payments.metadata.annotations![carenPreflightSkipAnnotation]! };
      const admitted = await dryRun(skipped);
      expect(admitted.status, responseMessage(admitted)).toBeLessThan(300);
      const missing = probe("payments-missing", (copy) => {
        copy.metadata.annotations = {};
        const cc = clusterConfigOf(copy) as { imageRegistries: { credentials?: { secretRef: { name: string } } }[] };
        cc.imageRegistries[0]!.credentials!.secretRef.name = "registry-credentials-nowhere";
      });
      const missingRefused = await dryRun(missing);
      report.push(`  a credential Secret that does not exist yet: HTTP ${missingRefused.status}: ${responseMessage(missingRefused).slice(0, 400)}`);
      expect(responseMessage(missingRefused)).toMatch(/Registry credentials Secret "registry-credentials-nowhere" not found/);

      // 8. Faked control-plane initialization: CAREN's AfterControlPlaneInitialized creates the Cilium HelmChartProxy.
      const controlPlaneOf = async (cluster: KubeObject) => (await L().list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", cluster.metadata.namespace, selector(cluster)))[0]!;
      const initialize = async (cluster: KubeObject) => {
        const cp = await controlPlaneOf(cluster);
        const response = await L().api.request(
          "PATCH",
          `${await L().objectPath(cp)}/status`,
          { status: { initialization: { controlPlaneInitialized: true }, version: at(cp.spec, "version") } },
          "application/merge-patch+json",
        );
        expect(response.status, responseMessage(response)).toBeLessThan(300);
      };
      const uuidOf = async (cluster: KubeObject) => (await get(cluster))!.metadata.annotations!["caren.nutanix.com/cluster-uuid"]!;
      const proxies = (cluster: KubeObject) => L().list("addons.cluster.x-k8s.io/v1alpha1", "HelmChartProxy", cluster.metadata.namespace);
      for (const cluster of [payments, clusters.find((c) => c.metadata.name !== "payments" && !at(clusterConfigOf(c), "addons.cni.values"))!]) {
        await initialize(cluster);
        const uuid = await uuidOf(cluster);
        const cilium = await eventually(`HelmChartProxy cilium-${uuid} for ${cluster.metadata.name!}`, reconcileTimeoutMs, async () =>
          (await proxies(cluster)).find((p) => p.metadata.name === `cilium-${uuid}`),
          async () => `${JSON.stringify(conditionOf(await get(cluster), "ControlPlaneInitialized"))}\n${caren.logs()}`,
        );
        const spec = cilium.spec as { chartName: string; version: string; repoURL: string; valuesTemplate?: string; releaseName: string; clusterSelector: unknown };
        report.push(`${cluster.metadata.name!}: control plane initialized (faked) → HelmChartProxy ${cilium.metadata.name!}: ${spec.chartName} ${spec.version} from ${spec.repoURL}, release ${spec.releaseName}, ${spec.valuesTemplate?.length ?? 0} bytes of values`);
        expect([spec.chartName, spec.version, spec.repoURL]).toEqual([catalog.cilium.chart, catalog.cilium.version, catalog.cilium.repository]);
        if (cluster === payments) expect(parseYaml(spec.valuesTemplate ?? "")).toMatchObject({ kubeProxyReplacement: true, tunnelProtocol: "geneve" });
      }

      // 9. An upgrade of payments: CAREN's BeforeClusterUpgrade creates the Cilium preflight with preflight values.
      const listed = (clusterClass.spec as { kubernetesVersions: string[] }).kubernetesVersions;
      const from = topologyOf(payments).version;
      const minor = (v: string) => Number(v.split(".")[1]);
      const target = listed.filter((v) => minor(v) === minor(from) + 1).at(-1)!;
      expect(target).toBeDefined();
      const upgraded = structuredClone(payments);
      topologyOf(upgraded).version = target;
      const response = await L().apply(upgraded);
      expect(response.status, responseMessage(response)).toBeLessThan(300);
      const uuid = await uuidOf(payments);
      const preflight = await eventually(`HelmChartProxy cilium-preflight-${uuid}`, reconcileTimeoutMs, async () =>
        (await proxies(payments)).find((p) => p.metadata.name === `cilium-preflight-${uuid}`),
        () => Promise.resolve(caren.logs()),
      );
      const preflightSpec = preflight.spec as { releaseName: string; version: string; valuesTemplate?: string };
      const preflightValues = parseYaml(preflightSpec.valuesTemplate ?? "") as Record<string, unknown> | null;
      report.push(`payments ${from} → ${target}: HelmChartProxy ${preflight.metadata.name!} (release ${preflightSpec.releaseName}, Cilium ${preflightSpec.version}) values: ${JSON.stringify(preflightValues)}`);
      expect(preflightValues).toMatchObject({ agent: false, operator: { enabled: false }, preflight: { enabled: true } });
      const configMap = await L().get("v1", "ConfigMap", ciliumValuesConfigMapName, payments.metadata.namespace);
      const data = (configMap?.data as Record<string, string> | undefined) ?? {};
      expect(Object.keys(data)).toContain(ciliumPreflightValuesKey);

      // Negative control: the same upgrade with a values ConfigMap that has no preflight-values.yaml
      // (the program's earlier ConfigMap): CAREN's preflight release gets no values at all.
      const withoutPreflight = "cilium-values-without-preflight";
      const bareMap: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: withoutPreflight, namespace: payments.metadata.namespace }, data: { [ciliumValuesKey]: data[ciliumValuesKey]! } };
      expect((await L().apply(bareMap)).status).toBeLessThan(300);
      const bare = structuredClone(payments);
      bare.metadata = { name: "payments-no-preflight", namespace: payments.metadata.namespace, labels: { "capi-fleet.io/tenant": "payments-no-preflight" }, annotations: { ...payments.metadata.annotations } };
      (clusterConfigOf(bare) as { addons: { cni: { values: { sourceRef: { name: string } } } } }).addons.cni.values.sourceRef.name = withoutPreflight;
      const bareCreated = await L().apply(bare);
      expect(bareCreated.status, responseMessage(bareCreated)).toBeLessThan(300);
      await reconciled(bare, "True");
      await initialize(bare);
      const bareUpgrade = structuredClone(bare);
      topologyOf(bareUpgrade).version = target;
      const bareUpgraded = await L().apply(bareUpgrade);
      expect(bareUpgraded.status, responseMessage(bareUpgraded)).toBeLessThan(300);
      const bareUuid = await uuidOf(bare);
      const barePreflight = await eventually(`HelmChartProxy cilium-preflight-${bareUuid}`, reconcileTimeoutMs, async () =>
        (await proxies(bare)).find((p) => p.metadata.name === `cilium-preflight-${bareUuid}`),
        () => Promise.resolve(caren.logs()),
      );
      const bareValues = (barePreflight.spec as { valuesTemplate?: string }).valuesTemplate ?? "";
      report.push(`negative control, values ConfigMap without ${ciliumPreflightValuesKey}: HelmChartProxy ${barePreflight.metadata.name!} has ${bareValues.length} bytes of values`);
      expect(bareValues.trim()).toBe("");
      failed = false;
    } finally {
      if (failed && loop) report.push(loop.logs());
      const kept = await loop?.stop(failed);
      if (kept) report.push(`logs kept in ${kept}`);
      console.log(`CAREN in the loop:\n  ${report.join("\n  ")}`);
    }
  }, buildTimeoutMs + 30 * 60_000);
});
