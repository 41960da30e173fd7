#!/usr/bin/env bash
# Builds prometheus-operator's operator binary from its Go module, into a
# cache directory outside the clone keyed by version, for the e2e tests that
# check what prometheus-operator makes of an NginxMonitor's scrape
# configuration Secret and ServiceMonitor. The module's go.mod replaces its
# pkg/apis/monitoring and pkg/client submodules with its own directories, so
# `go install module/cmd/operator@version` refuses it: the module source is
# downloaded and built in a scratch copy instead, as its own main module.
# Idempotent: a finished binary is never rebuilt.
#
#   --print-dir      only print the directory holding the binary (the tests ask this)
#   --print-crd-dir  download the module if needed and print its
#                    example/prometheus-operator-crd directory (the CRDs)
#
# Otherwise prints the directory holding the binary on its last line of output.
set -euo pipefail

PROMETHEUS_OPERATOR_VERSION=${PROMETHEUS_OPERATOR_VERSION:-v0.93.1}
module=github.com/prometheus-operator/prometheus-operator

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/prometheus-operator-${PROMETHEUS_OPERATOR_VERSION}"

if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi

# module_dir prints the source directory of a module (default: the
# operator's) at PROMETHEUS_OPERATOR_VERSION in the module cache, downloading
# it first if needed (outside any module, so no go.mod changes).
module_dir() {
  (cd / && GOFLAGS=-mod=mod go mod download -json "${1:-$module}@${PROMETHEUS_OPERATOR_VERSION}") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

if [ "${1:-}" = "--print-crd-dir" ]; then
  echo "$(module_dir)/example/prometheus-operator-crd"
  exit 0
fi

if [ ! -x "$bin_dir/operator" ]; then
  echo "install-prometheus-operator: building prometheus-operator ${PROMETHEUS_OPERATOR_VERSION} (a few minutes)" >&2
  src=$(module_dir)
  mkdir -p "$bin_dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  # The replaced submodules are modules of their own, left out of the
  # operator module's source: put the same release of each in its place.
  for sub in pkg/apis/monitoring pkg/client; do
    rm -rf "${work:?}/src/$sub"
    mkdir -p "$(dirname "$work/src/$sub")"
    cp -r "$(module_dir "$module/$sub")" "$work/src/$sub"
  done
  chmod -R u+w "$work/src"
  (
    cd "$work/src"
    GOFLAGS=-mod=mod go build -trimpath -o "$work/operator" ./cmd/operator >&2
  )
  mv "$work/operator" "$bin_dir/operator"
fi
echo "$bin_dir"
