#!/usr/bin/env bash
# Builds Prometheus and promtool with Kubernetes service discovery from the
# Prometheus Go module, into a cache directory outside the clone keyed by
# version. Debian's prometheus package (2.42+ds) is built without Kubernetes
# discovery, so it can neither check kubernetes_sd_configs (the NginxMonitor
# scrape configurations) nor discover pods; the other service discovery
# mechanisms are left out (build tags), which also keeps the build to modules
# the proxy serves. Idempotent: finished binaries are never rebuilt.
#
# Prints the directory holding the binaries on its last line of output.
set -euo pipefail

PROMETHEUS_MODULE_VERSION=${PROMETHEUS_MODULE_VERSION:-v0.316.0}   # Prometheus 3.16.0

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/prometheus-${PROMETHEUS_MODULE_VERSION}"

# --print-dir: only say where the binaries live (the tests ask this).
if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi

if [ ! -x "$bin_dir/prometheus" ] || [ ! -x "$bin_dir/promtool" ]; then
  echo "install-prometheus: building Prometheus ${PROMETHEUS_MODULE_VERSION} with Kubernetes discovery (a few minutes)" >&2
  mkdir -p "$bin_dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    GOBIN="$bin_dir" GOFLAGS=-mod=mod go install -tags remove_all_sd,enable_kubernetes_sd \
      "github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_MODULE_VERSION}" \
      "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_MODULE_VERSION}" >&2
  )
fi
echo "$bin_dir"
