# Shared by the hack/install-*.sh scripts; source it after setting `log`.

# scratch DIR: prepares an empty throwaway module to build a dependency in.
scratch() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && go mod init scratch.local/build >/dev/null 2>&1)
}

# apt_install PACKAGE...: installs the Debian packages with apt-get, as root,
# or fails saying what to run. Only their files are wanted: a policy-rc.d
# keeps the packages' services from starting while they install.
apt_install() {
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    log "missing $*; run: sudo apt-get install -y $*"
    return 1
  fi
  log "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  local own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  local rc=0
  apt-get install -y -qq --no-install-recommends "$@" >&2 || rc=$?
  [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
  return $rc
}

# build_kube_commands VERSION BIN_DIR CMD...: builds k8s.io/kubernetes/cmd/CMD
# at VERSION into BIN_DIR, statically, with the version stamped as a release
# build would. k8s.io/kubernetes points its staging modules at ./staging with
# replace directives, which are ignored when it is a dependency: each is
# pinned to its published v0.x release instead.
build_kube_commands() {
  local version=$1 bin_dir=$2
  shift 2
  local work
  work=$(mktemp -d)
  scratch "$work"
  (
    cd "$work"
    gomod=$(go mod download -json "k8s.io/kubernetes@v${version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")
    {
      echo "require k8s.io/kubernetes v${version}"
      for m in $staging; do echo "replace $m => $m v0.${version#1.}"; done
    } >>go.mod
    echo 'package tools' >tools.go
    go mod tidy >&2 || true
    minor=${version#1.}; minor=${minor%%.*}
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${version}"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=v${version}"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}"
    for b in "$@"; do
      log "  go build $b"
      go get "k8s.io/kubernetes/cmd/$b@v${version}" >&2
      CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin_dir/$b.tmp" "k8s.io/kubernetes/cmd/$b" >&2
      mv "$bin_dir/$b.tmp" "$bin_dir/$b"
    done
  )
  rm -rf "$work"
}
