#!/usr/bin/env bash
# Stand-in for a command a test must not really run (ssh, pulumi, k3s, systemctl), reached
# through a symlink named after it. Each call appends one JSON-free record to $FAKE_LOG:
#   <name> <args separated by US (0x1f)> RS AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... RS <stdin>
# followed by a 0x1e 0x1e line, then prints $FAKE_RESPONSES/<arg> for the first argument that
# names such a file (a canned answer), and exits with $FAKE_EXIT (0).
set -euo pipefail
name=$(basename "$0")
stdin=""
if [[ ! -t 0 ]]; then stdin=$(cat); fi
{
  printf '%s' "$name"
  for arg in "$@"; do printf '\x1f%s' "$arg"; done
  printf '\x1eAWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s' "${AWS_ACCESS_KEY_ID:-}" "${AWS_SECRET_ACCESS_KEY:-}"
  printf '\x1e%s\n\x1e\x1e\n' "$stdin"
} >>"${FAKE_LOG:?FAKE_LOG is not set}"
for arg in "$@"; do
  if [[ -n "${FAKE_RESPONSES:-}" && "$arg" != */* && -f "$FAKE_RESPONSES/$arg" ]]; then
    cat "$FAKE_RESPONSES/$arg"
    break
  fi
done
exit "${FAKE_EXIT:-0}"
