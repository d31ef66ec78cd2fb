/**
 * What a tenant node runs before kubeadm: containerd plus the kubelet, kubeadm and kubectl
 * of the node's own Kubernetes version, from the Kubernetes project's package repository.
 *
 * The version is an argument, filled in per node by a ClusterClass patch from
 * `{{ .builtin.controlPlane.version }}` / `{{ .builtin.machineDeployment.version }}`. During a
 * chained upgrade those differ from the Cluster's target version, and a version written
 * into the template would make every new node install the wrong kubelet (CAPH's shipped
 * class hard-codes one: syself/cluster-api-provider-hetzner@v1.1.8
 * templates/cluster-templates/v1beta1/cluster-class.yaml, same bug class as CAPH #591).
 */

/** Where the install script is written on every node. */
export const installKubernetesScriptPath = "/etc/capi-fleet/install-kubernetes.sh";

/**
 * The preKubeadmCommand that installs Kubernetes at a version given by a Go-template
 * expression (a ClusterClass `valueFrom.template`).
 */
export function installKubernetesCommand(versionTemplate: string): string {
  return `${installKubernetesScriptPath} ${versionTemplate}`;
}

/**
 * The install script. Idempotent (a rebooted node reruns it). It leaves
 * /etc/containerd/config.toml in place because CAREN's generic patch merges its registry
 * and metrics settings into that file and restarts containerd afterwards.
 */
export const installKubernetesScript = `#!/usr/bin/env bash
# Installs containerd and kubelet/kubeadm/kubectl at the version given as $1 (vMAJOR.MINOR.PATCH).
set -euo pipefail
requested="\${1:?usage: install-kubernetes.sh vMAJOR.MINOR.PATCH}"
if [[ ! "$requested" =~ ^v[0-9]+\\.[0-9]+\\.[0-9]+$ ]]; then
  echo "install-kubernetes: '$requested' is not a Kubernetes version (vMAJOR.MINOR.PATCH)" >&2
  exit 2
fi
version="\${requested#v}"
minor="\${version%.*}"
export DEBIAN_FRONTEND=noninteractive

cat > /etc/modules-load.d/kubernetes.conf <<'MODULES'
overlay
br_netfilter
MODULES
modprobe overlay
modprobe br_netfilter
cat > /etc/sysctl.d/90-kubernetes.conf <<'SYSCTL'
net.bridge.bridge-nf-call-iptables = 1
net.bridge.bridge-nf-call-ip6tables = 1
net.ipv4.ip_forward = 1
SYSCTL
sysctl --system >/dev/null

apt-get update -q
apt-get install -y -q apt-transport-https ca-certificates curl gpg containerd
mkdir -p /etc/containerd
if [[ ! -s /etc/containerd/config.toml ]]; then
  containerd config default > /etc/containerd/config.toml
fi
sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml
systemctl enable containerd
systemctl restart containerd

mkdir -p /etc/apt/keyrings
curl -fsSL "https://pkgs.k8s.io/core:/stable:/v\${minor}/deb/Release.key" \\
  | gpg --dearmor --yes -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v\${minor}/deb/ /" \\
  > /etc/apt/sources.list.d/kubernetes.list
apt-get update -q
apt-get install -y -q --allow-downgrades --allow-change-held-packages \\
  "kubelet=\${version}-*" "kubeadm=\${version}-*" "kubectl=\${version}-*"
apt-mark hold kubelet kubeadm kubectl
systemctl enable kubelet
`;
