import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { buildKubeconfig, kubeconfigServer } from "./kubeconfig";

// kubeconfigServer (what config validation and the scripts read from an `existing` cluster's
// kubeconfig) against the pinned kubectl's own reading of the same file: `kubectl config view
// --minify --raw` resolves the current context's cluster and user as every client does, or fails.
// The program accepts a kubeconfig exactly when kubectl resolves an https:// server, and calls its
// credentials inline exactly when kubectl's user carries a client certificate and key or a token.

/** The pinned kubectl (tools/kube-apiserver-toolchain builds it once, cached outside the repo). */
let kubectl: string;
beforeAll(() => {
  // Through bash: a copy of the repository (a mutation-testing sandbox) may not keep the executable bit.
  const paths = spawnSync("bash", [path.join(repoRoot, "tools", "kube-apiserver-toolchain"), "paths"], { cwd: repoRoot, encoding: "utf8", timeout: 40 * 60_000 });
  const found = /^KUBECTL=(.+)$/m.exec(paths.stdout)?.[1];
  if (!found) throw new Error(`tools/kube-apiserver-toolchain paths printed no KUBECTL (exit ${paths.status}): ${paths.stderr.slice(-2000)}`);
  kubectl = found;
}, 45 * 60_000);

const dir = mkdtempSync(path.join(tmpdir(), "kubeconfig-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

type Expected = { server: string; credentials: "inline" | "other" } | { problem: true };

/** What kubectl makes of a kubeconfig, in kubeconfigServer's terms. */
function kubectlReading(name: string, text: string): Expected {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  let json: { clusters?: { cluster?: { server?: string } }[]; users?: { user?: Record<string, unknown> }[] };
  try {
    json = JSON.parse(execFileSync(kubectl, ["--kubeconfig", file, "config", "view", "--minify", "--raw", "-o", "json"], { encoding: "utf8", stdio: "pipe" })) as typeof json;
  } catch {
    return { problem: true };
  }
  const server = json.clusters?.[0]?.cluster?.server;
  if (typeof server !== "string" || !server.startsWith("https://")) return { problem: true };
  const user = json.users?.[0]?.user ?? {};
  const inline = (typeof user["client-certificate-data"] === "string" && typeof user["client-key-data"] === "string") || typeof user.token === "string";
  return { server, credentials: inline ? "inline" : "other" };
}

const ours = (text: string): Expected => {
  const result = kubeconfigServer(text);
  return "problem" in result ? { problem: true } : result;
};

/** A kubeconfig with one context `c` → cluster `k`, user `u`, changed by `edit`. */
function kubeconfig(edit: (document: Record<string, unknown>) => void = () => undefined): string {
  const document: Record<string, unknown> = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "k", cluster: { server: "https://203.0.113.10:6443" } }],
    users: [{ name: "u", user: { token: "t0ken" } }],
    contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
    "current-context": "c",
  };
  edit(document);
  return stringify(document);
}

describe("kubeconfigServer, against kubectl's reading of the same kubeconfig", () => {
  it("agrees on every case: the program's own, tokens, other credentials, and each way a kubeconfig is broken", () => {
    const cases: Record<string, string> = {
      "the program's client-certificate kubeconfig": buildKubeconfig({
        name: "fleet",
        server: "https://198.51.100.7:6443",
        certificateAuthorityPem: "CA",
        clientCertificatePem: "CERT",
        clientKeyPem: "KEY",
      }),
      "a token": kubeconfig(),
      "an exec plugin": kubeconfig((d) => (d.users = [{ name: "u", user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "get-token" } } }])),
      "a certificate without its key": kubeconfig((d) => (d.users = [{ name: "u", user: { "client-certificate-data": "Q0VSVA==" } }])),
      "a context whose user is missing": kubeconfig((d) => (d.users = [{ name: "other", user: { token: "t" } }])),
      "a second context, the current one pointing elsewhere": kubeconfig((d) => {
        d.clusters = [...(d.clusters as object[]), { name: "k2", cluster: { server: "https://192.0.2.2:6443" } }];
        d.contexts = [...(d.contexts as object[]), { name: "c2", context: { cluster: "k2", user: "u" } }];
        d["current-context"] = "c2";
      }),
      "a current-context that names no context": kubeconfig((d) => (d["current-context"] = "missing")),
      "no current-context": kubeconfig((d) => delete d["current-context"]),
      "a context whose cluster is missing": kubeconfig((d) => (d.contexts = [{ name: "c", context: { cluster: "nowhere", user: "u" } }])),
      "an http:// server": kubeconfig((d) => (d.clusters = [{ name: "k", cluster: { server: "http://203.0.113.10:8080" } }])),
      "a cluster without a server": kubeconfig((d) => (d.clusters = [{ name: "k", cluster: {} }])),
      "a key without its certificate": kubeconfig((d) => (d.users = [{ name: "u", user: { "client-key-data": "S0VZ" } }])),
      "a context without a user": kubeconfig((d) => (d.contexts = [{ name: "c", context: { cluster: "k" } }])),
      "a user entry without user": kubeconfig((d) => (d.users = [{ name: "u" }])),
      "no users list": kubeconfig((d) => delete d.users),
      "no contexts list": kubeconfig((d) => delete d.contexts),
      "a context entry without context": kubeconfig((d) => (d.contexts = [{ name: "c" }])),
      "a cluster entry without cluster": kubeconfig((d) => (d.clusters = [{ name: "k" }])),
      "an empty file": "",
      "not YAML": "clusters: [",
      "a path instead of the contents": "/home/me/.kube/config",
      "a list instead of a document": "- a\n- b\n",
    };
    // The program's own kubeconfig is one kubectl resolves, with the credentials inline.
    expect(kubectlReading("program", cases["the program's client-certificate kubeconfig"]!)).toEqual({ server: "https://198.51.100.7:6443", credentials: "inline" });
    const disagreements = Object.entries(cases).filter(([name, text]) => JSON.stringify(ours(text)) !== JSON.stringify(kubectlReading(name.replace(/\W+/g, "-"), text)));
    expect(disagreements.map(([name, text]) => `${name}: ours ${JSON.stringify(ours(text))}`)).toEqual([]);
    // Both kinds of outcome occur, so the comparison can fail either way.
    const outcomes = Object.values(cases).map((text) => {
      const outcome = ours(text);
      return "problem" in outcome ? "problem" : outcome.credentials;
    });
    expect(new Set(outcomes)).toEqual(new Set(["problem", "inline", "other"]));
  });
});

describe("kubeconfigServer's problems", () => {
  it("say what is wrong, differently per cause, and quote nothing of the content (it holds credentials)", () => {
    const secret = "s3cr3t-t0ken-value";
    const broken: Record<string, string> = {
      "not YAML": `users: [{name: u, user: {token: ${secret}}`,
      "no clusters list": `users: [{name: u, user: {token: ${secret}}}]`,
      "no current context": kubeconfig((d) => {
        d.users = [{ name: "u", user: { token: secret } }];
        d["current-context"] = "missing";
      }),
      "an http:// server": kubeconfig((d) => {
        d.users = [{ name: "u", user: { token: secret } }];
        d.clusters = [{ name: "k", cluster: { server: `http://${secret}.example:8080` } }];
      }),
      "a missing user": kubeconfig((d) => (d.users = [{ name: "other", user: { token: secret } }])),
    };
    const problems = Object.entries(broken).map(([name, text]) => {
      const result = kubeconfigServer(text);
      if (!("problem" in result)) throw new Error(`${name}: accepted`);
      return result.problem;
    });
    expect(problems.filter((problem) => problem.trim().length < 10 || problem.includes(secret))).toEqual([]);
    expect(new Set(problems).size).toBe(problems.length);
  });
});
