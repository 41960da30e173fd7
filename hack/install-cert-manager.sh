#!/usr/bin/env bash
# Builds cert-manager's controllers (hack/certmanager, a module of its own that
# requires cert-manager's Go module at the version its go.mod pins) into a
# cache directory outside the clone keyed by that version, for the tests that
# run the real cert-manager. Idempotent: a finished binary is never rebuilt.
#
#   --print-dir      only print the directory holding the binary (the tests ask this)
#   --print-crd-dir  download the module if needed and print its deploy/crds
#                    directory (cert-manager's CRDs)
#
# Otherwise prints the directory holding the binary on its last line of output.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/certmanager"
module=github.com/cert-manager/cert-manager
version=$(sed -n "s|^[[:space:]]*$module \(v[^ ]*\)\$|\1|p;s|^require $module \(v[^ ]*\)\$|\1|p" "$src/go.mod" | head -1)
if [ -z "$version" ]; then
  echo "install-cert-manager: no version of $module in $src/go.mod" >&2
  exit 1
fi

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/cert-manager-${version}"

if [ "${1:-}" = "--print-dir" ]; then
  echo "$bin_dir"
  exit 0
fi

if [ "${1:-}" = "--print-crd-dir" ]; then
  dir=$(cd "$src" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  echo "$dir/deploy/crds"
  exit 0
fi

if [ ! -x "$bin_dir/controller" ]; then
  echo "install-cert-manager: building cert-manager ${version}'s controllers (a few minutes)" >&2
  mkdir -p "$bin_dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$src" && go build -trimpath -o "$work/controller" .) >&2
  mv "$work/controller" "$bin_dir/controller"
fi
echo "$bin_dir"
