import * as command from "@pulumi/command";
import * as hcloud from "@pulumi/hcloud";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { EtcdBackupSettings, ExistingManagementSettings, HetznerManagementSettings } from "../../infra/model/config/fleet-config";
import { buildKubeconfig } from "../../infra/model/management/kubeconfig";
import { kubernetesApiPort, managementFirewallRules } from "../../infra/model/management/firewall-rules";
import { etcdS3ConfigSecret, etcdS3CredentialKeys, etcdS3SecretSettings } from "../../infra/model/management/etcd-snapshots";
import {
  etcdSnapshotDropinText,
  managementLabels,
  managementSshKeyName,
  planManagementAddresses,
  renderK3sCloudInit,
} from "../../infra/model/management/management-cluster";
import { createManagementPki } from "./pki";
import { localCommandDir } from "../local-command-dir";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import { catalog } from "../../infra/model/versions/catalog";
import { DeclaredFacts } from "../policy-facts";
import { componentTypes } from "../../infra/model/contract/component-types";
import { networkZoneOf } from "../../infra/model/facts/hetzner";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** Arguments of {@link ManagementCluster}. */
export interface ManagementClusterArgs {
  /**
   * Prefix of every hcloud resource name and the Kubernetes provider's cluster
   * identifier, e.g. "capi-fleet-dev". Changing it replaces the cluster.
   */
  fleetName: string;
  /** Validated `management` settings from the stack config (see infra/model/config/fleet-config.ts). */
  settings: HetznerManagementSettings | ExistingManagementSettings;
  /** `existing` mode: how to reach the cluster. Ignored in `hetzner` mode. */
  existingCluster?: {
    /** Kubeconfig contents, as a Pulumi secret. */
    kubeconfig: pulumi.Input<string>;
    /** API server URL of the kubeconfig's current context (validated with the config). */
    apiServerUrl: string;
  };
  /** `hetzner` mode: provider authenticated for the management cluster's Hetzner project. */
  hcloudProvider?: hcloud.Provider;
  /** `hetzner` mode with `backups`: the Object Storage key pair for the etcd snapshots, as one Pulumi secret. */
  etcdS3Credentials?: pulumi.Input<{ accessKey: string; secretKey: string }>;
}

/** Public and private address of one k3s server. */
export interface ManagementServerAddress {
  name: string;
  publicIpv4: string;
  privateIp: string;
}

/**
 * The management cluster: k3s on hcloud servers (mode `hetzner`), or an existing cluster
 * reached through its kubeconfig (mode `existing`). Either way it exposes one
 * Kubernetes provider with a stable cluster identifier, so later components never get
 * replaced because a kubeconfig was re-rendered.
 */
export class ManagementCluster extends pulumi.ComponentResource {
  /** Admin kubeconfig (secret). */
  public readonly kubeconfig: pulumi.Output<string>;
  /** Kubernetes API URL, e.g. https://203.0.113.10:6443. */
  public readonly apiEndpoint: pulumi.Output<string>;
  /** k3s servers (empty in `existing` mode). */
  public readonly serverAddresses: pulumi.Output<ManagementServerAddress[]>;
  /** hcloud network id (undefined in `existing` mode). */
  public readonly networkId: pulumi.Output<string | undefined>;
  /** When the admin client certificate expires (undefined in `existing` mode). */
  public readonly adminCertificateNotAfter: pulumi.Output<string | undefined>;
  /** Provider for everything installed on the management cluster. */
  public readonly provider: k8s.Provider;
  /** The hcloud resources (`hetzner` mode only), for callers that attach more to them. */
  public readonly hcloudResources: HcloudResources | undefined;
  /**
   * The k3s config drop-in with the etcd snapshot settings every server gets at creation
   * (undefined in `existing` mode); docs/operations.md applies it to older servers.
   */
  public readonly etcdSnapshotConfig: pulumi.Output<string | undefined>;
  /** Where the snapshots go (`endpoint`, `region`, `bucket`, `folder`; no keys), undefined without backups: what a restore needs. */
  public readonly etcdSnapshotStore: pulumi.Output<Record<string, string> | undefined>;
  /** Each server's type as its state holds it (undefined in `existing` mode); the next run compares `serverType` with it. */
  public readonly serverTypes: pulumi.Output<Record<string, string> | undefined>;

  constructor(name: string, args: ManagementClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super(componentTypes.managementCluster, name, args, opts);
    const built =
      args.settings.mode === "hetzner"
        ? createHetznerManagementCluster(name, args.fleetName, args.settings, args.hcloudProvider, this, args.etcdS3Credentials)
        : useExistingCluster(name, args.fleetName, args.existingCluster, this, args.settings.certManager);
    this.kubeconfig = pulumi.secret(built.kubeconfig);
    this.apiEndpoint = built.apiEndpoint;
    this.serverAddresses = built.serverAddresses;
    this.networkId = built.networkId;
    this.adminCertificateNotAfter = built.adminCertificateNotAfter;
    this.provider = built.provider;
    this.hcloudResources = built.hcloudResources;
    this.serverTypes = built.serverTypes;
    const hetzner = args.settings.mode === "hetzner" ? args.settings : undefined;
    this.etcdSnapshotConfig = pulumi.output(hetzner ? etcdSnapshotDropinText(hetzner.backups) : undefined);
    this.etcdSnapshotStore = pulumi.output(
      hetzner?.backups ? etcdS3SecretSettings(hetzner.backups, hetzner.location, args.fleetName, hetzner.servers) : undefined,
    );
    this.registerOutputs({
      ...(built.declared?.outputs() ?? {}),
      etcdSnapshotConfig: this.etcdSnapshotConfig,
      etcdSnapshotStore: this.etcdSnapshotStore,
      kubeconfig: this.kubeconfig,
      apiEndpoint: this.apiEndpoint,
      serverAddresses: this.serverAddresses,
      networkId: this.networkId,
      adminCertificateNotAfter: this.adminCertificateNotAfter,
      serverTypes: this.serverTypes,
    });
  }
}

/** Handles on the management cluster's hcloud resources. */
export interface HcloudResources {
  network: hcloud.Network;
  firewall: hcloud.Firewall;
  loadBalancer: hcloud.LoadBalancer;
  servers: hcloud.Server[];
}

interface BuiltCluster {
  hcloudResources?: HcloudResources;
  /** What the billed hcloud resources were created with, for the pack's budget rule (`hetzner` mode). */
  declared?: DeclaredFacts;
  kubeconfig: pulumi.Output<string>;
  apiEndpoint: pulumi.Output<string>;
  serverAddresses: pulumi.Output<ManagementServerAddress[]>;
  networkId: pulumi.Output<string | undefined>;
  adminCertificateNotAfter: pulumi.Output<string | undefined>;
  serverTypes: pulumi.Output<Record<string, string> | undefined>;
  provider: k8s.Provider;
}

/**
 * `existing` mode: a provider, after a preflight that stops `up` before anything in the cluster
 * changes when the cluster runs a cert-manager the fleet does not own and would install over
 * (existing-cluster-preflight.mjs says why), or none although `certManager` is `existing`.
 */
export function useExistingCluster(
  name: string,
  fleetName: string,
  existing: ManagementClusterArgs["existingCluster"],
  parent: pulumi.Resource,
  certManager: ExistingManagementSettings["certManager"] = "install",
): BuiltCluster {
  if (!existing) {
    throw new Error("ManagementCluster: existing mode needs args.existingCluster");
  }
  const kubeconfig = pulumi.secret(existing.kubeconfig);
  const preflight = new command.local.Command(
    `${name}-preflight`,
    {
      create: `node ${scriptEntryPoints.existingClusterPreflight}`,
      dir: localCommandDir(),
      environment: pulumi.secret(
        kubeconfig.apply((managementKubeconfig) => ({
          MANAGEMENT_KUBECONFIG: managementKubeconfig,
          CERT_MANAGER: certManager,
          CERT_MANAGER_RELEASE: catalog.certManager.chart.chart,
          CERT_MANAGER_NAMESPACE: platformNamespaces.certManager,
        })),
      ),
      logging: command.local.Logging.Stderr,
    },
    { parent },
  );
  const provider = new k8s.Provider(`${name}-k8s`, { kubeconfig, clusterIdentifier: `${fleetName}-management` }, { parent, dependsOn: [preflight] });
  return {
    kubeconfig,
    apiEndpoint: pulumi.output(existing.apiServerUrl),
    serverAddresses: pulumi.output([]),
    networkId: pulumi.output(undefined),
    adminCertificateNotAfter: pulumi.output(undefined),
    serverTypes: pulumi.output(undefined),
    provider,
  };
}

/** `hetzner` mode: network, firewall, servers, API load balancer, PKI and provider. */
export function createHetznerManagementCluster(
  name: string,
  fleetName: string,
  settings: HetznerManagementSettings,
  hcloudProvider: hcloud.Provider | undefined,
  parent: pulumi.Resource,
  etcdS3Credentials?: ManagementClusterArgs["etcdS3Credentials"],
): BuiltCluster {
  const labels = managementLabels(fleetName);
  const protect = settings.deletionProtection;
  const hetznerProtection = { deleteProtection: settings.deletionProtection };
  const child = { parent, ...(hcloudProvider ? { provider: hcloudProvider } : {}) };
  const plan = planManagementAddresses(settings.network.subnetCidr, settings.servers);
  const initIndex = settings.initServer - 1;
  const firstServerIp = plan.serverIps[initIndex];
  if (firstServerIp === undefined) {
    throw new Error("ManagementCluster: the address plan has no servers");
  }

  const network = new hcloud.Network(
    `${name}-network`,
    { name: `${fleetName}-mgmt`, ipRange: settings.network.cidr, labels, ...hetznerProtection },
    { ...child, protect },
  );
  const networkId = network.id.apply(Number);
  const subnet = new hcloud.NetworkSubnet(
    `${name}-subnet`,
    { networkId, type: "cloud", networkZone: networkZoneOf[settings.location], ipRange: settings.network.subnetCidr },
    child,
  );
  const firewall = new hcloud.Firewall(
    `${name}-firewall`,
    {
      name: `${fleetName}-mgmt`,
      labels,
      rules: managementFirewallRules(settings.adminCidrs, settings.network.cidr).map((rule) => ({
        ...rule,
        sourceIps: [...rule.sourceIps],
      })),
    },
    child,
  );
  const placementGroup = new hcloud.PlacementGroup(`${name}-placement`, { name: `${fleetName}-mgmt`, type: "spread", labels }, child);
  const sshKey = new hcloud.SshKey(
    `${name}-ssh`,
    { name: managementSshKeyName(fleetName, settings.sshPublicKey), publicKey: settings.sshPublicKey, labels },
    child,
  );

  // What Hetzner bills for, declared to the policy pack (its budget rule) with the values the resources get.
  const declared = new DeclaredFacts();
  const billedLoadBalancer = { loadBalancerType: settings.apiLoadBalancerType, location: settings.location };
  const loadBalancer = declared.add(
    new hcloud.LoadBalancer(`${name}-api-lb`, { name: `${fleetName}-mgmt-api`, ...billedLoadBalancer, labels, ...hetznerProtection }, { ...child, protect }),
    billedLoadBalancer,
  );
  const billedServer = { serverType: settings.serverType, location: settings.location, publicNets: [{ ipv4Enabled: true, ipv6Enabled: true }] };
  const loadBalancerId = loadBalancer.id.apply(Number);
  const loadBalancerNetwork = new hcloud.LoadBalancerNetwork(
    `${name}-api-lb-network`,
    { loadBalancerId, networkId, ip: plan.loadBalancerIp },
    { ...child, dependsOn: [subnet] },
  );
  const apiAddresses = pulumi.all([loadBalancer.ipv4, plan.loadBalancerIp]);

  const pki = createManagementPki(name, parent);

  const nodes = plan.serverIps.map((privateIp, index) => {
    const serverName = `${fleetName}-mgmt-${index + 1}`;
    const userData = pulumi.secret(
      pulumi
        .all([apiAddresses, pki.k3sToken, pki.serverCaCertPem, pki.serverCaKeyPem, pki.clientCaCertPem, pki.clientCaKeyPem])
        .apply(([addresses, tokenValue, serverCaCertPem, serverCaKeyPem, clientCaCertPem, clientCaKeyPem]) =>
          renderK3sCloudInit({
            index,
            initIndex,
            k3sVersion: settings.k3sVersion,
            nodeIp: privateIp,
            firstServerIp,
            apiAddresses: addresses,
            token: tokenValue,
            caFiles: { serverCaCertPem, serverCaKeyPem, clientCaCertPem, clientCaKeyPem },
            etcdBackups: settings.backups,
          }),
        ),
    );
    const server = new hcloud.Server(
      `${name}-server-${index + 1}`,
      {
        name: serverName,
        ...billedServer,
        image: settings.image,
        placementGroupId: placementGroup.id.apply(Number),
        firewallIds: [firewall.id.apply(Number)],
        sshKeys: [sshKey.id],
        networks: [{ networkId, ip: privateIp }],
        userData,
        labels,
        deleteProtection: settings.deletionProtection,
        rebuildProtection: settings.deletionProtection,
      },
      {
        ...child,
        protect,
        dependsOn: [subnet],
        // user data, image and keys only matter at first boot; a change must not
        // silently replace a server (and an etcd member). So a new boot script reaches only
        // servers created later; running servers get a new k3sVersion from the
        // system-upgrade-controller's Plan (components/k3s-upgrades). A new type would power off
        // every server at once (infra/model/management/management-server-type.ts): they are resized by hand.
        ignoreChanges: ["userData", "image", "sshKeys", "serverType"],
        // A replacement takes the same fixed private address, which the old server holds until deleted.
        deleteBeforeReplace: true,
      },
    );
    declared.add(server, billedServer);
    return { server, serverName, privateIp };
  });
  const servers = nodes.map((node) => node.server);

  const targets = servers.map(
    (server, index) =>
      new hcloud.LoadBalancerTarget(
        `${name}-api-lb-target-${index + 1}`,
        { type: "server", loadBalancerId, serverId: server.id.apply(Number), usePrivateIp: true },
        { ...child, dependsOn: [loadBalancerNetwork] },
      ),
  );
  const apiService = new hcloud.LoadBalancerService(
    `${name}-api-lb-service`,
    {
      loadBalancerId: loadBalancer.id,
      protocol: "tcp",
      listenPort: kubernetesApiPort,
      destinationPort: kubernetesApiPort,
      healthCheck: { protocol: "tcp", port: kubernetesApiPort, interval: 10, timeout: 5, retries: 3 },
    },
    child,
  );

  const apiEndpoint = pulumi.interpolate`https://${loadBalancer.ipv4}:${kubernetesApiPort}`;
  // One set of admin credentials feeds both the kubeconfig and the API waiter.
  const admin = pulumi.secret(
    pulumi.all([apiEndpoint, pki.serverCaCertPem, pki.adminCertPem, pki.adminKeyPem]).apply(
      ([server, certificateAuthorityPem, clientCertificatePem, clientKeyPem]) => ({
        server,
        certificateAuthorityPem,
        clientCertificatePem,
        clientKeyPem,
      }),
    ),
  );
  const kubeconfig = admin.apply((credentials) => buildKubeconfig({ name: `${fleetName}-management`, ...credentials }));

  // Blocks until the API answers through the load balancer with the admin certificate,
  // so nothing is applied to a cluster that is still booting. Runs where `pulumi up` runs.
  const apiReady = new command.local.Command(
    `${name}-wait-for-api`,
    {
      create: `node ${scriptEntryPoints.waitForKubeApi}`,
      dir: localCommandDir(),
      environment: admin.apply((credentials) => ({
        KUBE_API_SERVER: credentials.server,
        KUBE_CA_PEM: credentials.certificateAuthorityPem,
        KUBE_CLIENT_CERT_PEM: credentials.clientCertificatePem,
        KUBE_CLIENT_KEY_PEM: credentials.clientKeyPem,
      })),
      triggers: servers.map((server) => server.id),
    },
    { parent, dependsOn: [...targets, apiService] },
  );

  const provider = new k8s.Provider(
    `${name}-k8s`,
    { kubeconfig, clusterIdentifier: `${fleetName}-management` },
    { parent, dependsOn: [apiReady] },
  );

  if (settings.backups) {
    if (!etcdS3Credentials) {
      throw new Error("ManagementCluster: management.backups needs args.etcdS3Credentials");
    }
    createEtcdS3ConfigSecret(name, fleetName, settings.backups, settings, etcdS3Credentials, provider, parent);
  }

  return {
    hcloudResources: { network, firewall, loadBalancer, servers },
    declared,
    kubeconfig,
    apiEndpoint,
    serverAddresses: pulumi.all(
      nodes.map(({ server, serverName, privateIp }) => server.ipv4Address.apply((publicIpv4) => ({ name: serverName, publicIpv4, privateIp }))),
    ),
    networkId: network.id,
    adminCertificateNotAfter: pki.adminCertNotAfter,
    // From the servers' state, so after a resize by hand `pulumi up --refresh` records the new type.
    serverTypes: pulumi
      .all(nodes.map(({ server, serverName }) => server.serverType.apply((type) => [serverName, type] as const)))
      .apply((entries) => Object.fromEntries(entries)),
    provider,
  };
}

/**
 * The Secret k3s reads its snapshot upload settings from (`etcd-s3-config-secret`, named in
 * every server's config): the credentials stay Pulumi secrets and reach k3s through the API,
 * never through user data. k3s reads it at each snapshot, so a change needs no restart.
 */
function createEtcdS3ConfigSecret(
  name: string,
  fleetName: string,
  backups: EtcdBackupSettings,
  management: Pick<HetznerManagementSettings, "location" | "servers">,
  credentials: NonNullable<ManagementClusterArgs["etcdS3Credentials"]>,
  provider: k8s.Provider,
  parent: pulumi.Resource,
): k8s.core.v1.Secret {
  const stringData = pulumi.secret(
    pulumi.output(credentials).apply(({ accessKey, secretKey }) => ({
      ...etcdS3SecretSettings(backups, management.location, fleetName, management.servers),
      [etcdS3CredentialKeys.accessKey]: accessKey,
      [etcdS3CredentialKeys.secretKey]: secretKey,
    })),
  );
  return new k8s.core.v1.Secret(
    `${name}-etcd-s3`,
    {
      metadata: { ...etcdS3ConfigSecret, labels: { "app.kubernetes.io/managed-by": "capi-fleet" } },
      type: "Opaque",
      stringData,
    },
    { parent, provider },
  );
}
