import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { applyJsonPatch, patchDefinitions, undeclaredSegment, type Schema } from "./cluster-class-patches";
import { lostLeaves, startKubeApiServer } from "./kube-apiserver";
import { runToolchainScript, scratchDir } from "./script-harness";
import { crdsIn } from "./upstream-crds";
import { isRefusal } from "./upstream";

// The pieces of the manifest conformance test that can fail without a built API server: the
// toolchain script's errors (clear and fast, never a hang) and the helpers' checks.

const scratch = scratchDir("kube-apiserver-test");
const run = (args: string[], env: Record<string, string> = {}, withGo = true) => runToolchainScript("kube-apiserver-toolchain", args, env, withGo);

/** A Go environment that can reach nothing and has nothing cached. */
const offline = () => ({
  GOPROXY: "off",
  GOFLAGS: "",
  GOMODCACHE: mkdtempSync(path.join(scratch, "gomod-")),
  GOCACHE: mkdtempSync(path.join(scratch, "gocache-")),
  CAPI_FLEET_CACHE: mkdtempSync(path.join(scratch, "cache-")),
});

describe("tools/kube-apiserver-toolchain", () => {
  it("fails at once without Go, naming what is needed", () => {
    const { code, output } = run(["build"], {}, false);
    expect(code).toBe(1);
    expect(output).toContain("Go is missing: install Go >= 1.25");
  });

  it("lists its pins and a cache key", () => {
    const { code, output } = run(["pins"], {});
    expect(code).toBe(0);
    expect(output).toMatch(/^KUBERNETES_VERSION=\d+\.\d+\.\d+$/m);
    expect(output).toMatch(/^pinset-key: k\d+\.\d+\.\d+-[0-9a-f]{12}$/m);
  });

  it("fails fast and says so when the Go module proxy cannot serve kube-apiserver's module", () => {
    const env = offline();
    const { code, output, ms } = run(["build"], env);
    expect(code).toBe(1);
    expect(output).toMatch(/could not download k8s\.io\/kubernetes@v\d+\.\d+\.\d+ from the Go module proxy/);
    expect(ms).toBeLessThan(30_000);
    // Nothing half-built is left looking finished.
    expect(readdirSync(env.CAPI_FLEET_CACHE, { recursive: true, encoding: "utf8" }).filter((file) => file.includes(".done"))).toEqual([]);
  });

  it("controller-manager (kube-controller-manager, built on request) fails the same way without the proxy", () => {
    const env = offline();
    const { code, output, ms } = run(["controller-manager"], env);
    expect(code).toBe(1);
    expect(output).toMatch(/could not download k8s\.io\/kubernetes@v\d+\.\d+\.\d+ from the Go module proxy/);
    expect(output).not.toContain("KUBE_CONTROLLER_MANAGER=");
    expect(ms).toBeLessThan(30_000);
  });

  it("fails fast on a module the proxy does not serve, with go's reason", () => {
    const { code, output } = run(["module", "sigs.k8s.io/cluster-api@v1.12.10"], offline());
    expect(code).toBe(1);
    expect(output).toContain("could not download sigs.k8s.io/cluster-api@v1.12.10 from the Go module proxy");
    expect(output).toContain("GOPROXY=off");
  });

  it("rejects a module argument without a version", () => {
    const { code, output } = run(["module", "sigs.k8s.io/cluster-api"], {});
    expect(code).toBe(1);
    expect(output).toContain("usage: module MOD@VERSION");
  });
});

describe("startKubeApiServer", () => {
  it("fails with the servers' log tails when a binary exits, and leaves no temp dir", async () => {
    const prefix = "kube-apiserver-failing";
    const fake = { kubeApiserver: "/bin/false", etcd: "/bin/false", kubeApiserverVersion: "none", etcdVersion: "none" };
    await expect(startKubeApiServer(fake, 10_000, prefix)).rejects.toThrow(/(etcd|kube-apiserver) exited \(1\) before the API server was ready[\s\S]*--- etcd log/);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`${prefix}-`))).toEqual([]);
  });

  it("starts again on new ports when etcd finds its port taken, at most 3 times, saying so on stderr", async () => {
    const prefix = "kube-apiserver-port-taken";
    const starts = path.join(mkdtempSync(path.join(scratch, "starts-")), "etcd-starts");
    const etcd = path.join(path.dirname(starts), "etcd");
    writeFileSync(etcd, `#!/bin/sh\necho "$@" >> ${starts}\necho "listen tcp 127.0.0.1:1: bind: address already in use" >&2\nexit 1\n`, { mode: 0o755 });
    const apiserver = path.join(path.dirname(starts), "kube-apiserver");
    writeFileSync(apiserver, "#!/bin/sh\nexec sleep 60\n", { mode: 0o755 });
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0);
    try {
      const fake = { kubeApiserver: apiserver, etcd, kubeApiserverVersion: "none", etcdVersion: "none" };
      await expect(startKubeApiServer(fake, 20_000, prefix)).rejects.toThrow(/etcd exited \(1\) before the API server was ready \(start 3 of 3\)[\s\S]*address already in use/);
    } finally {
      stderr.mockRestore();
    }
    const retries = written.filter((line) => line.startsWith("startKubeApiServer:"));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(/etcd could not bind its port \(listen tcp 127\.0\.0\.1:1: bind: address already in use\); .* \(start 2 of 3\)/);
    // Each start had its own client port.
    const clientPorts = readFileSync(starts, "utf8").trim().split("\n").map((args) => /--listen-client-urls=(\S+)/.exec(args)?.[1]);
    expect(clientPorts).toHaveLength(3);
    expect(new Set(clientPorts).size).toBe(3);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`${prefix}-`))).toEqual([]);
  });

  it("does not start again when a server exits for another reason (negative control)", async () => {
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0);
    try {
      const fake = { kubeApiserver: "/bin/false", etcd: "/bin/false", kubeApiserverVersion: "none", etcdVersion: "none" };
      await expect(startKubeApiServer(fake, 10_000, "kube-apiserver-failing")).rejects.toThrow(/exited \(1\) before the API server was ready\n/);
    } finally {
      stderr.mockRestore();
    }
    expect(written.filter((line) => line.startsWith("startKubeApiServer:"))).toEqual([]);
  });
});

describe("lostLeaves", () => {
  it("finds nothing when the answer holds everything sent (plus server defaults)", () => {
    expect(lostLeaves({ a: { b: 1, c: ["x"] } }, { a: { b: 1, c: ["x"], d: true }, status: {} })).toEqual([]);
  });

  it("names pruned and rewritten leaves (negative control)", () => {
    expect(lostLeaves({ a: { b: 1, c: ["x", "y"] }, e: "5m" }, { a: { c: ["x"] }, e: "300s" })).toEqual([
      ".a.b: sent 1, got undefined",
      ".a.c[1]: sent \"y\", got undefined",
      '.e: sent "5m", got "300s"',
    ]);
  });

  it("ignores Secret stringData, which the server turns into data", () => {
    expect(lostLeaves({ stringData: { token: "t" } }, { data: { token: "dA==" } })).toEqual([]);
  });
});

describe("upstream CRD helpers", () => {
  it("tells a refusal from an unreachable proxy", () => {
    expect(isRefusal("reading https://proxy.golang.org/x/@v/v1.1.8.info: 403 Forbidden")).toBe(true);
    expect(isRefusal("dial tcp: lookup proxy.golang.org: no such host")).toBe(false);
    expect(isRefusal("module lookup disabled by GOPROXY=off")).toBe(false);
  });

  it("reads only CustomResourceDefinition documents from multi-document files", () => {
    const dir = mkdtempSync(path.join(scratch, "crds-"));
    const file = path.join(dir, "controller.yaml");
    spawnSync("bash", [
      "-c",
      `printf '%s\\n' 'apiVersion: v1' 'kind: Namespace' 'metadata: {name: x}' '---' 'apiVersion: apiextensions.k8s.io/v1' 'kind: CustomResourceDefinition' 'metadata: {name: a.b}' > ${file}`,
    ]);
    expect(crdsIn(dir).crds.map((crd) => crd.metadata.name)).toEqual(["a.b"]);
  });
});

describe("ClusterClass patch helpers", () => {
  const schema: Schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          commands: { type: "array", items: { type: "string" } },
          args: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
          labels: { type: "object", additionalProperties: { type: "string" } },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
    },
  };

  it("accepts declared paths, array indexes, map keys and preserved subtrees", () => {
    for (const pointer of ["/spec/commands", "/spec/commands/-", "/spec/args/0/name", "/spec/labels/a~1b", "/spec/free/anything/at/all"]) {
      expect(undeclaredSegment(schema, pointer), pointer).toBeUndefined();
    }
  });

  it("names the first undeclared segment (negative control)", () => {
    expect(undeclaredSegment(schema, "/spec/comands")).toBe("comands");
    expect(undeclaredSegment(schema, "/spec/args/name")).toBe("name");
    expect(undeclaredSegment(schema, "/spec/args/0/value")).toBe("value");
  });

  it("applies add, replace and remove like CAPI's JSON patches", () => {
    const document = { spec: { commands: ["a"], labels: { x: "1" } } };
    applyJsonPatch(document, { op: "add", path: "/spec/commands/-", value: "b" });
    applyJsonPatch(document, { op: "replace", path: "/spec/labels/x", value: "2" });
    applyJsonPatch(document, { op: "add", path: "/spec/extra", value: true });
    applyJsonPatch(document, { op: "remove", path: "/spec/commands/0" });
    expect(document).toEqual({ spec: { commands: ["b"], labels: { x: "2" }, extra: true } });
    expect(() => {
      applyJsonPatch(document, { op: "add", path: "/status/x", value: 1 });
    }).toThrow(/status does not exist/);
  });

  it("selects the templates a patch targets by kind and matchResources", () => {
    const ref = (kind: string, name: string) => ({ templateRef: { apiVersion: "g/v1", kind, name } });
    const spec = {
      infrastructure: ref("ClusterT", "cluster"),
      controlPlane: { ...ref("CPT", "cp"), machineInfrastructure: ref("MachineT", "cp-machines") },
      workers: { machineDeployments: [{ class: "w", infrastructure: ref("MachineT", "w-machines"), bootstrap: ref("BootT", "w-boot") }] },
      patches: [
        { name: "cp", definitions: [{ selector: { apiVersion: "g/v1", kind: "MachineT", matchResources: { controlPlane: true } }, jsonPatches: [] }] },
        { name: "w", definitions: [{ selector: { apiVersion: "g/v1", kind: "MachineT", matchResources: { machineDeploymentClass: { names: ["w"] } } }, jsonPatches: [] }] },
        { name: "none", definitions: [{ selector: { apiVersion: "g/v1", kind: "MachineT", matchResources: { machineDeploymentClass: { names: ["other"] } } }, jsonPatches: [] }] },
        { name: "external", external: { generatePatchesExtension: "x" } },
      ],
    };
    expect(patchDefinitions(spec).map((d) => [d.patch, d.targets])).toEqual([
      ["cp", ["cp-machines"]],
      ["w", ["w-machines"]],
      ["none", []],
    ]);
  });
});
