import { createHash } from "node:crypto";
import { stringify } from "yaml";
import { hostAddress, mustParseCidr } from "../config/cidr";
import { k3sClusterNetworks } from "../config/fleet-config";
import type { EtcdBackupSettings } from "../config/fleet-config";
import { readShippedFile } from "../platform/shipped-file";
import { etcdSnapshotDropin, etcdSnapshotK3sConfig } from "./etcd-snapshots";
import { kubernetesApiPort } from "./firewall-rules";

/**
 * What the ManagementCluster component (components/management-cluster) builds from the stack
 * config, as plain data: the servers' private addresses, their labels and SSH key name, and
 * each k3s server's config and cloud-init user data.
 */

/** Labels on every hcloud resource, so a human can find what belongs to which fleet. */
export function managementLabels(fleetName: string): Record<string, string> {
  return { "capi-fleet/fleet": fleetName, "capi-fleet/role": "management" };
}

/** Host offsets inside the management subnet; .1 is the hcloud gateway. */
const loadBalancerHostOffset = 10;
const firstServerHostOffset = 11;

/** Fixed private addresses, so k3s join URLs and LB targets are known before servers exist. */
export interface ManagementAddressPlan {
  readonly loadBalancerIp: string;
  readonly serverIps: readonly string[];
}

/** Plans the private IPs of the API load balancer and of `serverCount` k3s servers. */
export function planManagementAddresses(subnetCidr: string, serverCount: number): ManagementAddressPlan {
  const subnet = mustParseCidr(subnetCidr);
  return {
    loadBalancerIp: hostAddress(subnet, loadBalancerHostOffset),
    serverIps: Array.from({ length: serverCount }, (_, index) => hostAddress(subnet, firstServerHostOffset + index)),
  };
}

/**
 * The fingerprint Hetzner gives an SSH key (`hcloud ssh-key list`, the API's `fingerprint`): MD5
 * of the base64-decoded key blob, as colon-separated hex, which is OpenSSH's `ssh-keygen -l -E md5`.
 * Comments and spacing are not part of it.
 */
export function hetznerSshKeyFingerprint(publicKey: string): string {
  // Stryker disable next-line StringLiteral: equivalent, the config schema only admits lines with a blob
  const [, blob = ""] = publicKey.trim().split(/\s+/);
  const digest = createHash("md5").update(Buffer.from(blob, "base64")).digest("hex");
  return digest.replace(/(..)(?!$)/g, "$1:");
}

/** How many hex digits of the fingerprint the key's name carries (64 bits). */
const fingerprintDigits = 16;

/**
 * The management SSH key's hcloud name: `<fleet>-mgmt-<first 16 hex digits of its fingerprint>`.
 * The provider replaces the key when `public_key` changes
 * (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/sshkey/resource.go, RequiresReplace),
 * and Pulumi creates the replacement before deleting the old key; Hetzner refuses a second key
 * with a name or a fingerprint already in the project (`uniqueness_error`). With the fingerprint
 * in the name, a new key pair gets a new name, while an unchanged key keeps its name. A new comment
 * on the same key pair still cannot be replaced that way: Hetzner refuses the repeated fingerprint.
 */
export function managementSshKeyName(fleetName: string, publicKey: string): string {
  return `${fleetName}-mgmt-${hetznerSshKeyFingerprint(publicKey).replaceAll(":", "").slice(0, fingerprintDigits)}`;
}

/**
 * Where k3s keeps its CAs. A CA whose cert and key already exist is used as is, any other
 * is generated (k3s-io/k3s: pkg/daemons/control/deps/deps.go, createSigningCertKey).
 */
export const k3sTlsDirectory = "/var/lib/rancher/k3s/server/tls";

/** The CA files the program issues, so it can build an admin kubeconfig without SSH. */
export interface K3sCaFiles {
  readonly serverCaCertPem: string;
  readonly serverCaKeyPem: string;
  readonly clientCaCertPem: string;
  readonly clientCaKeyPem: string;
}

/** Everything one k3s server's cloud-init needs. */
export interface K3sServerSpec {
  /** This server's position (0-based). */
  readonly index: number;
  /** The server that starts the cluster (`cluster-init`, 0-based; default 0); the others join it at `firstServerIp`. */
  readonly initIndex?: number;
  readonly k3sVersion: string;
  /** Private IP of this server. */
  readonly nodeIp: string;
  /** Private IP of the server that starts the cluster, the join target. */
  readonly firstServerIp: string;
  /** Addresses clients use for the API (LB public and private IP), added as TLS SANs. */
  readonly apiAddresses: readonly string[];
  /** Shared secret servers use to join. */
  readonly token: string;
  /** CA files; written on server 0 only (joining servers receive them from etcd). */
  readonly caFiles: K3sCaFiles;
  /** `management.backups`: snapshot schedule and retention (undefined: k3s' defaults). */
  readonly etcdBackups?: EtcdBackupSettings | undefined;
}

/** Whether this server starts the etcd cluster (and gets the CA files) or joins it. */
function initialises(spec: K3sServerSpec): boolean {
  return spec.index === (spec.initIndex ?? 0);
}

/** The k3s config file (/etc/rancher/k3s/config.yaml) of one server. */
export function k3sServerConfig(spec: K3sServerSpec): Record<string, unknown> {
  return {
    ...(initialises(spec) ? { "cluster-init": true } : { server: `https://${spec.firstServerIp}:${kubernetesApiPort}` }),
    token: spec.token,
    "node-ip": spec.nodeIp,
    "advertise-address": spec.nodeIp,
    "tls-san": [...spec.apiAddresses],
    "cluster-cidr": k3sClusterNetworks.pods,
    "service-cidr": k3sClusterNetworks.services,
    // CAPI, not k3s, owns load balancing and ingress; the hcloud CCM replaces the built-in one.
    disable: ["servicelb", "traefik"],
    "disable-cloud-controller": true,
    "kubelet-arg": ["cloud-provider=external"],
    "secrets-encryption": true,
    "write-kubeconfig-mode": "0600",
  };
}

/**
 * Files of the servers' first boot, each a real file in `boot/` (shellcheck runs on the
 * scripts), keyed by where cloud-init writes it.
 */
export const serverBootFiles = {
  /** Waits for the private address, sets flannel's interface, starts the guard, installs k3s. */
  bootScript: { path: "/usr/local/sbin/capi-fleet-k3s-boot", source: "infra/model/management/boot/k3s-server-boot.sh", permissions: "0755" },
  /** nftables rule: pods cannot reach the metadata endpoint, which serves the user data. */
  metadataGuard: { path: "/usr/local/sbin/capi-fleet-metadata-guard", source: "infra/model/management/boot/metadata-guard.sh", permissions: "0755" },
  metadataGuardUnit: {
    path: "/etc/systemd/system/capi-fleet-metadata-guard.service",
    source: "infra/model/management/boot/capi-fleet-metadata-guard.service",
    permissions: "0644",
  },
  k3sRequiresGuard: {
    path: "/etc/systemd/system/k3s.service.d/10-metadata-guard.conf",
    source: "infra/model/management/boot/k3s-requires-metadata-guard.conf",
    permissions: "0644",
  },
} as const;

/** Where the boot script writes `flannel-iface` (a drop-in k3s merges into config.yaml). */
export const flannelInterfaceDropin = "/etc/rancher/k3s/config.yaml.d/50-flannel-iface.yaml";

/**
 * The etcd snapshot drop-in (a stack output too): the same text on every server, so servers
 * created before a change can be given it by hand (docs/operations.md).
 */
export function etcdSnapshotDropinText(backups: EtcdBackupSettings | undefined): string {
  return stringify(etcdSnapshotK3sConfig(backups));
}

/** Renders the cloud-init user data that installs and starts k3s on one server. */
export function renderK3sCloudInit(spec: K3sServerSpec): string {
  const caFiles =
    initialises(spec)
      ? [
          { path: `${k3sTlsDirectory}/server-ca.crt`, content: spec.caFiles.serverCaCertPem, permissions: "0644" },
          { path: `${k3sTlsDirectory}/server-ca.key`, content: spec.caFiles.serverCaKeyPem, permissions: "0600" },
          { path: `${k3sTlsDirectory}/client-ca.crt`, content: spec.caFiles.clientCaCertPem, permissions: "0644" },
          { path: `${k3sTlsDirectory}/client-ca.key`, content: spec.caFiles.clientCaKeyPem, permissions: "0600" },
        ]
      : [];
  const bootFiles = Object.values(serverBootFiles).map((file) => ({
    path: file.path,
    content: readShippedFile(__dirname, file.source),
    permissions: file.permissions,
  }));
  const document = {
    // The metadata guard needs nft; cloud-init installs packages before it runs runcmd.
    packages: ["nftables"],
    write_files: [
      { path: "/etc/rancher/k3s/config.yaml", content: stringify(k3sServerConfig(spec)), permissions: "0600" },
      { path: etcdSnapshotDropin, content: etcdSnapshotDropinText(spec.etcdBackups), permissions: "0600" },
      ...caFiles,
      ...bootFiles,
    ],
    // hcloud attaches the private network shortly after boot: the script waits for it,
    // and fails visibly in /var/log/cloud-init-output.log, before k3s, if it never comes.
    runcmd: [[serverBootFiles.bootScript.path, spec.nodeIp, spec.k3sVersion]],
  };
  return `#cloud-config\n${stringify(document)}`;
}
