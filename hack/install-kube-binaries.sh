#!/usr/bin/env bash
# Builds the pinned Kubernetes control-plane binaries the tests and `make run` use
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok) from
# their Go modules, into a cache directory outside the clone keyed by version, so a
# fresh clone and CI reuse them. Idempotent: finished binaries are never rebuilt.
#
# Prints the directory holding the binaries on its last line of output.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.36.3}
ETCD_VERSION=${ETCD_VERSION:-3.6.8}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/kube-v${KUBE_VERSION}-etcd-v${ETCD_VERSION}-kwok-v${KWOK_VERSION}"

# --print-dir: only say where the binaries live (the test framework asks this).
if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi
mkdir -p "$bin_dir"

log() { echo "install-kube-binaries: $*" >&2; }

# shellcheck source=hack/lib.sh
source "$(dirname "$0")/lib.sh"

if [ ! -x "$bin_dir/etcd" ]; then
  log "building etcd v${ETCD_VERSION} (about a minute)"
  work=$(mktemp -d)
  scratch "$work"
  (
    cd "$work"
    go get "go.etcd.io/etcd/server/v3@v${ETCD_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath -o "$bin_dir/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  mv "$bin_dir/etcd.tmp" "$bin_dir/etcd"
  rm -rf "$work"
fi

kube_missing=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [ -x "$bin_dir/$b" ] || kube_missing+=("$b")
done
if [ ${#kube_missing[@]} -gt 0 ]; then
  log "building ${kube_missing[*]} v${KUBE_VERSION} (about ten minutes on 2 cores, once)"
  build_kube_commands "$KUBE_VERSION" "$bin_dir" "${kube_missing[@]}"
fi

if [ ! -x "$bin_dir/kwok" ]; then
  log "building kwok v${KWOK_VERSION}"
  GOBIN="$bin_dir" CGO_ENABLED=0 go install "sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION}" >&2
fi

echo "$bin_dir"
