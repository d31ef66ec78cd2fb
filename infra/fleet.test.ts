import { X509Certificate, createPrivateKey } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { byType, one, runStack, useExistingCluster } from "../tests/support/fleet-run";
import { settle } from "../tests/support/pulumi-mocks";
import { countByType, installRecordingMocks, valueOf, type Registration } from "../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig } from "../tests/support/stack-files";
import { loadFleetConfig } from "./config";
import type { FleetOutputs } from "./fleet";
import { catalog } from "./model/versions/catalog";
import { componentTypes } from "./model/contract/component-types";

const isProtected = (resource: pulumi.Resource) => (resource as unknown as { __protect?: boolean }).__protect === true;

function expectedGraph(servers: number, backups: boolean): Record<string, number> {
  return {
    // management.backups: the Secret k3s reads its snapshot upload settings from (etcd-snapshots.test.ts).
    ...(backups ? { "kubernetes:core/v1:Secret": 1 } : {}),
    [componentTypes.managementCluster]: 1,
    "pulumi:providers:hcloud": 1,
    "pulumi:providers:kubernetes": 1,
    "hcloud:index/network:Network": 1,
    "hcloud:index/networkSubnet:NetworkSubnet": 1,
    "hcloud:index/firewall:Firewall": 1,
    "hcloud:index/placementGroup:PlacementGroup": 1,
    "hcloud:index/sshKey:SshKey": 1,
    "hcloud:index/loadBalancer:LoadBalancer": 1,
    "hcloud:index/loadBalancerNetwork:LoadBalancerNetwork": 1,
    "hcloud:index/loadBalancerService:LoadBalancerService": 1,
    "hcloud:index/loadBalancerTarget:LoadBalancerTarget": servers,
    "hcloud:index/server:Server": servers,
    "command:local:Command": 3,
  };
}

describe.each([
  { stack: "dev", servers: 1, protection: false, location: "fsn1", backups: false },
  { stack: "prod", servers: 3, protection: true, location: "nbg1", backups: true },
])("the $stack stack", ({ stack, servers, protection, location, backups }) => {
  let registrations: Registration[];
  let outputs: FleetOutputs;

  beforeAll(async () => {
    ({ registrations, outputs } = await runStack(stack));
  });

  it("registers the management cluster graph with the expected types and counts", () => {
    // The platform on top (cluster-api, CAREN, Flux …), the tenants, the fleet-wide
    // DeployedState (for the policy pack) and the k3s upgrades have their own tests.
    const managementOnly = registrations.filter(
      (r) => !["capi-fleet:platform:", "capi-fleet:tenants:", "capi-fleet:fleet:", componentTypes.k3sUpgrades].some((prefix) => r.urn.includes(prefix)),
    );
    expect(countByType(managementOnly)).toEqual(expectedGraph(servers, backups));
  });

  it("names hcloud resources after the fleet", () => {
    const names = byType(registrations, "hcloud:index/server:Server").map((r) => r.inputs.name);
    expect(names).toEqual(Array.from({ length: servers }, (_, i) => `capi-fleet-${stack}-mgmt-${i + 1}`));
    expect(one(registrations, "hcloud:index/loadBalancer:LoadBalancer").inputs).toMatchObject({
      name: `capi-fleet-${stack}-mgmt-api`,
      loadBalancerType: "lb11",
      location,
    });
  });

  it("opens SSH and 6443 only to the configured admin networks", () => {
    const management = JSON.parse(readStackConfig(stack).values["capi-fleet:management"]!) as { adminCidrs: string[] };
    const adminCidrs = management.adminCidrs;
    const rules = one(registrations, "hcloud:index/firewall:Firewall", "management-firewall").inputs.rules as { port?: string; sourceIps: string[] }[];
    for (const port of ["22", "6443"]) {
      expect(rules.filter((rule) => rule.port === port).map((rule) => rule.sourceIps)).toEqual([adminCidrs]);
    }
    expect(rules.flatMap((rule) => rule.sourceIps)).not.toContain("0.0.0.0/0");
    expect(rules.flatMap((rule) => rule.sourceIps)).not.toContain("::/0");
  });

  it("attaches every server to the firewall, the placement group and the private network", () => {
    for (const server of byType(registrations, "hcloud:index/server:Server")) {
      expect(server.inputs.firewallIds).toHaveLength(1);
      expect(server.inputs.placementGroupId).toEqual(expect.any(Number));
      expect(server.inputs.networks).toEqual([{ networkId: expect.any(Number), ip: expect.stringMatching(/^10\.0\.1\.1[1-3]$/) }]);
      expect(server.inputs.image).toBe(catalog.managementImage);
    }
  });

  it("balances the API over the servers' private IPs on TCP 6443", () => {
    const targets = byType(registrations, "hcloud:index/loadBalancerTarget:LoadBalancerTarget");
    expect(targets).toHaveLength(servers);
    for (const target of targets) {
      expect(target.inputs).toMatchObject({ type: "server", usePrivateIp: true });
    }
    expect(one(registrations, "hcloud:index/loadBalancerService:LoadBalancerService").inputs).toMatchObject({
      protocol: "tcp",
      listenPort: 6443,
      destinationPort: 6443,
    });
    expect(one(registrations, "hcloud:index/loadBalancerNetwork:LoadBalancerNetwork").inputs).toMatchObject({ ip: "10.0.1.10" });
  });

  it("boots the first server with cluster-init and joins the rest to it", () => {
    const configs = byType(registrations, "hcloud:index/server:Server").map((server) => {
      const userData = parse(server.inputs.userData as string) as { write_files: { path: string; content: string }[] };
      return parse(userData.write_files.find((file) => file.path === "/etc/rancher/k3s/config.yaml")!.content) as Record<string, unknown>;
    });
    expect(configs[0]).toMatchObject({ "cluster-init": true, "tls-san": ["203.0.113.10", "10.0.1.10"], "node-ip": "10.0.1.11" });
    for (const config of configs.slice(1)) {
      expect(config).toMatchObject({ server: "https://10.0.1.11:6443" });
    }
    expect(new Set(configs.map((config) => config.token)).size).toBe(1);
  });

  it("keeps the kubeconfig, the user data and the tokens secret", async () => {
    expect(await pulumi.isSecret(outputs.managementKubeconfig)).toBe(true);
    for (const server of byType(registrations, "hcloud:index/server:Server")) {
      expect(server.secretInputs).toContain("userData");
    }
    const kubeconfig = parse(await valueOf(outputs.managementKubeconfig)) as { clusters: { cluster: { server: string } }[] };
    expect(kubeconfig.clusters[0]!.cluster.server).toBe("https://203.0.113.10:6443");
    expect(await valueOf(outputs.managementApiEndpoint)).toBe("https://203.0.113.10:6443");
    const provider = one(registrations, "pulumi:providers:hcloud", "management-hcloud");
    expect(provider.inputs.token).toBe(fakeHcloudToken("hcloud:token"));
    expect(provider.secretInputs).toContain("token");
    expect(one(registrations, "pulumi:providers:kubernetes").secretInputs).toContain("kubeconfig");
    const commands = byType(registrations, "command:local:Command");
    expect(commands.find((c) => c.name === "management-wait-for-api")?.secretInputs).toContain("environment");
    expect(commands.find((c) => c.name === "management-admin-credentials")?.secretInputs).toContain("environment");
  });

  it("issues a kubeconfig that trusts the k3s server CA and authenticates as system:masters", async () => {
    type Kubeconfig = {
      clusters: { cluster: { "certificate-authority-data": string } }[];
      users: { user: { "client-certificate-data": string; "client-key-data": string } }[];
    };
    const kubeconfig = parse(await valueOf(outputs.managementKubeconfig)) as Kubeconfig;
    const decode = (data: string) => Buffer.from(data, "base64").toString("utf8");
    const firstServer = byType(registrations, "hcloud:index/server:Server")[0]!;
    const files = (parse(firstServer.inputs.userData as string) as { write_files: { path: string; content: string }[] }).write_files;
    const file = (name: string) => files.find((f) => f.path.endsWith(`/server/tls/${name}`))!.content;

    expect(decode(kubeconfig.clusters[0]!.cluster["certificate-authority-data"])).toBe(file("server-ca.crt"));
    const admin = new X509Certificate(decode(kubeconfig.users[0]!.user["client-certificate-data"]));
    expect(admin.subject).toContain("O=system:masters");
    expect(admin.verify(new X509Certificate(file("client-ca.crt")).publicKey)).toBe(true);
    expect(admin.checkPrivateKey(createPrivateKey(decode(kubeconfig.users[0]!.user["client-key-data"])))).toBe(true);
    const serverCa = new X509Certificate(file("server-ca.crt"));
    expect(serverCa.ca && serverCa.checkPrivateKey(createPrivateKey(file("server-ca.key")))).toBe(true);
    expect(new Date(await valueOf(outputs.managementAdminCertificateNotAfter) as string).getTime()).toBeGreaterThan(Date.now());
  });

  it("logs only stderr of the commands that print secrets", () => {
    for (const name of ["management-pki", "management-admin-credentials"]) {
      expect(byType(registrations, "command:local:Command").find((c) => c.name === name)?.inputs.logging).toBe("stderr");
    }
  });

  it("gives the Kubernetes provider a stable cluster identifier", () => {
    expect(one(registrations, "pulumi:providers:kubernetes").inputs).toMatchObject({ clusterIdentifier: `capi-fleet-${stack}-management` });
  });

  it(`sets deletion protection to ${protection} on servers, network and API load balancer`, () => {
    for (const server of byType(registrations, "hcloud:index/server:Server")) {
      expect(server.inputs).toMatchObject({ deleteProtection: protection, rebuildProtection: protection });
    }
    expect(one(registrations, "hcloud:index/loadBalancer:LoadBalancer").inputs.deleteProtection).toBe(protection);
    expect(one(registrations, "hcloud:index/network:Network").inputs.deleteProtection).toBe(protection);
    const { network, loadBalancer, servers: serverResources } = outputs.managementCluster.hcloudResources!;
    for (const resource of [network, loadBalancer, ...serverResources]) {
      expect(isProtected(resource)).toBe(protection);
    }
  });

  it("exposes the servers' addresses", async () => {
    const addresses = await valueOf(outputs.managementServers);
    expect(addresses.map((address) => address.privateIp)).toEqual(["10.0.1.11", "10.0.1.12", "10.0.1.13"].slice(0, servers));
  });
});

describe("existing mode", () => {
  let registrations: Registration[];
  let outputs: FleetOutputs;

  beforeAll(async () => {
    ({ registrations, outputs } = await runStack("dev", useExistingCluster("v1.34.6")));
  });

  it("registers no hcloud resource for the management cluster, only the Kubernetes provider", () => {
    // The tenants' firewalls live in the tenants' own Hetzner projects (tenant-firewall.test.ts).
    const managementSide = registrations.filter((r) => !r.urn.includes("capi-fleet:tenants:TenantCluster$"));
    expect(managementSide.filter((r) => r.type.startsWith("hcloud:") || r.type === "pulumi:providers:hcloud")).toEqual([]);
    expect(one(registrations, "pulumi:providers:kubernetes").inputs).toMatchObject({ clusterIdentifier: "capi-fleet-dev-management" });
  });

  it("uses the given kubeconfig as a secret and reports its endpoint", async () => {
    expect(await pulumi.isSecret(outputs.managementKubeconfig)).toBe(true);
    expect(one(registrations, "pulumi:providers:kubernetes").secretInputs).toContain("kubeconfig");
    expect(await valueOf(outputs.managementApiEndpoint)).toBe("https://mgmt.example.com:6443");
    expect(await valueOf(outputs.managementServers)).toEqual([]);
  });
});

describe("invalid config", () => {
  it("stops with the problems listed before registering anything", async () => {
    const registrations = await installRecordingMocks("capi-fleet", "dev");
    const { values, secretKeys } = readStackConfig("dev");
    values["capi-fleet:management"] = values["capi-fleet:management"]!.replace('"servers":1', '"servers":2');
    pulumi.runtime.setAllConfig(values, secretKeys);
    expect(() => loadFleetConfig()).toThrow(/management\.servers: 2 servers is not allowed/);
    await settle(registrations);
    expect(registrations).toEqual([]);
  });

  it("tells a secret set without --secret from one set with it", async () => {
    await installRecordingMocks("capi-fleet", "dev");
    const { values, secretKeys } = readStackConfig("dev");
    pulumi.runtime.setAllConfig(values, secretKeys.filter((key) => key !== "hcloud:token"));
    expect(() => loadFleetConfig()).toThrow(/hcloud:token: is stored in plain text/);
  });

  it("refuses placeholder secrets outside previews", async () => {
    await installRecordingMocks("capi-fleet", "dev", false);
    const { values, secretKeys } = readStackConfig("dev", () => "placeholder".padEnd(64, "0"));
    pulumi.runtime.setAllConfig(values, secretKeys);
    expect(() => loadFleetConfig()).toThrow(/hcloud:token: still holds the committed placeholder/);
  });

  it("accepts placeholder secrets in previews", async () => {
    await installRecordingMocks("capi-fleet", "dev", true);
    const { values, secretKeys } = readStackConfig("dev", () => "placeholder".padEnd(64, "0"));
    pulumi.runtime.setAllConfig(values, secretKeys);
    expect(loadFleetConfig().placeholderSecrets).toEqual(["hcloud:token", "tenantHcloudTokens.dev-a"]);
  });
});
