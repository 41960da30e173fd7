#!/usr/bin/env bash
# Builds what a real test node runs (package test/framework/node): kubelet and
# kube-proxy from the k8s.io/kubernetes module, containerd, its runc shim and ctr
# from the containerd module, and CoreDNS (the cluster's DNS), into a cache
# directory outside the clone keyed by version, so a fresh clone and CI reuse
# them; kube-network-policies (the node's NetworkPolicy enforcer) into a
# directory of its own, keyed by its version, so that adding or updating it
# never invalidates the others; and installs the system packages the node needs (runc, the CNI plugins,
# iptables, conntrack) with apt-get when they are missing. Idempotent: finished
# binaries are never rebuilt.
#
# The first time: about 8 minutes on 2 (shared) cores with an empty Go build
# cache, about 4 after hack/install-kube-binaries.sh has put most Kubernetes
# packages in it; apt-get adds under a minute.
#
# Prints the directory holding the binaries on its last line of output;
# --print-dir prints only that and builds nothing; --print-dir
# kube-network-policies prints the enforcer's directory.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.36.3}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-2.4.2}
COREDNS_VERSION=${COREDNS_VERSION:-1.15.0}
NETPOL_VERSION=${NETPOL_VERSION:-0.8.0}

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
bin_dir="$cache_root/bin/node-kube-v${KUBE_VERSION}-containerd-v${CONTAINERD_VERSION}-coredns-v${COREDNS_VERSION}"
netpol_dir="$cache_root/bin/kube-network-policies-v${NETPOL_VERSION}"

if [ "${1:-}" = "--print-dir" ]; then
  case "${2:-}" in
    "") echo "$bin_dir" ;;
    kube-network-policies) echo "$netpol_dir" ;;
    *) echo "install-node-binaries: --print-dir takes no argument or kube-network-policies, not $2" >&2; exit 2 ;;
  esac
  exit 0
fi
mkdir -p "$bin_dir" "$netpol_dir"

log() { echo "install-node-binaries: $*" >&2; }

# shellcheck source=hack/lib.sh
source "$(dirname "$0")/lib.sh"

# System packages: runc (crun 1.8 does not work with containerd 2), the CNI
# plugins (bridge, host-local, loopback, portmap in /usr/lib/cni), iptables for
# kube-proxy, the CNI plugins and the kubelet, conntrack for kube-proxy.
declare -A packages=(
  [runc]=runc
  [iptables]=iptables
  [conntrack]=conntrack
)
missing=()
for cmd in "${!packages[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/usr/bin/$cmd" ] || missing+=("${packages[$cmd]}")
done
[ -x /usr/lib/cni/bridge ] || [ -x /opt/cni/bin/bridge ] || missing+=(containernetworking-plugins)
apt_install "${missing[@]}"

kube_missing=()
for b in kubelet kube-proxy; do
  [ -x "$bin_dir/$b" ] || kube_missing+=("$b")
done
if [ ${#kube_missing[@]} -gt 0 ]; then
  log "building ${kube_missing[*]} v${KUBE_VERSION}"
  build_kube_commands "$KUBE_VERSION" "$bin_dir" "${kube_missing[@]}"
fi

ctrd_missing=()
for b in containerd containerd-shim-runc-v2 ctr; do
  [ -x "$bin_dir/$b" ] || ctrd_missing+=("$b")
done
if [ ${#ctrd_missing[@]} -gt 0 ]; then
  log "building ${ctrd_missing[*]} v${CONTAINERD_VERSION}"
  work=$(mktemp -d)
  scratch "$work"
  (
    cd "$work"
    mod=github.com/containerd/containerd/v2
    ldflags="-s -w -X $mod/version.Version=v${CONTAINERD_VERSION} -X $mod/version.Revision=module"
    for b in "${ctrd_missing[@]}"; do
      log "  go build $b"
      go get "$mod/cmd/$b@v${CONTAINERD_VERSION}" >&2
      # No cgo: the btrfs, devicemapper and zfs snapshotters need it and the
      # node uses overlayfs.
      CGO_ENABLED=0 go build -trimpath -tags "no_btrfs no_devmapper no_zfs" -ldflags "$ldflags" \
        -o "$bin_dir/$b.tmp" "$mod/cmd/$b" >&2
      mv "$bin_dir/$b.tmp" "$bin_dir/$b"
    done
  )
  rm -rf "$work"
fi

if [ ! -x "$bin_dir/coredns" ]; then
  log "building coredns v${COREDNS_VERSION}"
  GOBIN="$bin_dir" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@v${COREDNS_VERSION}" >&2
fi

if [ ! -x "$netpol_dir/kube-network-policies" ]; then
  log "building kube-network-policies v${NETPOL_VERSION}"
  # Its main package is .../cmd, so go install names the binary "cmd":
  # install into a throwaway directory and give it its name.
  work=$(mktemp -d)
  GOBIN="$work" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kube-network-policies/cmd@v${NETPOL_VERSION}" >&2
  mv "$work/cmd" "$netpol_dir/kube-network-policies"
  rm -rf "$work"
fi

echo "$bin_dir"
