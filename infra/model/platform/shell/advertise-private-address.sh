#!/usr/bin/env bash
# Makes kubeadm advertise a control-plane node's private address instead of its public one
# (a preKubeadmCommand of the fleet's ClusterClass, after install-kubernetes.sh):
#
#   advertise-private-address.sh
#
# kubeadm takes the advertise address from the interface of the default route when
# localAPIEndpoint.advertiseAddress is empty, and on Hetzner that is the public NIC. The
# kube-apiserver then advertises the public IP (the endpoints of the `kubernetes` Service that
# every pod uses) and etcd peers and clients talk over public IPs: the tenant firewall, which
# opens nothing public, would cut both (syself/cluster-api-provider-hetzner issues 605 and
# 1614). CAPH attaches every server to the cluster's network when it creates it
# (pkg/services/hcloud/server/server.go `createServer`), so the private address is known at
# boot from Hetzner's metadata service (`/hetzner/v1/metadata/private-networks`).
#
# It writes that address into the kubeadm config CABPK wrote before the runcmd lines run
# (sigs.k8s.io/cluster-api@v1.12.10: bootstrap/kubeadm/internal/cloudinit/controlplane_init.go
# /run/kubeadm/kubeadm.yaml, controlplane_join.go /run/kubeadm/kubeadm-join-config.yaml): the
# InitConfiguration's localAPIEndpoint, or the control-plane JoinConfiguration's. Workers
# advertise nothing and are left alone. Fails loudly, and then makes kubeadm unrunnable, as
# install-kubernetes.sh does: a control plane must not come up on its public address.
#
# The ClusterClass carries this file without its comment lines
# (infra/model/platform/shell-comments.ts), so editing a comment rolls no machine; line
# numbers in its error messages are those of the file on the node.
#
# Tunables (tests use them; the defaults are for real nodes): ADVERTISE_ROOT (prefix of every
# path read or written, default /), METADATA_URL (Hetzner's private-networks metadata),
# ADDRESS_WAIT (seconds, 300), ADDRESS_POLL (seconds, 5).
set -Eeuo pipefail

root=${ADVERTISE_ROOT:-}
metadata_url=${METADATA_URL:-http://169.254.169.254/hetzner/v1/metadata/private-networks}
address_wait=${ADDRESS_WAIT:-300}
address_poll=${ADDRESS_POLL:-5}

log() { printf 'advertise-private-address: %s\n' "$*" >&2; }

on_error() {
  local status=$? line=$1 command=$2
  log "FAILED (exit $status) at line $line: $command"
  local kubeadm
  for kubeadm in "$root/usr/bin/kubeadm" "$root/usr/local/bin/kubeadm"; do
    if [[ -e "$kubeadm" ]]; then
      mv -f "$kubeadm" "$kubeadm.disabled-by-advertise-private-address"
      log "moved $kubeadm aside: this node must not run kubeadm; the machine health check will replace it"
    fi
  done
  exit "$status"
}
trap 'on_error "$LINENO" "$BASH_COMMAND"' ERR

init_config="$root/run/kubeadm/kubeadm.yaml"
join_config="$root/run/kubeadm/kubeadm-join-config.yaml"
if [[ -f "$init_config" ]]; then
  config=$init_config
elif [[ -f "$join_config" ]] && grep -q '^controlPlane:' "$join_config"; then
  config=$join_config
else
  log "not a control plane: nothing to advertise"
  exit 0
fi

# The private address, once the metadata lists it and an interface holds it (bounded).
deadline=$((SECONDS + address_wait))
address=""
while :; do
  # No pipes here: under pipefail, a reader that exits early (grep -q, head) fails the
  # pipeline whenever the writer writes again and gets SIGPIPE (exit 141).
  metadata=$(curl -fsS --max-time 5 "$metadata_url" 2>/dev/null) || metadata=""
  address=$(sed -n 's/^- ip: *\([0-9.]*\).*$/\1/p' <<<"$metadata")
  address=${address%%$'\n'*}
  holders=$(ip -o -4 addr show) || holders=""
  if [[ -n "$address" ]] && grep -qF " inet $address/" <<<"$holders"; then
    break
  fi
  if ((SECONDS >= deadline)); then
    log "no private address after ${address_wait}s (metadata said '${address}'): is the server attached to the cluster's network?"
    false
  fi
  sleep "$address_poll"
done

python3 - "$config" "$address" <<'PYTHON'
import sys

import yaml

path, address = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as stream:
    documents = [document for document in yaml.safe_load_all(stream) if document is not None]
changed = False
for document in documents:
    if not isinstance(document, dict):
        continue
    if document.get("kind") == "InitConfiguration":
        target = document
    elif document.get("kind") == "JoinConfiguration" and isinstance(document.get("controlPlane"), dict):
        target = document["controlPlane"]
    else:
        continue
    endpoint = target.get("localAPIEndpoint") or {}
    endpoint["advertiseAddress"] = address
    target["localAPIEndpoint"] = endpoint
    changed = True
if not changed:
    sys.exit(f"{path} has no InitConfiguration or control-plane JoinConfiguration")
with open(path, "w", encoding="utf-8") as stream:
    yaml.safe_dump_all(documents, stream, explicit_start=True, sort_keys=False)
PYTHON
log "kubeadm advertises $address (the private network) in $config"
