#!/usr/bin/env bash
# Installs the pinned helm v3 the chart tests run (lint, template, install,
# upgrade, uninstall, push and pull of OCI charts) into a cache directory
# outside the clone keyed by version, so a fresh clone and CI reuse it.
# Idempotent: a finished binary is never rebuilt.
#
# Prints the directory holding the binary on its last line of output.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-3.22.0}

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/helm-v${HELM_VERSION}"

# --print-dir: only say where the binary lives (the tests ask this).
if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi
mkdir -p "$bin_dir"

log() { echo "install-helm: $*" >&2; }

if [ ! -x "$bin_dir/helm" ]; then
  log "building helm v${HELM_VERSION}"
  # Install into a scratch GOBIN and move into place, so an interrupted build never
  # leaves a binary that looks finished. The version is stamped as helm's own
  # release builds stamp it, so `helm version` and the charts' .Capabilities
  # tell the truth.
  work=$(mktemp -d)
  GOBIN="$work" CGO_ENABLED=0 go install \
    -ldflags "-X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}" \
    "helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}" >&2
  mv "$work/helm" "$bin_dir/helm"
  rm -rf "$work"
fi

echo "$bin_dir"
