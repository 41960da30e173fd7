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

# scratch DIR: prepares an empty throwaway module to build a dependency in.
scratch() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && go mod init scratch.local/build >/dev/null 2>&1)
}

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
  work=$(mktemp -d)
  scratch "$work"
  (
    cd "$work"
    # k8s.io/kubernetes points its staging modules at ./staging with replace directives,
    # which are ignored when it is a dependency: pin each to its published v0.x release.
    gomod=$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")
    {
      echo "require k8s.io/kubernetes v${KUBE_VERSION}"
      for m in $staging; do echo "replace $m => $m v0.${KUBE_VERSION#1.}"; done
    } >>go.mod
    echo 'package tools' >tools.go
    go mod tidy >&2 || true
    minor=${KUBE_VERSION#1.}; minor=${minor%%.*}
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${KUBE_VERSION}"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=v${KUBE_VERSION}"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}"
    for b in "${kube_missing[@]}"; do
      log "  go build $b"
      go get "k8s.io/kubernetes/cmd/$b@v${KUBE_VERSION}" >&2
      CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin_dir/$b.tmp" "k8s.io/kubernetes/cmd/$b" >&2
      mv "$bin_dir/$b.tmp" "$bin_dir/$b"
    done
  )
  rm -rf "$work"
fi

if [ ! -x "$bin_dir/kwok" ]; then
  log "building kwok v${KWOK_VERSION}"
  GOBIN="$bin_dir" CGO_ENABLED=0 go install "sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION}" >&2
fi

echo "$bin_dir"
