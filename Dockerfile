# syntax=docker/dockerfile:1
#
# The nginx-operator image. The same image is the backup agent: NginxBackup
# Jobs and CronJobs and the restore init containers of NginxOperator pods run
# "operator backup" and "operator restore" from it (the operator's
# --agent-image defaults to this image at the operator's own version). It
# also holds /nginx-reloader, which every nginx pod copies out of it
# (--reloader-image).
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg REVISION=$(git rev-parse HEAD) -t ghcr.io/nginx-operator/nginx-operator:dev .
#
# One image index for the platforms of `make images` (which builds the same
# index without Docker, see Documentation/images.md); BuildKit sets
# TARGETARCH per platform and the build stage cross-compiles for it:
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=... --build-arg REVISION=... \
#     -t registry.example.com/team/nginx-operator:dev --push .

# The builder runs on the build machine's platform and cross-compiles, so a
# multi-platform build needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH
# .git is not in the build context: the version comes from build arguments,
# as the Makefile's LDFLAGS set it.
ARG VERSION=v0.0.0-dev
ARG REVISION=unknown
WORKDIR /src
# Modules first, in their own layer and cache, so a source change does not
# download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
# CGO off: the binary is static and runs on distroless/static, which has no libc.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath \
      -ldflags "-s -w -X github.com/nginx-operator/nginx-operator/pkg/version.Version=${VERSION} -X github.com/nginx-operator/nginx-operator/pkg/version.Revision=${REVISION}" \
      -o /out/operator ./cmd/operator && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w" -o /out/nginx-reloader ./cmd/nginx-reloader

# distroless/static: CA certificates (for S3 over HTTPS), tzdata and a
# non-root user, nothing else to patch.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/operator /operator
# The nginx pods' init container copies the reloader out of this image.
COPY --from=build /out/nginx-reloader /nginx-reloader
# Numeric, so the kubelet can verify runAsNonRoot without resolving a name.
USER 65532:65532
ENTRYPOINT ["/operator"]
