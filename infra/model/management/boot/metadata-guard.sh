#!/usr/bin/env bash
# Keeps pods away from Hetzner's metadata endpoint, which serves this server's user data:
# the k3s join token and, on the first server, the cluster's CA keys (with the client-CA key
# anyone can mint system:masters certificates).
#
#   capi-fleet-metadata-guard apply|check|remove
#
# `apply` installs an nftables table that drops forwarded packets to the endpoint. Pod
# traffic is forwarded by the node (pod network namespace -> cni0 -> the node's uplink), so
# it hits the forward hook; the node's own processes (cloud-init, root) send from the output
# hook and keep their access. Not covered: hostNetwork pods, which share the node's network
# namespace (they send like the node does), and whoever is root on the server.
# A systemd unit runs `apply` at every boot before k3s starts, and k3s requires that unit.
#
# METADATA_ADDRESS overrides the endpoint (tests use an address of their own namespaces).
set -euo pipefail

address=${METADATA_ADDRESS:-169.254.169.254}
table=capi_fleet_metadata

if [[ ! "$address" =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
  echo "metadata-guard: '$address' is not an IPv4 address" >&2
  exit 2
fi

case "${1:-}" in
  apply)
    # Declaring, deleting and re-creating the table in one transaction makes this idempotent.
    nft -f - <<NFT
table inet $table
delete table inet $table
table inet $table {
  chain forward {
    type filter hook forward priority filter - 10; policy accept;
    ip daddr $address counter drop comment "pods must not read the servers' user data"
  }
}
NFT
    ;;
  check)
    rules=$(nft list chain inet "$table" forward 2>/dev/null || true)
    if ! grep -q "ip daddr $address .*drop" <<<"$rules"; then
      echo "metadata-guard: no rule drops forwarded traffic to $address; pods could read this server's user data" >&2
      exit 1
    fi
    ;;
  remove)
    nft delete table inet "$table" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 apply|check|remove" >&2
    exit 2
    ;;
esac
