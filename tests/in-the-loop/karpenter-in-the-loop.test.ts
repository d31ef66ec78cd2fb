import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { configKeys } from "../../infra/model/config/stack-config";
import {
  capacityAnnotations,
  karpenterCommandLine,
  karpenterManagementRbac,
  karpenterMemberLabel,
  poolMachineDeploymentSelector,
} from "../../infra/model/platform/karpenter";
import { catalog } from "../../infra/model/versions/catalog";
import { createNamespacesOf, dependencyOrder, eventually, isPatch, objectOf, responseMessage, startCapiInTheLoop, type CapiInTheLoop, type KubeObject } from "../support/capi-in-the-loop";
import { runStack } from "../support/fleet-run";
import { repoRoot } from "../support/stack-files";
import { adminKubeconfig, freePort, halt, kubeApiServerBinaries, startKubeApiServer, type KubeApiServer } from "../support/kube-apiserver";
import { startSimulatedCluster, type SimulatedCluster } from "../support/kwok-cluster";
import { downloadModule, upstreamDir } from "../support/upstream";
import { skipIfDeclared } from "../support/unverified";

// The real karpenter-provider-cluster-api (catalog.karpenterClusterApi) in the loop: CAPI's own
// managers reconcile the dev stack with its one pool handed to Karpenter (tests/support/capi-in-the-loop.ts),
// the workload cluster is a second kube-apiserver with kube-controller-manager, kube-scheduler and
// kwok (tests/support/kwok-cluster.ts), and the provider runs between them as the fleet runs it: the
// workload cluster as KUBECONFIG, the management cluster through a service account with the
// fleet's ClusterRole (karpenter.ts), and the NodePool and ClusterAPINodeClass the program builds.
// A pending pod that fits no node makes it scale the pool's MachineDeployment up, through CAPI;
// once the pod is gone, consolidation scales it down.
//
// Stand-ins: CAPH and the kubelet. No server is created: the test gives each new Machine's
// HCloudMachine a provider ID and `status.ready` (what CAPH writes once the server runs) and
// registers a Node of the server type's size with that provider ID in the workload cluster (what
// the kubelet and the hcloud CCM do), which kwok then keeps Ready.
//
// The binary: CAPI_FLEET_KARPENTER_BIN (the controller built from the release tag by hand) and
// CAPI_FLEET_KARPENTER_SOURCE (that tag's source, for the ClusterAPINodeClass CRD), else the Go
// module proxy, which refuses the module here, so the check is in the skip ledger.

const binaryEnv = "CAPI_FLEET_KARPENTER_BIN";
const sourceEnv = "CAPI_FLEET_KARPENTER_SOURCE";
const providerModule = "sigs.k8s.io/karpenter-provider-cluster-api";
const version = catalog.karpenterClusterApi.version;
const buildTimeoutMs = 75 * 60_000;
const stepTimeoutMs = 240_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function providerMaterial(env: NodeJS.ProcessEnv = process.env): { binary: string; crds: string } | { unavailable: string } {
  const binary = env[binaryEnv];
  if (binary) {
    const source = env[sourceEnv];
    if (!existsSync(binary)) throw new Error(`${binaryEnv}=${binary}: no such file`);
    if (!source || !existsSync(path.join(source, "pkg", "apis", "crds"))) {
      throw new Error(`${binaryEnv} is set, but ${sourceEnv} (the ${version} tag's source, for pkg/apis/crds) is ${source ?? "unset"} or has no pkg/apis/crds`);
    }
    return { binary, crds: path.join(source, "pkg", "apis", "crds") };
  }
  const answer = downloadModule(providerModule, version, env);
  if ("refused" in answer) return { unavailable: `${answer.refused}; ${binaryEnv} and ${sourceEnv} (the controller built from the ${version} tag, and that tag's source) run it` };
  throw new Error(`${providerModule}@${version} is served by the Go module proxy here (${answer.dir}), but this test does not build it: set ${binaryEnv} to a controller built from it (go build ./cmd/controller) and ${sourceEnv} to it, or teach the test to build it`);
}

/** The dev stack with its one pool handed to Karpenter (consolidation quick, for the test). */
const karpenterImage = "registry.example.com/karpenter-clusterapi-controller:test";
function devWithKarpenter(values: Record<string, string>): void {
  const tenants = JSON.parse(values[configKeys.tenants]!) as { workers: Record<string, unknown>[]; karpenter?: unknown }[];
  const [tenant] = tenants;
  const [pool] = tenant!.workers;
  delete pool!.replicas;
  pool!.autoscaling = { provider: "karpenter", cpuLimit: 8, consolidation: { policy: "WhenEmpty", after: "5s" } };
  tenant!.karpenter = { image: karpenterImage };
  values[configKeys.tenants] = JSON.stringify(tenants);
}

interface Sample {
  at: string;
  replicas: number | undefined;
  what: string;
}

describe(`karpenter-provider-cluster-api ${version} in the loop`, () => {
  it("scales the Karpenter pool's MachineDeployment up through CAPI for a pending pod that fits no node, and down once the pod is gone", async (context) => {
    const material = providerMaterial();
    if ("unavailable" in material) return skipIfDeclared(context, material.unavailable);
    const karpenterCrds = upstreamDir({ module: "sigs.k8s.io/karpenter", version: catalog.karpenterClusterApi.karpenterVersion, path: "pkg/apis/crds" });
    if ("unavailable" in karpenterCrds) throw new Error(`Karpenter's CRDs: ${karpenterCrds.unavailable}`);

    const report: string[] = [];
    const samples: Sample[] = [];
    const started = Date.now();
    const say = (line: string) => report.push(`  ${((Date.now() - started) / 1000).toFixed(1)} s: ${line}`);
    let loop: CapiInTheLoop | undefined;
    let workload: KubeApiServer | undefined;
    let simulated: SimulatedCluster | undefined;
    let provider: ChildProcess | undefined;
    const work = mkdtempSync(path.join(tmpdir(), "karpenter-loop-"));
    const providerLog = path.join(work, "karpenter.log");
    const providerLogText = () => (existsSync(providerLog) ? readFileSync(providerLog, "utf8") : "");
    const providerTail = () => Promise.resolve(providerLogText().split("\n").slice(-40).join("\n"));
    let failed = true;
    try {
      // 1. CAPI in the loop with the dev stack's objects, its pool a Karpenter pool.
      loop = await startCapiInTheLoop({ buildTimeoutMs, progress: say });
      const L = loop;
      const { registrations } = await runStack("dev", devWithKarpenter);
      const ordered = dependencyOrder(registrations);
      await createNamespacesOf(L, ordered);
      let cluster: KubeObject | undefined;
      for (const registration of ordered) {
        const object = objectOf(registration);
        const response = isPatch(registration) ? await L.apply(object, { manager: "pulumi-kubernetes-patch", force: false }) : await L.apply(object);
        if (response.status >= 300) throw new Error(`${object.kind} ${object.metadata.name!}: HTTP ${response.status}: ${responseMessage(response)}`);
        if (object.kind === "Cluster") cluster = object;
      }
      const tenantName = cluster!.metadata.name!;
      const namespace = cluster!.metadata.namespace!;
      const topologyPool = ((cluster!.spec as { topology: { workers: { machineDeployments: { name: string; metadata?: { annotations?: Record<string, string> } }[] } } }).topology.workers.machineDeployments)[0]!;
      const poolName = topologyPool.name;
      const selector = Object.entries(poolMachineDeploymentSelector(tenantName, poolName)).map(([key, value]) => `${key}=${value}`).join(",");
      const machineDeployment = () => eventually(`MachineDeployment of ${namespace}/${tenantName} ${poolName}`, stepTimeoutMs, async () => (await L.list("cluster.x-k8s.io/v1beta2", "MachineDeployment", namespace, selector))[0]);
      const replicasNow = async () => ((await machineDeployment()).spec as { replicas?: number }).replicas;
      const record = async (what: string) => {
        const sample = { at: new Date().toISOString(), replicas: await replicasNow(), what };
        samples.push(sample);
        say(`MachineDeployment replicas ${String(sample.replicas)} (${what})`);
        return sample.replicas;
      };

      // CAPI copied the topology's annotations (the server's size) onto the MachineDeployment and,
      // with no replicas in the topology and no autoscaler bounds, its webhook defaulted replicas to 1.
      const md = await machineDeployment();
      const mdName = md.metadata.name!;
      const promised = md.metadata.annotations ?? {};
      // The labels the MachineDeployment promises its nodes (instance type, architecture), as the kubelet and the hcloud CCM set them.
      const promisedLabels = Object.fromEntries((promised[capacityAnnotations.labels] ?? "").split(",").map((pair) => pair.split("=", 2) as [string, string]));
      expect(md.metadata.annotations?.[capacityAnnotations.cpu]).toBe(topologyPool.metadata!.annotations![capacityAnnotations.cpu]);
      expect(md.metadata.labels?.[karpenterMemberLabel]).toBeUndefined();
      expect(await record("as CAPI created it: its webhook's default for an unpinned pool without bounds")).toBe(1);

      // 2. The workload cluster: a second API server, its controllers and kwok; the kwok node is
      // tainted, so nothing the test schedules fits on it.
      const binaries = await kubeApiServerBinaries(buildTimeoutMs);
      workload = await startKubeApiServer(binaries, 90_000, "karpenter-workload");
      const W = workload;
      simulated = await startSimulatedCluster(W, buildTimeoutMs);
      const must = async (what: string, response: Promise<{ status: number; json: Record<string, unknown> }>) => {
        const answer = await response;
        if (answer.status >= 300) throw new Error(`${what}: HTTP ${answer.status}: ${JSON.stringify(answer.json).slice(0, 600)}`);
        return answer;
      };
      await must("taint the kwok node", W.request("PATCH", `/api/v1/nodes/${simulated.node}`, { spec: { taints: [{ key: "capi-fleet.io/test", value: "system", effect: "NoSchedule" }] } }, "application/merge-patch+json"));
      const applyTo = (server: KubeApiServer, object: KubeObject, collection: string) =>
        must(`${object.kind} ${object.metadata.name!}`, server.request("PATCH", `${collection}/${object.metadata.name!}?fieldManager=karpenter-loop&force=true&fieldValidation=Strict`, object, "application/apply-patch+yaml"));
      // First the NodePool and NodeClaim CRDs of the Karpenter module the provider's go.mod requires
      // (the negative control below), and the provider's own ClusterAPINodeClass CRD.
      const applyCrds = async (files: string[], via: string) => {
        for (const file of files) await applyTo(W, parseYaml(readFileSync(file, "utf8")) as KubeObject, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
        say(`CRDs in the workload cluster: ${files.map((file) => path.basename(file)).join(", ")} (${via})`);
      };
      const yamlIn = (dir: string, prefix: string) => readdirSync(dir).filter((file) => file.startsWith(prefix) && file.endsWith(".yaml")).map((file) => path.join(dir, file));
      await applyCrds(yamlIn(karpenterCrds.dir, "karpenter.sh_"), karpenterCrds.via);
      await applyCrds(yamlIn(material.crds, "karpenter.cluster.x-k8s.io_"), material.crds);
      await eventually("the workload cluster serves Karpenter's kinds", 60_000, async () => ((await W.request("GET", "/apis/karpenter.sh/v1/nodepools")).status === 200 ? true : undefined));
      await eventually("the workload cluster serves ClusterAPINodeClass", 60_000, async () => ((await W.request("GET", "/apis/karpenter.cluster.x-k8s.io/v1alpha1/clusterapinodeclasses")).status === 200 ? true : undefined));

      // The stand-in for kubeadm's control plane: initialized, at its version, so that CAPI's
      // MachineSet preflight check (ControlPlaneIsStable) lets the pool's Machines be created, and
      // the kubeconfig Secret KCP would write, naming the workload API server.
      const controlPlane = (await L.list("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", namespace, `cluster.x-k8s.io/cluster-name=${tenantName}`))[0]!;
      await must("KubeadmControlPlane status", L.api.request("PATCH", `${await L.objectPath(controlPlane)}/status`, { status: { initialization: { controlPlaneInitialized: true }, version: (controlPlane.spec as { version: string }).version } }, "application/merge-patch+json"));
      await must("the kubeconfig Secret", L.api.request("POST", `/api/v1/namespaces/${namespace}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        type: "cluster.x-k8s.io/secret",
        metadata: { name: `${tenantName}-kubeconfig`, namespace, labels: { "cluster.x-k8s.io/cluster-name": tenantName } },
        data: { value: Buffer.from(adminKubeconfig(W)).toString("base64") },
      }));

      // The stand-in for CAPH's HetznerCluster: provisioned, its endpoint the workload API server,
      // so that CAPI connects to the workload cluster (controllers/clustercache/cluster_cache.go waits for that).
      const infraRef = (cluster!.spec as { infrastructureRef?: { name: string } }).infrastructureRef ?? ((await L.get(cluster!.apiVersion, "Cluster", tenantName, namespace))!.spec as { infrastructureRef: { name: string } }).infrastructureRef;
      const hetznerCluster = (await L.get("infrastructure.cluster.x-k8s.io/v1beta1", "HetznerCluster", infraRef.name, namespace))!;
      const endpoint = new URL(W.url);
      await must("HetznerCluster endpoint", L.api.request("PATCH", await L.objectPath(hetznerCluster), { spec: { controlPlaneEndpoint: { host: endpoint.hostname, port: Number(endpoint.port) } } }, "application/merge-patch+json"));
      await must("HetznerCluster status", L.api.request("PATCH", `${await L.objectPath(hetznerCluster)}/status`, { status: { ready: true } }, "application/merge-patch+json"));

      // The program's ClusterResourceSet (applied above with the stack's objects): CAPI puts the
      // pool's NodeClass and NodePool into the workload cluster.
      const nodePool = await eventually("CAPI's ClusterResourceSet applies the NodePool in the workload cluster", stepTimeoutMs, async () => {
        const got = await W.request("GET", `/apis/karpenter.sh/v1/nodepools/${poolName}`);
        return got.status === 200 ? got.json : undefined;
      }, async () => JSON.stringify((await L.list("addons.cluster.x-k8s.io/v1beta2", "ClusterResourceSet", namespace))[0]?.status ?? {}));
      const nodeClass = await W.request("GET", `/apis/karpenter.cluster.x-k8s.io/v1alpha1/clusterapinodeclasses/${poolName}`);
      expect(nodeClass.status).toBe(200);
      say(`ClusterResourceSet applied NodeClass ${poolName} (selector ${JSON.stringify((nodeClass.json.spec as { scalableResourceSelector: unknown }).scalableResourceSelector)}) and NodePool ${poolName} (limits ${JSON.stringify((nodePool.spec as { limits: unknown }).limits)}, disruption ${JSON.stringify((nodePool.spec as { disruption: unknown }).disruption)})`);

      // 3. The hand-over (components/karpenter/hand-over.mjs, through its entry point as the
      // program runs it): the member label on the MachineDeployment alone (not through the
      // topology, which would put it on every Machine) and the pool at zero.
      const handOver = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "karpenter-hand-over.mjs")], {
        encoding: "utf8",
        timeout: 120_000,
        env: { ...process.env, MANAGEMENT_KUBECONFIG: adminKubeconfig(L.api), TENANT_NAMESPACE: namespace, TENANT_CLUSTER: tenantName, POOLS: poolName, POLL_MILLISECONDS: "500" },
      });
      say(`hand-over exited ${String(handOver.status)}: ${handOver.stderr.trim()}`);
      expect(handOver.status).toBe(0);
      expect((await machineDeployment()).metadata.labels?.[karpenterMemberLabel]).toBe("");
      // The Machine CAPI made for the default replica may appear only now (once the control plane
      // passed the preflight check); the pool is empty when no Machine is seen for three seconds.
      let emptyPolls = 0;
      await eventually("the pool's Machines gone", stepTimeoutMs, async () => {
        const machines = await L.list("cluster.x-k8s.io/v1beta2", "Machine", namespace, `cluster.x-k8s.io/deployment-name=${mdName}`);
        emptyPolls = machines.length === 0 ? emptyPolls + 1 : 0;
        if (emptyPolls >= 3) return true;
        await sleep(1000);
        return undefined;
      });
      expect(await record("handed to Karpenter: member label, scaled to zero")).toBe(0);

      // 4. The provider, with the fleet's service account and ClusterRole on the management cluster
      // (the program's, applied with the stack's objects).
      const rbac = karpenterManagementRbac({ namespace });
      expect(await L.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", rbac.clusterRoleBinding.metadata.name)).toBeDefined();
      const token = await must("TokenRequest", L.api.request("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${rbac.serviceAccount.metadata.name}/token`, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } }));
      const managementKubeconfig = path.join(work, "management.kubeconfig");
      writeFileSync(managementKubeconfig, adminKubeconfig({ ...L.api, target: { ...L.api.target, token: (token.json.status as { token: string }).token } }));
      const workloadKubeconfig = path.join(work, "workload.kubeconfig");
      writeFileSync(workloadKubeconfig, adminKubeconfig(W));
      const command = karpenterCommandLine(workloadKubeconfig, managementKubeconfig);
      const args = [...command.args, `--metrics-port=${await freePort()}`, `--health-probe-port=${await freePort()}`, "--log-level=debug"];
      const fd = openSync(providerLog, "a");
      provider = spawn("timeout", ["--kill-after=10", "1800", material.binary, ...args], { cwd: work, stdio: ["ignore", fd, fd], env: { ...process.env, ...command.env } });
      closeSync(fd);
      const buildInfo = spawnSync("go", ["version", "-m", material.binary], { encoding: "utf8" }).stdout;
      const vcs = /vcs\.revision=(\S+)/.exec(buildInfo)?.[1];
      say(`provider ${material.binary} (${version}, commit ${catalog.karpenterClusterApi.commit}${vcs ? `, binary's vcs.revision ${vcs}` : ", no vcs stamp in the binary"}; ${/^\s*mod\s+(\S+)\s+(\S+)/m.exec(buildInfo)?.slice(1).join(" ") ?? "no module info"}; karpenter ${/\bdep\s+sigs\.k8s\.io\/karpenter\s+(\S+)/.exec(buildInfo)?.[1] ?? "?"}): ${args.join(" ")}`);

      // The stand-ins for CAPH and the kubelet: each new Machine of the pool gets its server and Node.
      let serverId = 1000;
      const standIns = async () => {
        for (const machine of await L.list("cluster.x-k8s.io/v1beta2", "Machine", namespace, `cluster.x-k8s.io/deployment-name=${mdName}`)) {
          if (machine.metadata.deletionTimestamp) continue;
          const infraRef = (machine.spec as { infrastructureRef: { name: string } }).infrastructureRef;
          const infra = await L.get("infrastructure.cluster.x-k8s.io/v1beta1", "HCloudMachine", infraRef.name, namespace);
          if (!infra || (infra.spec as { providerID?: string }).providerID) continue;
          const providerID = `hcloud://${(serverId += 1)}`;
          await must("HCloudMachine providerID", L.api.request("PATCH", await L.objectPath(infra), { spec: { providerID } }, "application/merge-patch+json"));
          await must("HCloudMachine status", L.api.request("PATCH", `${await L.objectPath(infra)}/status`, { status: { ready: true } }, "application/merge-patch+json"));
          // The server's size as the MachineDeployment promised it (what the kubelet would report).
          const size = { cpu: promised[capacityAnnotations.cpu]!, memory: promised[capacityAnnotations.memory]!, pods: promised[capacityAnnotations.maxPods]! };
          await must("Node", W.request("POST", "/api/v1/nodes", {
            apiVersion: "v1",
            kind: "Node",
            metadata: { name: machine.metadata.name!, annotations: { "kwok.x-k8s.io/node": "fake" }, labels: { "kubernetes.io/hostname": machine.metadata.name!, "kubernetes.io/os": "linux", ...promisedLabels, type: "kwok" } },
            spec: { providerID },
            status: { allocatable: size, capacity: size },
          }));
          say(`stand-ins: Machine ${machine.metadata.name!} → HCloudMachine ${infraRef.name} ${providerID} ready, Node registered`);
        }
      };
      const standInsState = { running: true };
      const standInLoop = (async () => {
        while (standInsState.running) {
          await standIns().catch((error: unknown) => say(`stand-ins: ${String(error)}`));
          await sleep(1000);
        }
      })();

      // Every change of the MachineDeployment's replicas from here on, with its time.
      const timeline = (() => {
        const state = { running: true };
        let last: number | undefined = -1;
        const done = (async () => {
          while (state.running) {
            const replicas = await replicasNow().catch(() => last);
            if (replicas !== last) {
              if (last !== -1) say(`timeline: replicas ${String(last)} → ${String(replicas)} at ${new Date().toISOString()}`);
              last = replicas;
            }
            await sleep(200);
          }
        })();
        return { stop: () => { state.running = false; return done; } };
      })();

      // 5. A pending pod that fits no node.
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "needs-a-server", namespace: "default" },
        spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10", resources: { requests: { cpu: "1", memory: "1Gi" } } }] },
      };
      await must("the pending pod", W.request("POST", "/api/v1/namespaces/default/pods", pod));
      say("pod default/needs-a-server created (1 CPU, 1Gi; the only node is tainted)");
      // Negative control: with the Karpenter module's own NodeClaim CRD the API server refuses every
      // NodeClaim the provider makes (its CEL rule restricts the k8s.io label domain, where the
      // provider's requirement label lives); the provider's chart ships its own copies.
      const refusal = await eventually("the module's NodeClaim CRD refuses the provider's NodeClaim", 90_000, () =>
        Promise.resolve(providerLogText().split("\n").find((line) => line.includes("karpenter.cluster.x-k8s.io/clusterapinodeclass") && line.includes("is restricted"))),
      );
      say(`negative control, the module's CRDs: ${(JSON.parse(refusal) as { error?: string }).error ?? refusal}`);
      expect(await record("negative control: the module's NodeClaim CRD refused the provider's NodeClaim")).toBe(0);
      await applyCrds(yamlIn(material.crds, "karpenter.sh_"), `${material.crds}, as charts/karpenter/crds ships them`);
      await eventually("Karpenter scales the MachineDeployment to 1", stepTimeoutMs, async () => ((await replicasNow()) === 1 ? true : undefined), providerTail);
      await record("Karpenter scaled up for the pending pod");
      const running = await eventually("the pod runs on the new node", stepTimeoutMs, async () => {
        const got = await W.request("GET", "/api/v1/namespaces/default/pods/needs-a-server");
        const spec = got.json.spec as { nodeName?: string };
        return (got.json.status as { phase?: string }).phase === "Running" && spec.nodeName ? spec.nodeName : undefined;
      }, providerTail);
      say(`pod Running on ${running}`);
      // The NodeClaim is bound to the CAPI Machine, and the Machine is the provider's.
      const claim = await eventually("the NodeClaim names its Machine and provider ID", stepTimeoutMs, async () => {
        const claims = await W.request("GET", "/apis/karpenter.sh/v1/nodeclaims");
        return ((claims.json.items as KubeObject[] | undefined) ?? []).find((item) => item.metadata.annotations?.["cluster.x-k8s.io/machine"] && (item.status as { providerID?: string } | undefined)?.providerID);
      });
      const boundMachine = claim.metadata.annotations!["cluster.x-k8s.io/machine"]!;
      say(`NodeClaim ${claim.metadata.name!}: Machine ${boundMachine}, providerID ${(claim.status as { providerID: string }).providerID}, conditions ${((claim.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).map((c) => `${c.type}=${c.status}`).join(" ")}`);
      expect(boundMachine).toMatch(new RegExp(`^${namespace}/${mdName}-`));
      const machine = await L.get("cluster.x-k8s.io/v1beta2", "Machine", boundMachine.split("/")[1]!, namespace);
      expect(machine?.metadata.labels?.[karpenterMemberLabel]).toBe("");

      // 6. The pod goes; consolidation empties the node and scales the pool down.
      await must("delete the pod", W.request("DELETE", "/api/v1/namespaces/default/pods/needs-a-server?gracePeriodSeconds=0"));
      say("pod deleted");
      // Consolidation deletes the NodeClaim; the provider marks its Machine for deletion and lowers
      // replicas, and CAPI deletes that Machine. What is left is only what Karpenter never claimed.
      const settled = await eventually("Karpenter's Machine gone and the pool down to what Karpenter never claimed", stepTimeoutMs, async () => {
        const machines = (await L.list("cluster.x-k8s.io/v1beta2", "Machine", namespace, `cluster.x-k8s.io/deployment-name=${mdName}`)).filter((m) => !m.metadata.deletionTimestamp);
        const unclaimed = machines.filter((m) => m.metadata.labels?.[karpenterMemberLabel] === undefined).map((m) => m.metadata.name!);
        const replicas = await replicasNow();
        return machines.every((m) => `${namespace}/${m.metadata.name!}` !== boundMachine) && replicas === unclaimed.length ? { replicas, unclaimed } : undefined;
      }, providerTail);
      await record("Karpenter consolidated the empty node");
      standInsState.running = false;
      await standInLoop;
      await timeline.stop();

      // A replica the provider added while it failed to claim the Machine (an update conflict on
      // the Machine, which CAPI's controllers also update right after creating it) is never taken
      // back: v0.2.0's createMachine leaves it (its TODO at "unable to label Machine"), and that
      // Machine, with its server, stays outside Karpenter.
      const conflicts = providerLogText().split("\n").filter((line) => line.includes("unable to label Machine") && line.includes("the object has been modified")).length;
      if (settled.unclaimed.length > 0) say(`LEFT OVER: ${settled.unclaimed.join(", ")} (never claimed by Karpenter, replicas ${settled.replicas}); the provider logged ${conflicts} conflict(s) labelling a Machine`);
      expect(settled.unclaimed.length).toBeLessThanOrEqual(conflicts);
      expect(samples.map((sample) => sample.replicas)).toEqual([1, 0, 0, 1, settled.unclaimed.length]);
      const interesting = providerLogText()
        .split("\n")
        .filter((line) => /"message":"(found provisionable pod|computed new nodeclaim|created nodeclaim|launched nodeclaim|registered nodeclaim|initialized nodeclaim|disrupting node|tainted node|deleted node|deleted nodeclaim|node claim registration error|garbage collect)/.test(line) || /"level":"ERROR"/.test(line));
      // Each selected line without the fields that repeat on every line.
      const brief = (line: string) => line.replace(/"(logger|caller|reconcileID|controllerGroup|controllerKind)":"[^"]*",?|"(namespace|name)":"",?/g, "");
      report.push("provider log (selected lines):", ...interesting.slice(0, 60).map((line) => `    ${brief(line).slice(0, 700)}`));
      failed = false;
    } finally {
      report.push(...samples.map((sample) => `  replicas ${String(sample.replicas)} at ${sample.at}: ${sample.what}`));
      if (failed) report.push(`provider log tail:\n${providerLogText().split("\n").slice(-60).join("\n")}`, simulated?.logs() ?? "", loop?.logs() ?? "");
      if (provider) await halt([provider]);
      await simulated?.stop();
      await workload?.stop();
      const kept = await loop?.stop(failed);
      if (kept) report.push(`managers' logs kept in ${kept}`);
      if (failed) report.push(`provider log kept in ${providerLog}`);
      else rmSync(work, { recursive: true, force: true });
      console.log(`karpenter in the loop:\n${report.join("\n")}`);
    }
  }, buildTimeoutMs + 20 * 60_000);
});
