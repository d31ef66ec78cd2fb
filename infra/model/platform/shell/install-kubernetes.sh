#!/usr/bin/env bash
# Installs containerd and the kubelet, kubeadm and kubectl of one Kubernetes version on a
# tenant node, before kubeadm runs (a preKubeadmCommand of the fleet's ClusterClass):
#
#   install-kubernetes.sh vMAJOR.MINOR.PATCH CONTAINERD_VERSION
#
# Both versions come from the ClusterClass (infra/model/platform/node-bootstrap.ts); the
# containerd version is the catalog's. Idempotent: a rebooted node reruns it.
#
# The ClusterClass carries this file without its comment lines
# (infra/model/platform/shell-comments.ts), so editing a comment rolls no machine; line
# numbers in its error messages are those of the file on the node.
#
# Runs on the first boot of a stock Ubuntu image, so it:
# - waits (bounded) for the apt/dpkg locks that cloud-init and unattended-upgrades hold;
# - retries every download a bounded number of times;
# - installs containerd from the release tarball at the pinned version and checks its
#   checksum, as CAPH's own ClusterClass does (syself/cluster-api-provider-hetzner@v1.1.8:
#   templates/cluster-templates/v1beta1/cluster-class.yaml, CONTAINERD=1.7.x): Ubuntu's
#   package moves with the archive, and CAREN's containerd patches expect the 1.x layout;
# - fails loudly, and then makes kubeadm unrunnable: CABPK runs each preKubeadmCommand as
#   its own runcmd line and `kubeadm init|join` after them whatever they returned
#   (sigs.k8s.io/cluster-api@v1.12.10: bootstrap/kubeadm/internal/cloudinit/node.go and
#   controlplane_init.go), so a half-installed node would otherwise still try to join.
#
# Tunables (tests use them; the defaults are for real nodes): INSTALL_ROOT (prefix of every
# path written, default /), INSTALL_RETRIES (5), INSTALL_RETRY_DELAY (seconds, 10),
# APT_LOCK_TIMEOUT (seconds, 900), APT_LOCK_POLL (seconds, 5).
set -Eeuo pipefail

root=${INSTALL_ROOT:-}
retries=${INSTALL_RETRIES:-5}
retry_delay=${INSTALL_RETRY_DELAY:-10}
lock_timeout=${APT_LOCK_TIMEOUT:-900}
lock_poll=${APT_LOCK_POLL:-5}
dpkg_locks=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock)

log() { printf 'install-kubernetes: %s\n' "$*" >&2; }

# On any failure: say where, and take kubeadm out of the way so the runcmd line after this
# script fails at once ("kubeadm: command not found") instead of joining a broken node.
on_error() {
  local status=$? line=$1 command=$2
  log "FAILED (exit $status) at line $line: $command"
  local kubeadm
  for kubeadm in "$root/usr/bin/kubeadm" "$root/usr/local/bin/kubeadm"; do
    if [[ -e "$kubeadm" ]]; then
      mv -f "$kubeadm" "$kubeadm.disabled-by-install-kubernetes"
      log "moved $kubeadm aside: this node must not run kubeadm; the machine health check will replace it"
    fi
  done
  exit "$status"
}
trap 'on_error "$LINENO" "$BASH_COMMAND"' ERR

usage="usage: install-kubernetes.sh vMAJOR.MINOR.PATCH CONTAINERD_VERSION"
requested=${1:-}
containerd_version=${2:-}
if [[ ! "$requested" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  log "'$requested' is not a Kubernetes version (vMAJOR.MINOR.PATCH); $usage"
  exit 2
fi
if [[ ! "$containerd_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  log "'$containerd_version' is not a containerd version (MAJOR.MINOR.PATCH); $usage"
  exit 2
fi
version=${requested#v}
minor=${version%.*}
export DEBIAN_FRONTEND=noninteractive

# Runs a command until it succeeds, at most $retries times.
retry() {
  local attempt=1
  until "$@"; do
    if ((attempt >= retries)); then
      log "giving up after $attempt attempts: $*"
      return 1
    fi
    log "attempt $attempt of $retries failed: $*; retrying in ${retry_delay}s"
    sleep "$retry_delay"
    attempt=$((attempt + 1))
  done
}

# Whether a process holds one of apt's or dpkg's locks: fuser (psmisc) where the image has it,
# else the kernel's table of held locks (dpkg and apt take fcntl locks on these files).
apt_lock_held() {
  if command -v fuser >/dev/null; then
    fuser "${dpkg_locks[@]}" >/dev/null 2>&1
    return
  fi
  local lock inode
  for lock in "${dpkg_locks[@]}"; do
    inode=$(stat -c %i "$lock" 2>/dev/null) || continue
    grep -q ":${inode} " /proc/locks && return 0
  done
  return 1
}

# cloud-init and unattended-upgrades use apt on first boot; apt-get fails at once on a held lock.
wait_for_apt_locks() {
  local deadline=$((SECONDS + lock_timeout)) said=""
  while apt_lock_held; do
    if ((SECONDS >= deadline)); then
      log "the apt/dpkg lock is still held after ${lock_timeout}s (${dpkg_locks[*]})"
      return 1
    fi
    if [[ -z "$said" ]]; then
      log "waiting for the apt/dpkg lock (unattended-upgrades or cloud-init holds it)"
      said=yes
    fi
    sleep "$lock_poll"
  done
}

apt_get() {
  wait_for_apt_locks
  retry apt-get -q -o DPkg::Lock::Timeout="$lock_timeout" "$@"
}

download() {
  retry curl -fsSL --connect-timeout 20 --max-time 600 -o "$1" "$2"
}

for tool in apt-get curl gpg sha256sum systemctl tar; do
  command -v "$tool" >/dev/null || { log "missing $tool, which the stock image is expected to have"; false; }
done

# Kernel modules and sysctls kubeadm's preflight checks and Cilium need.
mkdir -p "$root/etc/modules-load.d" "$root/etc/sysctl.d"
printf '%s\n' overlay br_netfilter >"$root/etc/modules-load.d/kubernetes.conf"
modprobe overlay
modprobe br_netfilter
cat >"$root/etc/sysctl.d/90-kubernetes.conf" <<'SYSCTL'
net.bridge.bridge-nf-call-iptables = 1
net.bridge.bridge-nf-call-ip6tables = 1
net.ipv4.ip_forward = 1
SYSCTL
# Cilium's endpoints (lxc*) must not be reverse-path filtered; CAPH's class sets the same
# (templates/cluster-templates/v1beta1/cluster-class.yaml, /etc/sysctl.d/99-cilium.conf).
cat >"$root/etc/sysctl.d/99-cilium.conf" <<'SYSCTL'
net.ipv4.conf.lxc*.rp_filter = 0
SYSCTL
sysctl --system >/dev/null

# containerd, runc and the CNI plugins from containerd's release bundle, checksum verified.
arch=$(dpkg --print-architecture)
bundle="cri-containerd-cni-${containerd_version}-linux-${arch}.tar.gz"
release="https://github.com/containerd/containerd/releases/download/v${containerd_version}"
if ! "$root/usr/local/bin/containerd" --version 2>/dev/null | grep -q " v${containerd_version} "; then
  work=$(mktemp -d)
  download "$work/$bundle" "$release/$bundle"
  download "$work/$bundle.sha256sum" "$release/$bundle.sha256sum"
  (cd "$work" && sha256sum --check --strict "$bundle.sha256sum" >/dev/null) || {
    log "checksum mismatch for $bundle"
    false
  }
  tar --no-overwrite-dir -C "$root/" -xzf "$work/$bundle"
  rm -rf "$work"
fi
installed=$("$root/usr/local/bin/containerd" --version)
if [[ "$installed" != *" v${containerd_version} "* ]]; then
  log "containerd reports '$installed', expected v${containerd_version}"
  false
fi
mkdir -p "$root/etc/containerd"
# CAREN's generic patch merges its registry and metrics settings into this file later and
# restarts containerd; keep an existing one.
if [[ ! -s "$root/etc/containerd/config.toml" ]]; then
  "$root/usr/local/bin/containerd" config default >"$root/etc/containerd/config.toml"
fi
sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' "$root/etc/containerd/config.toml"
systemctl daemon-reload
systemctl enable containerd
systemctl restart containerd
systemctl is-active --quiet containerd || {
  log "containerd is not running"
  false
}

# kubelet, kubeadm and kubectl of exactly this version from pkgs.k8s.io.
mkdir -p "$root/etc/apt/keyrings" "$root/etc/apt/sources.list.d"
download "$root/etc/apt/keyrings/kubernetes-apt-keyring.asc" "https://pkgs.k8s.io/core:/stable:/v${minor}/deb/Release.key"
gpg --dearmor --yes -o "$root/etc/apt/keyrings/kubernetes-apt-keyring.gpg" "$root/etc/apt/keyrings/kubernetes-apt-keyring.asc"
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v${minor}/deb/ /" \
  >"$root/etc/apt/sources.list.d/kubernetes.list"
apt_get update
apt_get install -y --allow-downgrades --allow-change-held-packages \
  "kubelet=${version}-*" "kubeadm=${version}-*" "kubectl=${version}-*"
apt-mark hold kubelet kubeadm kubectl >/dev/null
systemctl enable kubelet

installed=$(kubeadm version -o short)
if [[ "$installed" != "$requested" ]]; then
  log "kubeadm reports $installed, expected $requested"
  false
fi
log "containerd v${containerd_version} and Kubernetes $requested installed"
