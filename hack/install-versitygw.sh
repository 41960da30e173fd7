#!/usr/bin/env bash
# Installs the pinned versitygw S3 gateway the backup tests run as a real S3 server
# (posix backend on a temp dir, loopback port) into a cache directory outside the
# clone keyed by version, so a fresh clone and CI reuse it. Idempotent: a finished
# binary is never rebuilt.
#
# Prints the directory holding the binary on its last line of output.
set -euo pipefail

VERSITYGW_VERSION=${VERSITYGW_VERSION:-1.8.0}

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/versitygw-v${VERSITYGW_VERSION}"

# --print-dir: only say where the binary lives (the tests ask this).
if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi
mkdir -p "$bin_dir"

log() { echo "install-versitygw: $*" >&2; }

if [ ! -x "$bin_dir/versitygw" ]; then
  log "building versitygw v${VERSITYGW_VERSION}"
  # Install into a scratch GOBIN and move into place, so an interrupted build never
  # leaves a binary that looks finished.
  work=$(mktemp -d)
  GOBIN="$work" CGO_ENABLED=0 go install "github.com/versity/versitygw/cmd/versitygw@v${VERSITYGW_VERSION}" >&2
  mv "$work/versitygw" "$bin_dir/versitygw"
  rm -rf "$work"
fi

echo "$bin_dir"
