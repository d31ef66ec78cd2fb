#!/usr/bin/env bash
# Runs as root on a management server, copied there by scripts/management-server.mjs:
#
#   k3s-etcd-recovery restore SNAPSHOT ENDPOINT REGION BUCKET FOLDER   (S3 keys: two lines on stdin)
#   k3s-etcd-recovery rejoin
#   k3s-etcd-recovery snapshot-config                                   (the drop-in on stdin)
#
# restore: stops k3s, restores SNAPSHOT from Object Storage as a new one-member etcd cluster,
#   starts k3s again (k3s' documented restore: `k3s server --cluster-reset
#   --cluster-reset-restore-path=...`; k3s-io/k3s: pkg/etcd/etcd.go `Reset`). The S3 settings
#   must be flags: k3s refuses its config Secret while restoring (same file: "cannot use S3
#   config secret when restoring snapshot"). The keys come on stdin and reach k3s through the
#   environment variables its flags read (pkg/cli/cmds/server.go: AWS_ACCESS_KEY_ID,
#   AWS_SECRET_ACCESS_KEY), so they appear in no command line and no file.
# rejoin: on the other servers after a restore: moves the old etcd data aside and starts k3s,
#   which joins the restored member (what k3s prints after a reset: "Backup and delete
#   ${datadir}/server/db on each peer etcd server and rejoin the nodes").
# snapshot-config: writes the etcd snapshot drop-in k3s merges into config.yaml and restarts k3s
#   (servers created before the drop-in existed or changed).
#
# Tunables (tests): K3S_BIN (k3s), SYSTEMCTL (systemctl), K3S_DATA_DIR (/var/lib/rancher/k3s),
# K3S_CONFIG_DROPIN_DIR (/etc/rancher/k3s/config.yaml.d).
set -Eeuo pipefail

k3s=${K3S_BIN:-k3s}
systemctl=${SYSTEMCTL:-systemctl}
data_dir=${K3S_DATA_DIR:-/var/lib/rancher/k3s}
dropin_dir=${K3S_CONFIG_DROPIN_DIR:-/etc/rancher/k3s/config.yaml.d}

log() { printf 'k3s-etcd-recovery: %s\n' "$*" >&2; }
trap 'log "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

usage() {
  log "usage: k3s-etcd-recovery restore SNAPSHOT ENDPOINT REGION BUCKET FOLDER | rejoin | snapshot-config"
  exit 2
}

mode=${1:-}
case "$mode" in
  restore)
    [[ $# -eq 6 ]] || usage
    snapshot=$2 endpoint=$3 region=$4 bucket=$5 folder=$6
    IFS= read -r AWS_ACCESS_KEY_ID || true
    IFS= read -r AWS_SECRET_ACCESS_KEY || true
    if [[ -z "$AWS_ACCESS_KEY_ID" || -z "$AWS_SECRET_ACCESS_KEY" ]]; then
      log "expected the Object Storage access key and secret key as two lines on stdin"
      exit 2
    fi
    export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
    "$systemctl" stop k3s
    log "restoring $snapshot from s3://$bucket/$folder at $endpoint"
    "$k3s" server \
      --cluster-reset \
      --cluster-reset-restore-path="$snapshot" \
      --etcd-s3 \
      --etcd-s3-endpoint="$endpoint" \
      --etcd-s3-region="$region" \
      --etcd-s3-bucket="$bucket" \
      --etcd-s3-folder="$folder"
    "$systemctl" start k3s
    log "restored; now run rejoin on every other server"
    ;;
  rejoin)
    [[ $# -eq 1 ]] || usage
    "$systemctl" stop k3s
    if [[ -d "$data_dir/server/db" ]]; then
      aside="$data_dir/server/db.before-rejoin-$(date +%s)"
      mv "$data_dir/server/db" "$aside"
      log "moved the old etcd data to $aside"
    fi
    "$systemctl" start k3s
    log "k3s started; it joins the restored member"
    ;;
  snapshot-config)
    [[ $# -eq 1 ]] || usage
    mkdir -p "$dropin_dir"
    content=$(cat)
    if [[ -z "$content" ]]; then
      log "expected the drop-in (pulumi stack output managementEtcdSnapshotConfig) on stdin"
      exit 2
    fi
    printf '%s\n' "$content" >"$dropin_dir/60-etcd-snapshots.yaml"
    chmod 600 "$dropin_dir/60-etcd-snapshots.yaml"
    "$systemctl" restart k3s
    log "wrote $dropin_dir/60-etcd-snapshots.yaml and restarted k3s"
    ;;
  *)
    usage
    ;;
esac
