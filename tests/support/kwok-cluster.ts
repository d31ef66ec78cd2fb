import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { adminKubeconfig, halt, installedBinary, kubeControllerManagerBinary, kubeSchedulerBinary, type KubeApiServer } from "./kube-apiserver";
import { upstreamDir } from "./upstream";

/**
 * Turns a bare API server into a cluster whose workloads come up: the real kube-controller-manager
 * (Deployments, ReplicaSets, Jobs, the garbage collector, ...) and kube-scheduler from the same
 * Kubernetes build, and kwok (sigs.k8s.io/kwok, served by the Go module proxy) simulating one node
 * and the pods bound to it: pods become Running and Ready, and a Job's pods Succeeded, without a
 * container ever running. kwok's behaviour is its own stages, read in place from its module
 * (kustomize/stage/node/fast and heartbeat-with-lease, kustomize/stage/pod/fast).
 */

export interface SimulatedCluster {
  node: string;
  logs(): string;
  stop(): Promise<void>;
}

/** The kwok release the Go module proxy serves (a test tool, so pinned here rather than in the catalog). */
const kwokVersion = "v0.8.0";
const lifetimeSeconds = 3600;

export async function startSimulatedCluster(server: KubeApiServer, buildTimeoutMs: number): Promise<SimulatedCluster> {
  const [kcm, scheduler, kwok] = [await kubeControllerManagerBinary(buildTimeoutMs), await kubeSchedulerBinary(buildTimeoutMs), await installedBinary(`sigs.k8s.io/kwok/cmd/kwok@${kwokVersion}`, "kwok", buildTimeoutMs)];
  const stages = upstreamDir({ module: "sigs.k8s.io/kwok", version: kwokVersion, path: "kustomize/stage" });
  if ("unavailable" in stages) throw new Error(`kwok's stages: ${stages.unavailable}`);
  const dir = mkdtempSync(path.join(tmpdir(), "kwok-cluster-"));
  const kubeconfig = path.join(dir, "kubeconfig");
  writeFileSync(kubeconfig, adminKubeconfig(server));
  const stageFiles = ["node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"].map((file) =>
    path.join(stages.dir, file),
  );
  const children: ChildProcess[] = [];
  const start = (name: string, binary: string, args: string[]) => {
    const fd = openSync(path.join(dir, `${name}.log`), "a");
    const child = spawn("timeout", ["--kill-after=10", String(lifetimeSeconds), binary, ...args], { cwd: dir, stdio: ["ignore", fd, fd] });
    closeSync(fd);
    children.push(child);
  };
  start("kube-controller-manager", kcm.path, [`--kubeconfig=${kubeconfig}`, "--leader-elect=false", "--secure-port=0", "--controllers=*,-serviceaccount-token-controller", "--v=1"]);
  start("kube-scheduler", scheduler.path, [`--kubeconfig=${kubeconfig}`, "--leader-elect=false", "--secure-port=0", "--v=1"]);
  start("kwok", kwok.path, [
    `--kubeconfig=${kubeconfig}`,
    "--manage-all-nodes=true",
    "--node-lease-duration-seconds=40",
    "--cidr=10.244.0.0/16",
    "--node-ip=10.0.0.10",
    "--server-address=",
    ...stageFiles.flatMap((file) => ["-c", file]),
  ]);
  const node = "kwok-node-0";
  const created = await server.request("POST", "/api/v1/nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: node, annotations: { "kwok.x-k8s.io/node": "fake" }, labels: { "kubernetes.io/hostname": node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", type: "kwok" } },
    status: { allocatable: { cpu: "64", memory: "256Gi", pods: "500" }, capacity: { cpu: "64", memory: "256Gi", pods: "500" } },
  });
  if (created.status !== 201) throw new Error(`creating the kwok node: ${created.status} ${JSON.stringify(created.json)}`);
  const logs = () =>
    ["kube-controller-manager", "kube-scheduler", "kwok"]
      .map((name) => {
        let text = "";
        try {
          text = readFileSync(path.join(dir, `${name}.log`), "utf8").split("\n").slice(-30).join("\n");
        } catch {
          text = "(no log)";
        }
        return `--- ${name} log (tail) ---\n${text}`;
      })
      .join("\n");
  return {
    node,
    logs,
    stop: async () => {
      await halt(children);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
