#!/usr/bin/env bash
# Builds a release of nginx-operator with VERSION stamped everywhere, and
# publishes it to an OCI registry:
#
#   make release VERSION=v1.2.3 REGISTRY=registry.example.com/team
#
# Writes $OUT (default dist/$VERSION):
#   bundle.yaml                 kubectl create -f; the operator image is
#                               $REGISTRY/nginx-operator:$VERSION
#   nginx-operator-1.2.3.tgz    the Helm chart, version 1.2.3, appVersion v1.2.3
#   chart/nginx-operator/       the same chart, unpacked
#   olm/                        the OLM bundle (manifests/, metadata/, bundle.Dockerfile)
#   images/operator.tar         the operator image for this machine (ctr/docker load)
# and, unless PUSH=0, pushes
#   $REGISTRY/nginx-operator:$VERSION             the operator image index ($PLATFORMS)
#   oci://$REGISTRY/charts/nginx-operator:1.2.3   the chart (helm install oci://...)
#
# Credentials come from the Docker configuration (docker login, crane auth
# login) for the image and from helm's registry login for the chart.
# INSECURE=1 talks plain HTTP to the registry (a local one).
set -euo pipefail

: "${VERSION:?set VERSION, such as v1.2.3}"
: "${REGISTRY:?set REGISTRY, the registry path images and charts go to, such as ghcr.io/nginx-operator}"
if [[ ! $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release: VERSION $VERSION is not v<semver> (v1.2.3, v1.2.3-rc.1): the chart's version is its semver" >&2
  exit 2
fi
REGISTRY=${REGISTRY%/}
PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
PUSH=${PUSH:-1}
INSECURE=${INSECURE:-0}
OUT=${OUT:-dist/$VERSION}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
semver=${VERSION#v}
image="$REGISTRY/nginx-operator:$VERSION"

log() { echo "release: $*" >&2; }
is_true() { case "$1" in 1|true|yes) return 0 ;; *) return 1 ;; esac; }

helm="$(bash hack/install-helm.sh)/helm"
rm -rf "$OUT"
mkdir -p "$OUT/chart"

log "bundle.yaml and the chart for $image"
# The chart's hand-written files, then its generated ones for this image; the
# repository's own bundle.yaml, chart and jsonnet files stay as they are.
cp -R charts/nginx-operator "$OUT/chart/"
go run ./hack/bundle -image "$image" -o "$OUT/bundle.yaml" -chart "$OUT/chart/nginx-operator" -jsonnet "" -namespaced ""
"$helm" lint --strict "$OUT/chart/nginx-operator" >&2
"$helm" package "$OUT/chart/nginx-operator" --destination "$OUT" >&2

log "OLM bundle $semver"
go run ./hack/olm -version "$semver" -image "$image" -o "$OUT/olm" -dockerfile "$OUT/olm/bundle.Dockerfile"

push_flags=()
if is_true "$PUSH"; then push_flags+=(-push); fi
if is_true "$INSECURE"; then push_flags+=(-insecure); fi
log "operator image for $PLATFORMS"
go run ./hack/images -only operator -platforms "$PLATFORMS" -registry "$REGISTRY" -tag "$VERSION" \
  -version "$VERSION" -revision "$REVISION" -out "$OUT/images" "${push_flags[@]}"

if is_true "$PUSH"; then
  plain=()
  if is_true "$INSECURE"; then plain+=(--plain-http); fi
  log "pushing the chart to oci://$REGISTRY/charts"
  "$helm" push "$OUT/nginx-operator-$semver.tgz" "oci://$REGISTRY/charts" "${plain[@]}" >&2
fi
log "done: $OUT"
