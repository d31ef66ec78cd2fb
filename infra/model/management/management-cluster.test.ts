import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { cidrContains, mustParseCidr } from "../config/cidr";
import { etcdSnapshotDropin } from "./etcd-snapshots";
import { sshKeyTypes } from "../config/fleet-config";
import { catalog } from "../versions/catalog";
import {
  etcdSnapshotDropinText,
  hetznerSshKeyFingerprint,
  k3sServerConfig,
  k3sTlsDirectory,
  managementLabels,
  managementSshKeyName,
  planManagementAddresses,
  renderK3sCloudInit,
  serverBootFiles,
  type K3sServerSpec,
} from "./management-cluster";

const caFiles = { serverCaCertPem: "SCRT", serverCaKeyPem: "SKEY", clientCaCertPem: "CCRT", clientCaKeyPem: "CKEY" };

function spec(index: number): K3sServerSpec {
  return {
    index,
    k3sVersion: catalog.k3s.version,
    nodeIp: `10.0.1.${11 + index}`,
    firstServerIp: "10.0.1.11",
    apiAddresses: ["203.0.113.10", "10.0.1.10"],
    token: "join-token",
    caFiles,
  };
}

interface CloudInit {
  write_files: { path: string; content: string; permissions: string }[];
  runcmd: string[][];
}

function cloudInit(index: number): CloudInit {
  const text = renderK3sCloudInit(spec(index));
  expect(text.startsWith("#cloud-config\n")).toBe(true);
  return parse(text) as CloudInit;
}

describe("k3s server config", () => {
  it("starts the cluster on the first server and joins the others over the private network", () => {
    expect(k3sServerConfig(spec(0))).toMatchObject({ "cluster-init": true });
    expect(k3sServerConfig(spec(0))).not.toHaveProperty("server");
    expect(k3sServerConfig(spec(2))).toMatchObject({ server: "https://10.0.1.11:6443" });
    expect(k3sServerConfig(spec(2))).not.toHaveProperty("cluster-init");
  });

  it("with another initServer (replacing a lost server 1), server 1 joins it and only it starts the cluster with the CA files", () => {
    // docs/operations.md, "Lost one management server": server 1's replacement must join, not start a second cluster.
    const joiningFirst = { ...spec(0), initIndex: 1, firstServerIp: "10.0.1.12" };
    const starting = { ...spec(1), initIndex: 1, firstServerIp: "10.0.1.12" };
    expect(k3sServerConfig(joiningFirst)).toMatchObject({ server: "https://10.0.1.12:6443" });
    expect(k3sServerConfig(joiningFirst)).not.toHaveProperty("cluster-init");
    expect(k3sServerConfig(starting)).toMatchObject({ "cluster-init": true });
    const tlsFiles = (s: K3sServerSpec) =>
      (parse(renderK3sCloudInit(s).replace("#cloud-config\n", "")) as CloudInit).write_files.filter((file) => file.path.startsWith(k3sTlsDirectory));
    expect(tlsFiles(joiningFirst)).toEqual([]);
    expect(tlsFiles(starting)).toHaveLength(4);
  });

  // Whether each key is a k3s flag is checked against k3s' own definitions (tests/in-the-loop/k3s-flags.test.ts);
  // here, that every server's values follow from its own spec rather than from a copied list.
  it("takes each server's addresses, API names and token from its spec", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.ipV4(), fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[0-9a-f]{8,64}$/), (index, nodeIp, apiAddresses, token) => {
        const config = k3sServerConfig({ ...spec(index), nodeIp, apiAddresses, token });
        expect([config["node-ip"], config["advertise-address"], config["tls-san"], config.token]).toEqual([nodeIp, nodeIp, apiAddresses, token]);
      }),
    );
  });

  it("encrypts Secrets at rest and keeps the kubeconfig it writes to root", () => {
    for (const index of [0, 1]) {
      expect(k3sServerConfig(spec(index))).toMatchObject({ "secrets-encryption": true, "write-kubeconfig-mode": "0600" });
    }
  });

  it("is ready for an external cloud controller and leaves LB/ingress to the platform", () => {
    expect(k3sServerConfig(spec(1))).toMatchObject({
      disable: ["servicelb", "traefik"],
      "disable-cloud-controller": true,
      "kubelet-arg": ["cloud-provider=external"],
    });
  });
});

describe("k3s cloud-init", () => {
  it("writes the config file readable by root only and installs the pinned k3s", () => {
    const document = cloudInit(0);
    const configFile = document.write_files.find((file) => file.path === "/etc/rancher/k3s/config.yaml")!;
    expect(configFile.permissions).toBe("0600");
    expect(parse(configFile.content)).toEqual(k3sServerConfig(spec(0)));
    // The etcd snapshot drop-in beside it, root only too, the same text as the stack output.
    const dropin = document.write_files.find((file) => file.path === etcdSnapshotDropin)!;
    expect([dropin.permissions, dropin.content]).toEqual(["0600", etcdSnapshotDropinText(undefined)]);
    // The boot script (tested in boot.test.ts) gets this server's private IP and the pinned k3s.
    expect(document.runcmd).toEqual([[serverBootFiles.bootScript.path, "10.0.1.11", catalog.k3s.version]]);
  });

  it("ships the boot files verbatim from boot/, scripts executable, and installs nft for the guard", () => {
    const document = cloudInit(1) as CloudInit & { packages: string[] };
    for (const file of Object.values(serverBootFiles)) {
      const written = document.write_files.find((candidate) => candidate.path === file.path)!;
      expect(written.content).toBe(readFileSync(path.join(repoRoot, file.source), "utf8"));
      expect(written.permissions).toBe(file.path.startsWith("/usr/local/sbin/") ? "0755" : "0644");
    }
    expect(document.packages).toContain("nftables");
  });

  it("stays under Hetzner's 32 KiB user-data limit", () => {
    const big = { ...spec(0), caFiles: { serverCaCertPem: "C".repeat(800), serverCaKeyPem: "K".repeat(300), clientCaCertPem: "C".repeat(800), clientCaKeyPem: "K".repeat(300) } };
    expect(Buffer.byteLength(renderK3sCloudInit(big))).toBeLessThan(32 * 1024);
  });

  it("hands the CA files to the first server only, keys with mode 0600", () => {
    const first = cloudInit(0).write_files.filter((file) => file.path.startsWith(k3sTlsDirectory));
    expect(first.map((file) => [file.path.replace(`${k3sTlsDirectory}/`, ""), file.permissions])).toEqual([
      ["server-ca.crt", "0644"],
      ["server-ca.key", "0600"],
      ["client-ca.crt", "0644"],
      ["client-ca.key", "0600"],
    ]);
    expect(cloudInit(1).write_files.filter((file) => file.path.startsWith(k3sTlsDirectory))).toEqual([]);
  });
});

describe("management address plan", () => {
  it("puts the load balancer and the servers on fixed private addresses", () => {
    expect(planManagementAddresses("10.0.1.0/24", 3)).toEqual({
      loadBalancerIp: "10.0.1.10",
      serverIps: ["10.0.1.11", "10.0.1.12", "10.0.1.13"],
    });
  });

  it("gives distinct addresses inside any subnet the config accepts", () => {
    const acceptedSubnets = fc
      .tuple(fc.integer({ min: 16, max: 28 }), fc.integer({ min: 0, max: 0xffff }))
      .map(([length, seed]) => {
        const hostBits = 32 - length;
        const network = ((0x0a000000 | (seed << 12)) >>> hostBits) << hostBits;
        return `${[24, 16, 8, 0].map((shift) => (network >>> shift) & 0xff).join(".")}/${length}`;
      });
    fc.assert(
      fc.property(acceptedSubnets, fc.constantFrom(1, 3), (subnet, servers) => {
        const plan = planManagementAddresses(subnet, servers);
        const addresses = [plan.loadBalancerIp, ...plan.serverIps];
        expect(new Set(addresses).size).toBe(servers + 1);
        for (const address of addresses) {
          expect(cidrContains(mustParseCidr(subnet), mustParseCidr(`${address}/32`))).toBe(true);
        }
      }),
    );
  });

  it("fits a /28 and refuses a subnet too small for the plan", () => {
    expect(planManagementAddresses("10.0.1.16/28", 3).serverIps).toEqual(["10.0.1.27", "10.0.1.28", "10.0.1.29"]);
    expect(() => planManagementAddresses("10.0.1.0/29", 1)).toThrow(/does not fit/);
  });
});

describe("management labels", () => {
  it("name the fleet and the management role, and tell two fleets apart", () => {
    expect(managementLabels("capi-fleet-prod")).toEqual({ "capi-fleet/fleet": "capi-fleet-prod", "capi-fleet/role": "management" });
    expect(managementLabels("a")["capi-fleet/fleet"]).not.toBe(managementLabels("b")["capi-fleet/fleet"]);
  });
});

// The management SSH key's hcloud name. Rotating the key through the program (create before
// delete, servers kept) is checked under mocks in components/management-cluster/ssh-key-rotation.test.ts.

const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
/** An OpenSSH ed25519 public key line with these 32 key bytes. */
const ed25519Line = (raw: Uint8Array, comment = "ops@example") =>
  `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(Buffer.from(raw))]).toString("base64")} ${comment}`;
/** An OpenSSH ed25519 public key line for a fresh key pair. */
const newKeyLine = (comment?: string) => ed25519Line(generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32), comment);

describe("the key's name", () => {
  it("carries the fingerprint Hetzner lists, which is OpenSSH's MD5 fingerprint of the key, for every key type the config takes", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "capi-fleet-ssh-key-"));
    try {
      const generated = [["ed25519"], ["ecdsa", "256"], ["ecdsa", "384"], ["ecdsa", "521"], ["rsa", "2048"]].map(([type, bits], index) => {
        const file = path.join(dir, `key-${index}`);
        const made = spawnSync("ssh-keygen", ["-q", "-t", type!, ...(bits ? ["-b", bits] : []), "-N", "", "-C", "ops@example", "-f", file], { encoding: "utf8" });
        if (made.error || made.status !== 0) throw new Error(`ssh-keygen (OpenSSH) is needed to check the fingerprint: ${made.error?.message ?? made.stderr}`);
        const line = readFileSync(`${file}.pub`, "utf8");
        // openssh-portable: ssh-keygen.c, `-E md5` prints "MD5:" and sshkey_fingerprint's colon hex of the key blob.
        const printed = spawnSync("ssh-keygen", ["-l", "-E", "md5", "-f", `${file}.pub`], { encoding: "utf8" }).stdout;
        return { line, openssh: /MD5:([0-9a-f:]+)/.exec(printed)?.[1] };
      });
      expect(new Set(generated.map(({ line }) => line.split(" ")[0]))).toEqual(new Set(sshKeyTypes));
      for (const { line, openssh } of generated) {
        expect(openssh).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
        expect(hetznerSshKeyFingerprint(line)).toBe(openssh);
        expect(managementSshKeyName("capi-fleet-prod", line)).toBe(`capi-fleet-prod-mgmt-${openssh!.replaceAll(":", "").slice(0, 16)}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("differs for any two key pairs, so a rotation's new key never takes the old key's name", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
        fc.pre(Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0);
        expect(managementSshKeyName("f", ed25519Line(a))).not.toBe(managementSshKeyName("f", ed25519Line(b)));
      }),
    );
  });

  it("stays the same for the same key pair: another comment or spacing renames nothing", () => {
    const line = newKeyLine("old comment");
    const [type, blob] = line.split(" ");
    for (const variant of [`${type} ${blob} new comment`, `  ${type}\t${blob}\n`, `${type}  \t ${blob}   other`]) {
      expect(managementSshKeyName("f", variant)).toBe(managementSshKeyName("f", line));
    }
  });
});
