import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildKubeconfig } from "../../infra/model/management/kubeconfig";
import { repoRoot } from "../../tests/support/stack-files";
import { localServerCertificate, runNodeScript, type ScriptRun } from "../../tests/support/script-harness";

// Runs components/tenant-cluster/drain-load-balancers.mjs as a process against three real local servers:
// - the management API (TLS, client certificate required, like k3s) serving the CAPI
//   `<cluster>-kubeconfig` Secret,
// - the workload API (TLS, bearer token) with an in-memory Service list and a fake hcloud
//   CCM that holds each deleted LoadBalancer Service's finalizer for a few polls (or for
//   ever) and deletes the matching Hetzner load balancer when it lets go,
// - the Hetzner API (plain HTTP) serving /v1/load_balancers with label_selector handling.

const script = path.join(repoRoot, "scripts", "drain-load-balancers.mjs");
let dir: string;
const pem = (name: string) => readFileSync(path.join(dir, name), "utf8");

const runScript = (env: Record<string, string>): Promise<ScriptRun> => runNodeScript(script, env);

interface FakeService {
  namespace: string;
  name: string;
  uid: string;
  type: "LoadBalancer" | "ClusterIP";
  ingress?: string;
  /** Set on DELETE of a LoadBalancer Service: lists left until the CCM lets it go. */
  releaseIn?: number;
}

interface FakeLoadBalancer {
  id: number;
  name: string;
  labels: Record<string, string>;
  ip: string;
}

/** What the fake servers hold and record; reset before each test. */
interface State {
  secret: boolean;
  services: FakeService[];
  /** Service lists the CCM holds a deleted Service for; Infinity: it never lets go. */
  releaseAfterPolls: number;
  loadBalancers: FakeLoadBalancer[];
  /** The CCM lets the Service go but its load balancer stays at Hetzner. */
  hetznerKeeps: boolean;
  onDelete?: (service: FakeService) => void;
  deletes: string[];
  managementRequests: number;
  workloadRequests: number;
  hetznerSelectors: string[];
  /** Overrides the kubeconfig in the Secret (e.g. one pointing nowhere). */
  secretKubeconfig?: string;
}

let state: State;
const workloadToken = randomBytes(24).toString("hex");
const hcloudToken = randomBytes(32).toString("hex");
let managementKubeconfig: string;
let workloadKubeconfig: string;
let adminKeyPem: string;
let managementServer: https.Server;
let workloadServer: https.Server;
let hetznerServer: http.Server;
let workloadUrl: string;
let hetznerUrl: string;

const loadBalancerName = (uid: string) => `a${uid.replace(/-/g, "")}`;
const uidA = "3f2b6c1e-0d4a-4b7e-9a51-7c2e8f10a001";
const uidB = "8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d0b02";
const uidOther = "11111111-2222-4333-8444-555555555555";

function lbService(namespace: string, name: string, uid: string, ingress: string): FakeService {
  return { namespace, name, uid, type: "LoadBalancer", ingress };
}

function hetznerLoadBalancer(id: number, uid: string, ip: string): FakeLoadBalancer {
  return { id, name: loadBalancerName(uid), labels: { "hcloud-ccm/service-uid": uid }, ip };
}

function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

const notFound = (what: string) => ({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message: `${what} not found` });

function serviceObject(service: FakeService) {
  return {
    metadata: {
      namespace: service.namespace,
      name: service.name,
      uid: service.uid,
      ...(service.releaseIn === undefined
        ? {}
        : { deletionTimestamp: "2026-11-29T12:00:00Z", finalizers: ["service.kubernetes.io/load-balancer-cleanup"] }),
    },
    spec: { type: service.type },
    status: service.ingress ? { loadBalancer: { ingress: [{ ip: service.ingress, ipMode: "VIP" }] } } : { loadBalancer: {} },
  };
}

/** One list of the fake CCM's work: deleted Services count down and go, with their load balancers. */
function ccmTick(): void {
  for (const service of state.services) {
    if (service.releaseIn !== undefined) service.releaseIn -= 1;
  }
  const released = state.services.filter((service) => service.releaseIn !== undefined && service.releaseIn <= 0);
  state.services = state.services.filter((service) => !released.includes(service));
  if (!state.hetznerKeeps) {
    const uids = new Set(released.map((service) => service.uid));
    state.loadBalancers = state.loadBalancers.filter((lb) => !uids.has(lb.labels["hcloud-ccm/service-uid"] ?? ""));
  }
}

function handleWorkload(request: http.IncomingMessage, response: http.ServerResponse): void {
  state.workloadRequests += 1;
  if (request.headers.authorization !== `Bearer ${workloadToken}`) {
    json(response, 401, { kind: "Status", status: "Failure", reason: "Unauthorized", code: 401, message: "Unauthorized" });
    return;
  }
  const url = new URL(request.url ?? "/", "https://workload");
  if (request.method === "GET" && url.pathname === "/api/v1/services") {
    ccmTick();
    json(response, 200, { kind: "ServiceList", apiVersion: "v1", metadata: {}, items: state.services.map(serviceObject) });
    return;
  }
  const match = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/.exec(url.pathname);
  if (request.method === "DELETE" && match) {
    const [, namespace, name] = match;
    const service = state.services.find((candidate) => candidate.namespace === namespace && candidate.name === name);
    state.deletes.push(`${namespace}/${name}`);
    if (!service) {
      json(response, 404, notFound(`services "${name}"`));
      return;
    }
    if (service.type === "LoadBalancer") {
      service.releaseIn ??= state.releaseAfterPolls;
    } else {
      state.services = state.services.filter((candidate) => candidate !== service);
    }
    state.onDelete?.(service);
    json(response, 200, serviceObject(service));
    return;
  }
  json(response, 404, notFound(url.pathname));
}

function handleManagement(request: http.IncomingMessage, response: http.ServerResponse): void {
  state.managementRequests += 1;
  if (request.method === "GET" && request.url === "/api/v1/namespaces/tenant-a/secrets/alpha-kubeconfig" && state.secret) {
    const value = Buffer.from(state.secretKubeconfig ?? workloadKubeconfig).toString("base64");
    json(response, 200, { kind: "Secret", apiVersion: "v1", metadata: { name: "alpha-kubeconfig", namespace: "tenant-a" }, data: { value } });
    return;
  }
  json(response, 404, notFound('secrets "alpha-kubeconfig"'));
}

function handleHetzner(request: http.IncomingMessage, response: http.ServerResponse): void {
  if (request.headers.authorization !== `Bearer ${hcloudToken}`) {
    json(response, 401, { error: { code: "unauthorized", message: "unable to authenticate" } });
    return;
  }
  const url = new URL(request.url ?? "/", "http://hetzner");
  if (url.pathname !== "/v1/load_balancers") {
    json(response, 404, { error: { code: "not_found", message: "not found" } });
    return;
  }
  const selector = url.searchParams.get("label_selector") ?? "";
  state.hetznerSelectors.push(selector);
  const match = /^hcloud-ccm\/service-uid in \(([^)]*)\)$/.exec(selector);
  if (!match) {
    json(response, 400, { error: { code: "invalid_input", message: "invalid label_selector" } });
    return;
  }
  const uids = new Set(match[1]!.split(","));
  const found = state.loadBalancers.filter((lb) => uids.has(lb.labels["hcloud-ccm/service-uid"] ?? ""));
  json(response, 200, {
    load_balancers: found.map((lb) => ({ id: lb.id, name: lb.name, labels: lb.labels, public_net: { ipv4: { ip: lb.ip } } })),
    meta: { pagination: { page: 1, per_page: 50, total_entries: found.length } },
  });
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  ({ dir } = localServerCertificate("drain-load-balancers"));
  const pki = await import("../management-cluster/management-pki.mjs");
  const { clientCa } = await pki.issueAuthorities();
  const admin = await pki.issueAdminCertificate(clientCa);
  adminKeyPem = admin.keyPem;
  const tls = { key: pem("server.key"), cert: pem("server.crt") };
  managementServer = https.createServer({ ...tls, ca: clientCa.certPem, requestCert: true, rejectUnauthorized: true }, handleManagement);
  workloadServer = https.createServer(tls, handleWorkload);
  hetznerServer = http.createServer(handleHetzner);
  const managementUrl = `https://127.0.0.1:${await listen(managementServer)}`;
  workloadUrl = `https://127.0.0.1:${await listen(workloadServer)}`;
  hetznerUrl = `http://127.0.0.1:${await listen(hetznerServer)}`;
  managementKubeconfig = buildKubeconfig({
    name: "fleet-management",
    server: managementUrl,
    certificateAuthorityPem: pem("server-ca.crt"),
    clientCertificatePem: admin.certPem,
    clientKeyPem: admin.keyPem,
  });
  workloadKubeconfig = tokenKubeconfig(workloadUrl);
});

afterAll(() => {
  for (const server of [managementServer, workloadServer, hetznerServer]) server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A workload kubeconfig that authenticates with a bearer token. */
function tokenKubeconfig(server: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "alpha", cluster: { server, "certificate-authority-data": Buffer.from(pem("server-ca.crt")).toString("base64") } }],
    users: [{ name: "alpha-admin", user: { token: workloadToken } }],
    contexts: [{ name: "alpha-admin@alpha", context: { cluster: "alpha", user: "alpha-admin" } }],
    "current-context": "alpha-admin@alpha",
  });
}

beforeEach(() => {
  state = {
    secret: true,
    services: [
      lbService("ingress-nginx", "ingress-nginx-controller", uidA, "203.0.113.7"),
      lbService("monitoring", "grafana", uidB, "203.0.113.8"),
      { namespace: "default", name: "kubernetes", uid: "c0000000-0000-4000-8000-000000000001", type: "ClusterIP" },
      { namespace: "kube-system", name: "kube-dns", uid: "c0000000-0000-4000-8000-000000000002", type: "ClusterIP" },
    ],
    releaseAfterPolls: 2,
    loadBalancers: [hetznerLoadBalancer(101, uidA, "203.0.113.7"), hetznerLoadBalancer(102, uidB, "203.0.113.8"), hetznerLoadBalancer(900, uidOther, "203.0.113.99")],
    hetznerKeeps: false,
    deletes: [],
    managementRequests: 0,
    workloadRequests: 0,
    hetznerSelectors: [],
  };
});

const baseEnv = (): Record<string, string> => ({
  MANAGEMENT_KUBECONFIG: managementKubeconfig,
  TENANT_NAMESPACE: "tenant-a",
  TENANT_CLUSTER: "alpha",
  HCLOUD_TOKEN: hcloudToken,
  HCLOUD_ENDPOINT: `${hetznerUrl}/v1`,
  DRAIN_WAIT_SECONDS: "8",
  POLL_MILLISECONDS: "40",
});

/** Credentials and their encodings that must never reach the log. */
function secretMaterial(): string[] {
  const keyBody = adminKeyPem.split("\n").filter((line) => line && !line.startsWith("-----"))[0]!;
  return [
    workloadToken,
    hcloudToken,
    keyBody,
    "PRIVATE KEY",
    "BEGIN CERTIFICATE",
    Buffer.from(adminKeyPem).toString("base64").slice(0, 40),
    Buffer.from(workloadKubeconfig).toString("base64").slice(0, 40),
    "certificate-authority-data",
  ];
}

/** Runs the drain; every run also checks that stdout stays empty and nothing secret is logged. */
async function drain(env: Record<string, string> = {}): Promise<ScriptRun> {
  const run = await runScript({ ...baseEnv(), ...env });
  expect(run.stdout).toBe("");
  for (const material of secretMaterial()) {
    expect(run.stderr).not.toContain(material);
  }
  return run;
}

const remainingLoadBalancers = () => state.loadBalancers.map((lb) => lb.id);

describe("drain-load-balancers", () => {
  it("deletes the LoadBalancer Services of every namespace, leaves ClusterIP ones, and confirms at Hetzner", async () => {
    const { code, stderr } = await drain();
    expect(stderr).toContain("deleting 2 LoadBalancer Service(s): ingress-nginx/ingress-nginx-controller, monitoring/grafana");
    expect(stderr).toContain("Hetzner lists none of their load balancers; drained");
    expect(code).toBe(0);
    expect(state.deletes).toEqual(["ingress-nginx/ingress-nginx-controller", "monitoring/grafana"]);
    expect(state.services.map((service) => service.name)).toEqual(["kubernetes", "kube-dns"]);
    expect(remainingLoadBalancers()).toEqual([900]);
    expect(state.hetznerSelectors.at(-1)).toBe(`hcloud-ccm/service-uid in (${uidA},${uidB})`);
    // Progress on change, not on every poll.
    expect(stderr.match(/still present/g)).toHaveLength(1);
  });

  it("also deletes a LoadBalancer Service that appears while it drains", async () => {
    state.onDelete = (service) => {
      if (service.name === "grafana") {
        state.services.push(lbService("late", "echo", "9d9d9d9d-0000-4000-8000-00000000e0e0", "203.0.113.9"));
      }
    };
    const { code, stderr } = await drain();
    expect(stderr).toContain("1 new LoadBalancer Service(s) appeared: late/echo; deleting them too");
    expect(code).toBe(0);
    expect(state.deletes).toContain("late/echo");
    expect(state.services.filter((service) => service.type === "LoadBalancer")).toEqual([]);
  });

  it("gives up within DRAIN_WAIT_SECONDS when the CCM never lets go, naming each Service, address and load balancer (negative control)", async () => {
    state.releaseAfterPolls = Infinity;
    const { code, stderr, elapsedMs } = await drain({ DRAIN_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(elapsedMs).toBeLessThan(5000);
    expect(stderr).toContain("gave up after 1 s waiting for the load balancers of cluster tenant-a/alpha to be deleted");
    expect(stderr).toContain(`Service ingress-nginx/ingress-nginx-controller (uid ${uidA}, ingress 203.0.113.7, deleting)`);
    expect(stderr).toContain(`Service monitoring/grafana (uid ${uidB}, ingress 203.0.113.8, deleting)`);
    expect(stderr).toContain(`load balancer ${loadBalancerName(uidA)} (id 101, 203.0.113.7)`);
    expect(stderr).toContain("The Cluster tenant-a/alpha was NOT deleted");
    expect(stderr).toContain("kubectl -n kube-system get pods -l app.kubernetes.io/name=hcloud-cloud-controller-manager");
    expect(stderr).toContain("CAPI_FLEET_LB_DRAIN=skip pulumi destroy");
    expect(stderr.match(/still present/g)).toHaveLength(1);
    // Deleted once each, not on every poll.
    expect(state.deletes).toHaveLength(2);
  });

  it("fails when Hetzner still lists a load balancer after its Service is gone", async () => {
    state.hetznerKeeps = true;
    state.loadBalancers = state.loadBalancers.filter((lb) => lb.id !== 102);
    const { code, stderr } = await drain({ DRAIN_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(stderr).toContain("Hetzner still lists 1 of their load balancer(s)");
    expect(stderr).toContain(`Still listed at Hetzner:\n  - load balancer ${loadBalancerName(uidA)} (id 101, 203.0.113.7)`);
    expect(stderr).not.toContain("Still present in the workload cluster");
    expect(stderr).toContain("was NOT deleted");
    expect(state.services.filter((service) => service.type === "LoadBalancer")).toEqual([]);
  });

  it("fails when Hetzner cannot be reached to confirm, naming the Service UIDs", async () => {
    const { code, stderr } = await drain({ HCLOUD_ENDPOINT: "http://127.0.0.1:1/v1", DRAIN_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(stderr).toContain("are gone (so the hcloud CCM reported their load balancers deleted), but Hetzner could not be reached to confirm");
    expect(stderr).toContain("ECONNREFUSED");
    expect(stderr).toContain(`Load balancer Service UIDs: ${uidA}, ${uidB}`);
    expect(stderr).toContain("CAPI_FLEET_LB_DRAIN=skip pulumi destroy");
    expect(state.services.filter((service) => service.type === "LoadBalancer")).toEqual([]);
  });

  it("fails fast when Hetzner rejects the tenant token", async () => {
    const { code, stderr, elapsedMs } = await drain({ HCLOUD_TOKEN: "not-the-tenant-token" });
    expect(code).toBe(1);
    expect(elapsedMs).toBeLessThan(4000);
    expect(stderr).toContain("tenant token rejected");
    expect(stderr).toContain("HTTP 401: unauthorized: unable to authenticate");
    expect(stderr).not.toContain("not-the-tenant-token");
  });

  it("trusts the vanished Services when no HCLOUD_TOKEN is given", async () => {
    const { code, stderr } = await drain({ HCLOUD_TOKEN: "" });
    expect(code).toBe(0);
    expect(stderr).toContain("HCLOUD_TOKEN not set: not confirming at Hetzner");
    expect(state.hetznerSelectors).toEqual([]);
  });

  it("has nothing to drain when the kubeconfig Secret does not exist", async () => {
    state.secret = false;
    const { code, stderr } = await drain();
    expect(code).toBe(0);
    expect(stderr).toContain("Secret tenant-a/alpha-kubeconfig does not exist: the control plane of cluster tenant-a/alpha never came up");
    expect(stderr).toContain("nothing to drain");
    expect(state.workloadRequests).toBe(0);
  });

  it("uses WORKLOAD_KUBECONFIG when the management API cannot be reached", async () => {
    const unreachable = managementKubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, "server: https://127.0.0.1:1");
    const { code, stderr } = await drain({ MANAGEMENT_KUBECONFIG: unreachable, WORKLOAD_KUBECONFIG: workloadKubeconfig });
    expect(stderr).toContain("using the stored workload kubeconfig (WORKLOAD_KUBECONFIG)");
    expect(code).toBe(0);
    expect(state.managementRequests).toBe(0);
    expect(state.deletes).toHaveLength(2);
  });

  it("fails, having deleted nothing, when the workload API cannot be reached", async () => {
    state.secretKubeconfig = tokenKubeconfig("https://127.0.0.1:1");
    const { code, stderr } = await drain({ DRAIN_WAIT_SECONDS: "1" });
    expect(code).toBe(1);
    expect(stderr).toContain("the workload API of cluster tenant-a/alpha at https://127.0.0.1:1 could not be reached");
    expect(stderr).toContain("Nothing was deleted in Hetzner by this step");
    expect(stderr).toContain("hcloud load-balancer list --selector 'hcloud-ccm/service-uid'");
    expect(stderr).toContain("CAPI_FLEET_LB_DRAIN=skip pulumi destroy");
  });

  it("skips with a loud warning when CAPI_FLEET_LB_DRAIN=skip", async () => {
    const { code, stderr } = await drain({ CAPI_FLEET_LB_DRAIN: "skip" });
    expect(code).toBe(0);
    expect(stderr).toContain("WARNING: CAPI_FLEET_LB_DRAIN=skip");
    expect(stderr).toContain("may be ORPHANED");
    expect(state.managementRequests + state.workloadRequests + state.deletes.length).toBe(0);
  });

  it("refuses to start without its environment", async () => {
    const { code, stderr } = await runScript({ MANAGEMENT_KUBECONFIG: managementKubeconfig });
    expect(code).toBe(2);
    expect(stderr).toContain("missing environment variables: TENANT_NAMESPACE, TENANT_CLUSTER");
  });

  it("logs no token, key or certificate, even when it fails (negative control for the check)", async () => {
    state.releaseAfterPolls = Infinity;
    const run = await runScript({ ...baseEnv(), DRAIN_WAIT_SECONDS: "1" });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    for (const material of secretMaterial()) {
      expect(run.stderr).not.toContain(material);
    }
    // The check would see a credential if one were logged.
    const leaked = `${run.stderr}\nAuthorization: Bearer ${workloadToken}`;
    expect(secretMaterial().some((material) => leaked.includes(material))).toBe(true);
  });
});
