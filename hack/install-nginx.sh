#!/usr/bin/env bash
# Builds the nginx the tests run (`nginx -t` on rendered configurations, nginx
# on loopback, and the binary of the nginx test image of hack/images) from
# its source tarball, into a cache directory outside the clone keyed by
# version, so a fresh clone and CI reuse it:
#
#   <cache>/bin/nginx-<version>/sbin/nginx
#   <cache>/bin/nginx-<version>/conf/mime.types   (nginx's own, as the official image has it)
#
# Why not Debian's package: bookworm's nginx is 1.22.1, while the operator
# deploys nginx:1.27 by default, and a plain-text port with `listen ...
# http2` serves both HTTP/1.1 and HTTP/2 with prior knowledge (h2c, gRPC
# without TLS) only from nginx 1.25.1 on; 1.22 speaks HTTP/2 alone there.
# 1.26 is the stable branch the mainline 1.27 of the official image grew
# from; its source is the one the Debian mirror serves (trixie's), checked
# against the SHA-256 pinned below (Debian's nginx_1.26.3-3+deb13u1.dsc lists
# the same sum; the tarball is nginx.org's nginx-1.26.3.tar.gz, byte for
# byte).
#
# The modules are those the official nginx image builds in (its `nginx -V`),
# all static: a configuration this nginx accepts is one the image the
# product deploys accepts, and the renderer's needs (ssl, http_v2,
# stub_status, realip, and the default modules: gzip, grpc, limit_req,
# auth_basic, geo, map, the upstream balancers) are among them. The official
# image's dynamic modules (geoip, image_filter, njs, perl, xslt) are left out:
# it loads none by default and the renderer needs none. The compiled-in paths
# are the official image's (/etc/nginx, /var/cache/nginx, /var/run): the
# image of hack/images runs this binary at /usr/sbin/nginx with them, and the
# tests override them (-p, -c, -e stderr; the rendered pid, temp paths and
# logs). Two defaults differ from the official build, for the tests that run
# this nginx on the build machine, as root and with the machine's accounts:
# the error log before the configuration names one is stderr (the official
# image's /var/log/nginx/error.log is a link to /dev/stderr, and the image of
# hack/images has the same link; on the machine, nginx then writes no file
# of its own and needs no /var/log/nginx), and the user a master process
# started as root gives its workers is nobody:nogroup, nginx's own default
# and an account every Debian machine has, not nginx (which the image's
# nginx.conf names itself, as the official image's does).
#
# The build (under a minute on 2 cores) runs in a temporary directory and
# the result is renamed into place, so an interrupted build leaves nothing
# that looks finished. Build dependencies (a C compiler, make, the headers of
# PCRE2, OpenSSL and zlib) are installed with apt-get when missing.
# Idempotent: a finished nginx is never rebuilt.
#
# Prints the directory on its last line of output; --print-dir prints only
# that and builds nothing (the tests ask this).
set -euo pipefail

# The version and the SHA-256 of its source tarball change together.
NGINX_VERSION=1.26.3
NGINX_SHA256=69ee2b237744036e61d24b836668aad3040dda461fe6f570f1787eab570c75aa
# Where the tarball comes from, in order: Debian's mirror (its name for
# upstream's tarball), then nginx.org. NGINX_SOURCE_URL puts another first
# (a local mirror, file:///...); the checksum is verified whatever the source.
sources=(
  ${NGINX_SOURCE_URL:+"$NGINX_SOURCE_URL"}
  "http://deb.debian.org/debian/pool/main/n/nginx/nginx_${NGINX_VERSION}.orig.tar.gz"
  "https://nginx.org/download/nginx-${NGINX_VERSION}.tar.gz"
)

cache_root=${NGINX_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nginx-operator}
nginx_dir="$cache_root/bin/nginx-${NGINX_VERSION}"

if [ "${1:-}" = "--print-dir" ]; then
  echo "$nginx_dir"
  exit 0
fi

log() { echo "install-nginx: $*" >&2; }

# shellcheck source=hack/lib.sh
source "$(dirname "$0")/lib.sh"

if [ -x "$nginx_dir/sbin/nginx" ] && [ -f "$nginx_dir/conf/mime.types" ]; then
  echo "$nginx_dir"
  exit 0
fi

# Build dependencies: a command, or a header of a -dev package.
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
[ -f /usr/include/pcre2.h ] || missing+=(libpcre2-dev)
[ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
apt_install "${missing[@]}"

work=$(mktemp -d)
mkdir -p "$cache_root/bin"
# What a build killed outright (SIGKILL, a crash) left behind; a concurrent
# build's directory is younger than that.
find "$cache_root/bin" -maxdepth 1 -name ".nginx-*" -mmin +120 -exec rm -rf {} + 2>/dev/null || true
# The staging directory is beside the final one, on the same file system, so
# the last step is a rename.
stage=$(mktemp -d "$cache_root/bin/.nginx-${NGINX_VERSION}.XXXXXX")
trap 'rm -rf "$work" "$stage"' EXIT

tarball="$work/nginx-${NGINX_VERSION}.tar.gz"
verified=
for url in "${sources[@]}"; do
  log "downloading $url"
  if ! curl -fsSL --retry 3 --connect-timeout 20 -o "$tarball" "$url"; then
    log "  download failed"
    continue
  fi
  sum=$(sha256sum "$tarball" | cut -d' ' -f1)
  if [ "$sum" = "$NGINX_SHA256" ]; then
    verified=1
    break
  fi
  log "  SHA-256 $sum, want $NGINX_SHA256: not using it"
done
[ -n "$verified" ] || { log "no source of nginx ${NGINX_VERSION} with the pinned checksum"; exit 1; }

tar -xzf "$tarball" -C "$work"
src="$work/nginx-${NGINX_VERSION}"

log "building nginx ${NGINX_VERSION} (under a minute)"
(
  cd "$src"
  # The official image's paths and modules (see above). The flags of the
  # compiler and linker are Debian's hardening ones (the compiler builds
  # position-independent executables by default), without debug information:
  # the image copies the binary. nginx compiles its sources by relative
  # paths, so the temporary directory is in neither the binary nor `nginx -V`.
  ./configure \
    --prefix=/etc/nginx \
    --sbin-path=/usr/sbin/nginx \
    --modules-path=/usr/lib/nginx/modules \
    --conf-path=/etc/nginx/nginx.conf \
    --error-log-path=stderr \
    --http-log-path=/var/log/nginx/access.log \
    --pid-path=/var/run/nginx.pid \
    --lock-path=/var/run/nginx.lock \
    --http-client-body-temp-path=/var/cache/nginx/client_temp \
    --http-proxy-temp-path=/var/cache/nginx/proxy_temp \
    --http-fastcgi-temp-path=/var/cache/nginx/fastcgi_temp \
    --http-uwsgi-temp-path=/var/cache/nginx/uwsgi_temp \
    --http-scgi-temp-path=/var/cache/nginx/scgi_temp \
    --user=nobody \
    --group=nogroup \
    --with-compat \
    --with-file-aio \
    --with-threads \
    --with-http_addition_module \
    --with-http_auth_request_module \
    --with-http_dav_module \
    --with-http_flv_module \
    --with-http_gunzip_module \
    --with-http_gzip_static_module \
    --with-http_mp4_module \
    --with-http_random_index_module \
    --with-http_realip_module \
    --with-http_secure_link_module \
    --with-http_slice_module \
    --with-http_ssl_module \
    --with-http_stub_status_module \
    --with-http_sub_module \
    --with-http_v2_module \
    --with-http_v3_module \
    --with-mail \
    --with-mail_ssl_module \
    --with-stream \
    --with-stream_realip_module \
    --with-stream_ssl_module \
    --with-stream_ssl_preread_module \
    --with-cc-opt='-O2 -fstack-protector-strong -Wformat -Werror=format-security -D_FORTIFY_SOURCE=2' \
    --with-ld-opt='-Wl,-z,relro -Wl,-z,now -Wl,--as-needed' >&2
  make -j"$(nproc)" >&2
)

mkdir -p "$stage/sbin" "$stage/conf"
# Stripped, as the official packages are (nginx compiles with -g itself).
install -s -m 0755 "$src/objs/nginx" "$stage/sbin/nginx"
install -m 0644 "$src/conf/mime.types" "$stage/conf/mime.types"
chmod 0755 "$stage"
# It runs, and is the version asked for.
version=$("$stage/sbin/nginx" -v 2>&1)
[ "$version" = "nginx version: nginx/${NGINX_VERSION}" ] || { log "the build says: $version"; exit 1; }

# A concurrent run may have finished first: its result is as good.
if ! mv -T "$stage" "$nginx_dir" 2>/dev/null; then
  if [ ! -x "$nginx_dir/sbin/nginx" ] || [ ! -f "$nginx_dir/conf/mime.types" ]; then
    # An unfinished directory of an older layout or a crash: replace it.
    rm -rf "$nginx_dir"
    mv -T "$stage" "$nginx_dir"
  fi
fi
log "installed nginx ${NGINX_VERSION} in $nginx_dir"
echo "$nginx_dir"
