#!/usr/bin/env bash
# First boot of a management server (cloud-init runcmd):
#
#   capi-fleet-k3s-boot NODE_IP K3S_VERSION
#
# 1. waits (bounded) until hcloud has attached the private network and NODE_IP is up;
# 2. names the interface holding NODE_IP as flannel's interface, in a k3s config drop-in:
#    without it flannel takes the default-gateway interface (k3s-io/k3s:
#    pkg/agent/flannel/flannel.go, LookupExtInterface), the public NIC, and VXLAN then runs
#    between public IPs, which the firewall drops. The private NIC's name depends on the
#    server type (ens10, enp7s0, ...), so it is looked up, not assumed;
# 3. starts the metadata guard and checks it, so no pod ever runs without it;
# 4. installs the pinned k3s (get.k3s.io, bounded retries).
#
# Tunables (tests use them): K3S_CONFIG_DROPIN_DIR (/etc/rancher/k3s/config.yaml.d),
# METADATA_GUARD (/usr/local/sbin/capi-fleet-metadata-guard), ADDRESS_WAIT_SECONDS (300),
# INSTALL_RETRIES (5), INSTALL_RETRY_DELAY (seconds, 10).
set -Eeuo pipefail

dropin_dir=${K3S_CONFIG_DROPIN_DIR:-/etc/rancher/k3s/config.yaml.d}
guard=${METADATA_GUARD:-/usr/local/sbin/capi-fleet-metadata-guard}
address_wait=${ADDRESS_WAIT_SECONDS:-300}
retries=${INSTALL_RETRIES:-5}
retry_delay=${INSTALL_RETRY_DELAY:-10}

log() { printf 'capi-fleet-k3s-boot: %s\n' "$*" >&2; }
trap 'log "FAILED (exit $?) at line $LINENO: $BASH_COMMAND; k3s was not started"' ERR

node_ip=${1:-}
k3s_version=${2:-}
if [[ ! "$node_ip" =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ || -z "$k3s_version" ]]; then
  log "usage: capi-fleet-k3s-boot NODE_IP K3S_VERSION"
  exit 2
fi

# The interface that holds an IPv4 address, exactly (the private NIC's is a /32 on Hetzner).
interface_of() {
  ip -4 -o addr show | awk -v ip="$1" '{ split($4, a, "/"); if (a[1] == ip) { print $2; exit } }'
}

deadline=$((SECONDS + address_wait))
iface=$(interface_of "$node_ip")
while [[ -z "$iface" ]]; do
  if ((SECONDS >= deadline)); then
    log "no interface holds $node_ip after ${address_wait}s: is the server attached to the private network?"
    false
  fi
  sleep 2
  iface=$(interface_of "$node_ip")
done
log "private address $node_ip is on $iface; flannel will use $iface"

# k3s reads <config>.d/*.yaml after config.yaml, each key becoming its --flag
# (k3s-io/k3s: pkg/configfilearg/parser.go; --flannel-iface in pkg/cli/cmds/agent.go).
mkdir -p "$dropin_dir"
printf 'flannel-iface: %s\n' "$iface" >"$dropin_dir/50-flannel-iface.yaml"

systemctl daemon-reload
systemctl enable --now capi-fleet-metadata-guard.service
"$guard" check

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

install_k3s() {
  local installer
  installer=$(mktemp)
  curl -fsSL --connect-timeout 20 --max-time 300 -o "$installer" https://get.k3s.io &&
    INSTALL_K3S_VERSION="$k3s_version" sh "$installer" server
  local status=$?
  rm -f "$installer"
  return "$status"
}
retry install_k3s
log "k3s $k3s_version installed"
