#!/usr/bin/env bash
# Installs the system packages the tests run for real: nginx (configs are checked
# with `nginx -t` and served), Prometheus and promtool, the nginx exporter, and
# what the images of hack/images copy from the machine.
# Idempotent: installs only what is missing, with apt-get when run as root.
set -euo pipefail

declare -A packages=(
  [nginx]=nginx
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
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: missing ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "install-test-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# Only the binaries are needed: keep the packages' services from starting.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
