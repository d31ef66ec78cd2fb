import { hcloudSecret } from "../../../infra/model/platform/hetzner-cluster-class";
import { workloadKubeconfigSecret } from "../../../infra/model/tenant/tenant-cluster";
import { adminKubeconfig, startKubeApiServer, type KubeApiServer, type KubeApiServerBinaries } from "../kube-apiserver";
import { startSimulatedCluster, type SimulatedCluster } from "../kwok-cluster";
import type { HcloudApiStandIn } from "./hcloud-api";

/**
 * STAND-IN for what CAPH, the machines and the hcloud CCM do for a tenant, none of which runs here
 * (the Go module proxy refuses CAPH and the CCM, and nothing boots servers):
 * - the workload cluster: when a tenant's Cluster appears on the management cluster, a second
 *   kube-apiserver with kwok (tests/support/kwok-cluster.ts) plays it, and its admin kubeconfig is written
 *   to CAPI's `<cluster>-kubeconfig` Secret, owned by the Cluster, where KCP would write it once
 *   CAPH had made the HetznerCluster ready (sigs.k8s.io/cluster-api@v1.12.10: util/secret/consts.go,
 *   Kubeconfig; controlplane/kubeadm/internal/controllers/controller.go, reconcileKubeconfig). The
 *   HetznerCluster is never made ready, so no Machine is created;
 * - the control plane's machines: once KCP's `spec.version` changes, its `status.version` follows,
 *   as CAPI's own topology tests complete a fake control plane (exp/topology/desiredstate/
 *   desired_state_test.go, WithStatusFields "status.version"; tests/in-the-loop/capi-in-the-loop.test.ts does
 *   the same). MachineDeployments need nothing: without Machines they are never "upgrading";
 * - the hcloud CCM: a LoadBalancer Service of the workload cluster gets the finalizer
 *   `service.kubernetes.io/load-balancer-cleanup`, a load balancer labelled `hcloud-ccm/service-uid`
 *   in the tenant's project on the stand-in Hetzner API (with the token of the tenant's `hcloud`
 *   Secret, as the CCM gets it), and its address in the Service's status; a deleted Service loses
 *   its load balancer, then the finalizer (hetznercloud/hcloud-cloud-controller-manager@v1.35.0:
 *   internal/hcops/load_balancer.go, LabelServiceUID; k8s.io/cloud-provider: controllers/service).
 */

interface KubeObject {
  metadata: { name: string; namespace?: string; uid: string; deletionTimestamp?: string; finalizers?: string[]; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A version CAPI set, as the stand-in saw it. */
export interface VersionChange {
  cluster: string;
  component: "control-plane" | "workers";
  version: string;
  at: number;
}

export interface WorkloadCluster {
  readonly server: KubeApiServer;
  readonly simulated: SimulatedCluster;
}

export interface TenantInfrastructure {
  /** The workload cluster of each tenant Cluster seen, by "namespace/name". */
  readonly workloads: Map<string, WorkloadCluster>;
  /** Every control-plane and worker version CAPI set, in order. */
  readonly versions: VersionChange[];
  /** When each Cluster ("namespace/name") was first seen being deleted. */
  readonly deletions: Map<string, number>;
  /** What the stand-in did, one line each, for the test's report. */
  readonly log: string[];
  stop(): Promise<void>;
}

const cleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup";
const serviceUidLabel = "hcloud-ccm/service-uid";

export function startTenantInfrastructure(management: KubeApiServer, binaries: KubeApiServerBinaries, hcloud: HcloudApiStandIn, buildTimeoutMs: number): TenantInfrastructure {
  const workloads = new Map<string, WorkloadCluster>();
  const starting = new Set<string>();
  const versions: VersionChange[] = [];
  const deletions = new Map<string, number>();
  const log: string[] = [];
  const lastVersion = new Map<string, string>();
  const loadBalancers = new Map<string, number>();
  const running = { stopped: false };

  const list = async (server: KubeApiServer, apiPath: string): Promise<KubeObject[]> => {
    const answer = await server.request("GET", apiPath);
    return answer.status === 200 ? ((answer.json.items as KubeObject[] | undefined) ?? []) : [];
  };
  const note = (line: string) => log.push(`${new Date().toISOString()} ${line}`);

  const startWorkload = async (cluster: KubeObject) => {
    const key = `${cluster.metadata.namespace!}/${cluster.metadata.name}`;
    starting.add(key);
    const server = await startKubeApiServer(binaries, 90_000, `workload-${cluster.metadata.name}`);
    const simulated = await startSimulatedCluster(server, buildTimeoutMs);
    workloads.set(key, { server, simulated });
    const secret = workloadKubeconfigSecret(cluster.metadata.name);
    const written = await management.request("POST", `/api/v1/namespaces/${cluster.metadata.namespace!}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      type: "cluster.x-k8s.io/secret",
      metadata: {
        name: secret.name,
        namespace: cluster.metadata.namespace,
        labels: { "cluster.x-k8s.io/cluster-name": cluster.metadata.name },
        ownerReferences: [{ apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", name: cluster.metadata.name, uid: cluster.metadata.uid }],
      },
      data: { [secret.key]: Buffer.from(adminKubeconfig(server)).toString("base64") },
    });
    note(`${key}: workload cluster at ${server.url}; kubeconfig Secret ${secret.name}: HTTP ${written.status}`);
  };

  const completeControlPlanes = async () => {
    for (const kcp of await list(management, "/apis/controlplane.cluster.x-k8s.io/v1beta2/kubeadmcontrolplanes")) {
      const cluster = kcp.metadata.labels?.["cluster.x-k8s.io/cluster-name"] ?? kcp.metadata.name;
      const specVersion = kcp.spec?.version as string | undefined;
      if (!specVersion) continue;
      const key = `${kcp.metadata.namespace!}/${cluster}/control-plane`;
      if (lastVersion.get(key) !== specVersion) {
        lastVersion.set(key, specVersion);
        versions.push({ cluster: `${kcp.metadata.namespace!}/${cluster}`, component: "control-plane", version: specVersion, at: Date.now() });
      }
      if (kcp.status?.version !== specVersion && !kcp.metadata.deletionTimestamp) {
        await management.request("PATCH", `/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/${kcp.metadata.namespace!}/kubeadmcontrolplanes/${kcp.metadata.name}/status`, { status: { version: specVersion } }, "application/merge-patch+json");
      }
    }
    for (const md of await list(management, "/apis/cluster.x-k8s.io/v1beta2/machinedeployments")) {
      const cluster = md.metadata.labels?.["cluster.x-k8s.io/cluster-name"] ?? "";
      const version = (md.spec as { template?: { spec?: { version?: string } } } | undefined)?.template?.spec?.version;
      const key = `${md.metadata.namespace!}/${cluster}/workers/${md.metadata.name}`;
      if (version && lastVersion.get(key) !== version) {
        lastVersion.set(key, version);
        versions.push({ cluster: `${md.metadata.namespace!}/${cluster}`, component: "workers", version, at: Date.now() });
      }
    }
  };

  /** The hcloud CCM's part for one workload cluster. */
  const balanceLoad = async (key: string, workload: WorkloadCluster) => {
    const namespace = key.split("/")[0]!;
    const tokenSecret = await management.request("GET", `/api/v1/namespaces/${namespace}/secrets/${hcloudSecret.name}`);
    const encoded = (tokenSecret.json.data as Record<string, string> | undefined)?.[hcloudSecret.tokenKey];
    if (tokenSecret.status !== 200 || !encoded) return;
    const token = Buffer.from(encoded, "base64").toString("utf8");
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    for (const service of await list(workload.server, "/api/v1/services")) {
      if ((service.spec as { type?: string } | undefined)?.type !== "LoadBalancer") continue;
      const servicePath = `/api/v1/namespaces/${service.metadata.namespace!}/services/${service.metadata.name}`;
      const finalizers = service.metadata.finalizers ?? [];
      if (service.metadata.deletionTimestamp) {
        if (!finalizers.includes(cleanupFinalizer)) continue;
        const id = loadBalancers.get(service.metadata.uid);
        if (id !== undefined) {
          const deleted = await fetch(`${hcloud.endpoint}/load_balancers/${id}`, { method: "DELETE", headers });
          note(`${key}: CCM deleted load balancer ${id} of Service ${service.metadata.namespace!}/${service.metadata.name}: HTTP ${deleted.status}`);
          loadBalancers.delete(service.metadata.uid);
        }
        await workload.server.request("PATCH", servicePath, { metadata: { finalizers: finalizers.filter((finalizer) => finalizer !== cleanupFinalizer) } }, "application/merge-patch+json");
        continue;
      }
      if (loadBalancers.has(service.metadata.uid)) continue;
      await workload.server.request("PATCH", servicePath, { metadata: { finalizers: [...finalizers, cleanupFinalizer] } }, "application/merge-patch+json");
      const created = await fetch(`${hcloud.endpoint}/load_balancers`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: `a${service.metadata.uid.replace(/-/g, "")}`, load_balancer_type: "lb11", location: "fsn1", labels: { [serviceUidLabel]: service.metadata.uid } }),
      });
      const answer = (await created.json()) as { load_balancer?: { id: number; public_net: { ipv4: { ip: string } } } };
      if (!answer.load_balancer) {
        note(`${key}: CCM could not create a load balancer for ${service.metadata.name}: HTTP ${created.status} ${JSON.stringify(answer)}`);
        continue;
      }
      loadBalancers.set(service.metadata.uid, answer.load_balancer.id);
      await workload.server.request("PATCH", `${servicePath}/status`, { status: { loadBalancer: { ingress: [{ ip: answer.load_balancer.public_net.ipv4.ip, ipMode: "VIP" }] } } }, "application/merge-patch+json");
      note(`${key}: CCM created load balancer ${answer.load_balancer.id} (${answer.load_balancer.public_net.ipv4.ip}) for Service ${service.metadata.namespace!}/${service.metadata.name}`);
    }
  };

  const tick = async () => {
    for (const cluster of await list(management, "/apis/cluster.x-k8s.io/v1beta2/clusters")) {
      const key = `${cluster.metadata.namespace!}/${cluster.metadata.name}`;
      if (cluster.metadata.deletionTimestamp) {
        if (!deletions.has(key)) {
          deletions.set(key, Date.now());
          note(`${key}: Cluster is being deleted`);
        }
        continue;
      }
      if (!starting.has(key)) void startWorkload(cluster).catch((error: unknown) => note(`${key}: the workload cluster did not start: ${String(error)}`));
    }
    await completeControlPlanes();
    for (const [key, workload] of workloads) await balanceLoad(key, workload);
  };

  const loop = (async () => {
    while (!running.stopped) {
      await tick().catch((error: unknown) => note(`tick failed: ${String(error)}`));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();

  return {
    workloads,
    versions,
    deletions,
    log,
    stop: async () => {
      running.stopped = true;
      await loop;
      for (const workload of workloads.values()) {
        await workload.simulated.stop();
        await workload.server.stop();
      }
    },
  };
}
