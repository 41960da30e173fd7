#!/usr/bin/env bash
# Installs the system packages the tests run for real: promtool, the nginx
# exporter, and what the images of hack/images copy from the machine. nginx is
# not among them: hack/install-nginx.sh builds the one the tests and the nginx
# test image run (Debian bookworm's is 1.22, older than what the tests need).
# Idempotent: installs only what is missing, with apt-get when run as root.
set -euo pipefail

declare -A packages=(
  [promtool]=prometheus
  [prometheus-nginx-exporter]=prometheus-nginx-exporter
)

missing=()
for cmd in "${!packages[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/usr/bin/$cmd" ] || missing+=("${packages[$cmd]}")
done
# The operator image (hack/images) carries the machine's CA bundle and time zones.
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
[ -d /usr/share/zoneinfo ] || missing+=(tzdata)
log() { echo "install-test-deps: $*" >&2; }
# shellcheck source=hack/lib.sh
source "$(dirname "$0")/lib.sh"
apt_install "${missing[@]}"
