import { stringify } from "yaml";
import { k3sClusterNetworks } from "../../infra/model/fleet-config";
import { kubernetesApiPort } from "../../infra/model/firewall-rules";
import { readShippedFile } from "../../infra/model/shipped-file";

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
  /** 0 starts the cluster (`cluster-init`); the others join server 0. */
  readonly index: number;
  readonly k3sVersion: string;
  /** Private IP of this server. */
  readonly nodeIp: string;
  /** Private IP of server 0, the join target. */
  readonly firstServerIp: string;
  /** Addresses clients use for the API (LB public and private IP), added as TLS SANs. */
  readonly apiAddresses: readonly string[];
  /** Shared secret servers use to join. */
  readonly token: string;
  /** CA files; written on server 0 only (joining servers receive them from etcd). */
  readonly caFiles: K3sCaFiles;
}

/** The k3s config file (/etc/rancher/k3s/config.yaml) of one server. */
export function k3sServerConfig(spec: K3sServerSpec): Record<string, unknown> {
  return {
    ...(spec.index === 0 ? { "cluster-init": true } : { server: `https://${spec.firstServerIp}:${kubernetesApiPort}` }),
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
  bootScript: { path: "/usr/local/sbin/capi-fleet-k3s-boot", source: "components/management-cluster/boot/k3s-server-boot.sh", permissions: "0755" },
  /** nftables rule: pods cannot reach the metadata endpoint, which serves the user data. */
  metadataGuard: { path: "/usr/local/sbin/capi-fleet-metadata-guard", source: "components/management-cluster/boot/metadata-guard.sh", permissions: "0755" },
  metadataGuardUnit: {
    path: "/etc/systemd/system/capi-fleet-metadata-guard.service",
    source: "components/management-cluster/boot/capi-fleet-metadata-guard.service",
    permissions: "0644",
  },
  k3sRequiresGuard: {
    path: "/etc/systemd/system/k3s.service.d/10-metadata-guard.conf",
    source: "components/management-cluster/boot/k3s-requires-metadata-guard.conf",
    permissions: "0644",
  },
} as const;

/** Where the boot script writes `flannel-iface` (a drop-in k3s merges into config.yaml). */
export const flannelInterfaceDropin = "/etc/rancher/k3s/config.yaml.d/50-flannel-iface.yaml";

/** Renders the cloud-init user data that installs and starts k3s on one server. */
export function renderK3sCloudInit(spec: K3sServerSpec): string {
  const caFiles =
    spec.index === 0
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
      ...caFiles,
      ...bootFiles,
    ],
    // hcloud attaches the private network shortly after boot: the script waits for it,
    // and fails visibly in /var/log/cloud-init-output.log, before k3s, if it never comes.
    runcmd: [[serverBootFiles.bootScript.path, spec.nodeIp, spec.k3sVersion]],
  };
  return `#cloud-config\n${stringify(document)}`;
}
