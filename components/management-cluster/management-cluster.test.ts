import fc from "fast-check";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { cidrContains, mustParseCidr } from "../../infra/model/config/cidr";
import { planManagementAddresses } from "./address-plan";
import { managementFirewallRules } from "../../infra/model/management/firewall-rules";
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../tests/support/stack-files";
import { k3sServerConfig, k3sTlsDirectory, renderK3sCloudInit, serverBootFiles, type K3sServerSpec } from "./k3s";

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

describe("management firewall rules", () => {
  const rules = managementFirewallRules(["203.0.113.0/24", "2001:db8::/32"], "10.0.0.0/16");

  it("opens SSH and the API only to the admin networks", () => {
    const publicPorts = rules.filter((rule) => !rule.sourceIps.includes("10.0.0.0/16"));
    expect(publicPorts.map((rule) => [rule.protocol, rule.port])).toEqual([
      ["tcp", "22"],
      ["tcp", "6443"],
    ]);
    for (const rule of publicPorts) {
      expect(rule.sourceIps).toEqual(["203.0.113.0/24", "2001:db8::/32"]);
    }
  });

  it("allows everything inside the private network and never 0.0.0.0/0", () => {
    expect(rules.filter((rule) => rule.sourceIps.includes("10.0.0.0/16")).map((rule) => rule.protocol)).toEqual(["tcp", "udp", "icmp"]);
    expect(rules.flatMap((rule) => rule.sourceIps)).not.toContain("0.0.0.0/0");
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
