# nginx-operator. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X github.com/nginx-operator/nginx-operator/pkg/version.Version=$(VERSION) \
            -X github.com/nginx-operator/nginx-operator/pkg/version.Revision=$(REVISION)
CONTROLLER_GEN := go tool controller-gen
# Tests of different packages run in parallel, each package on its own cluster.
TEST_FLAGS ?= -timeout 20m -p 2
CLUSTER_DIR ?= .cache/cluster

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the operator binary into bin/operator.
	go build -ldflags '$(LDFLAGS)' -o bin/operator ./cmd/operator

.PHONY: generate
generate: ## Regenerate deepcopy code, CRDs, RBAC, the API reference, bundle.yaml and the OLM bundle.
	$(CONTROLLER_GEN) object paths=./pkg/apis/...
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdembedded config/crd/bases/nginx.operator.dev_nginxoperators.yaml config/crd/bases/nginx.operator.dev_nginxgatewayparameters.yaml
	$(CONTROLLER_GEN) rbac:roleName=nginx-operator paths=./pkg/... output:rbac:artifacts:config=config/rbac
	$(MAKE) --no-print-directory apidocs bundle

.PHONY: apidocs
apidocs: ## Generate Documentation/api.md from the Go API types (crd-ref-docs, templates in hack/apidocs) and the embedded types' rules in the CRD (hack/crdembedded).
	go tool crd-ref-docs --log-level=WARN --renderer=markdown --source-path=pkg/apis --max-depth=30 \
		--config=hack/apidocs/config.yaml --templates-dir=hack/apidocs/templates \
		--output-path=$(or $(APIDOCS_OUT),Documentation/api.md)
	go run ./hack/crdembedded -apidocs=$(or $(APIDOCS_OUT),Documentation/api.md) config/crd/bases/nginx.operator.dev_nginxoperators.yaml config/crd/bases/nginx.operator.dev_nginxgatewayparameters.yaml

.PHONY: bundle
bundle: ## Build bundle.yaml and the Helm chart's generated files (charts/nginx-operator) from config/, and the OLM bundle in bundle/.
	go run ./hack/bundle -config config/default -o bundle.yaml
	@if [ -d hack/olm ]; then go run ./hack/olm -o bundle; fi

.PHONY: verify
verify: generate ## Fail when generated files are stale or gofmt/go vet complain.
	@git diff --exit-code --stat -- . || { echo "generated files are stale: run 'make generate' and commit the result" >&2; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- config pkg bundle.yaml bundle charts Documentation jsonnet)" || { git status --porcelain -- config pkg bundle.yaml bundle charts Documentation jsonnet; echo "untracked generated files: commit them" >&2; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go')); test -z "$$out" || { echo "gofmt needed: $$out" >&2; exit 1; }
	go vet ./...
	cd hack/certmanager && go vet ./...
	bash -n hack/*.sh .ci/run

.PHONY: kube-binaries
kube-binaries: ## Build (once) etcd, kube-apiserver, controller-manager, scheduler, kubectl and kwok into the user cache.
	@bash hack/install-kube-binaries.sh >/dev/null

.PHONY: node-binaries
node-binaries: ## Build (once) kubelet, kube-proxy, containerd, ctr and CoreDNS, and install runc, CNI plugins, iptables and conntrack, for the tests' real node.
	@bash hack/install-node-binaries.sh >/dev/null

.PHONY: test-deps
test-deps: kube-binaries ## Install what the tests run for real: Kubernetes binaries, nginx 1.26 (built from source), Prometheus, the nginx exporter, cert-manager's controllers, versitygw (S3), helm, a real node (kubelet, containerd, runc, CNI).
	@bash hack/install-test-deps.sh
	@bash hack/install-nginx.sh >/dev/null
	@bash hack/install-prometheus.sh >/dev/null
	@bash hack/install-prometheus-operator.sh >/dev/null
	@bash hack/install-cert-manager.sh >/dev/null
	@bash hack/install-versitygw.sh >/dev/null
	@bash hack/install-helm.sh >/dev/null
	@bash hack/install-node-binaries.sh >/dev/null
	@$(UNIT_TEST) -run '^$$' $(PRODUCT_PKGS) >/dev/null

# The tiers that need their tools run through hack/gotest: go test's own
# output (each package's result, every failed test's whole output), then the
# count of tests passed, failed and skipped; a skip not on the allow-list
# $(SKIPS) (each entry with its reason) fails the run.
SKIPS  ?= hack/gotest/skips.txt
GOTEST  = go run ./hack/gotest -skips=$(SKIPS)

# The packages that take longest run first (go test starts packages in the
# order it is given them, -p at a time): begun last, the hostile corpus alone
# kept one core busy for the last ten minutes of make test.
LONGEST_FIRST := ./test/hostile ./test/chaos ./test/conformance ./test/realpods ./test/realpods/install ./test/e2e ./test/realpods/rollout

# verify has run every vet check on every package and its tests already, so
# go test's own (a subset of them) is off. Each of the 53 test binaries is
# linked again on every run and a link holds one of the -p slots; without
# the symbol table and DWARF (a test's stack traces keep their files and
# lines) pkg/nginx's links in 3.0 s instead of 3.4 s.
.PHONY: test
test: test-deps verify ## Verify, then run unit, integration and e2e tests against a real local control plane; prints the skip count and fails on a skip not in hack/gotest/skips.txt.
	CI=$${CI:-} NGINX_OPERATOR_REQUIRE_TOOLS=1 $(GOTEST) $(TEST_FLAGS) -vet=off -ldflags='-s -w' $(LONGEST_FIRST) ./...

# The three tiers (README, "Tests"): end-to-end tests live under these
# directories of test/; the integration tier is everything else. The unit
# tier is `go test -short` of the product's packages (not the test
# framework's nor hack/'s tooling, which the integration tier tests), built
# with the tag unit, which leaves out the files that run the operator
# in-process (they carry //go:build !unit), so no unit test binary links it.
# Linking its 25 test binaries is most of its time on two cores: without
# cgo each links internally (no cgo stubs for net and os/user), and the
# linker, a Go program, collects its garbage less often under GOGC=400
# (together 101 s down to 57 s, with the product's packages alone).
# Nothing else builds without cgo, so on a new machine the first run would
# compile the whole dependency tree again (69 s); test-deps builds and links
# the unit tier once, running no test, and costs a second when it has.
UNIT_TEST = CGO_ENABLED=0 GOGC=400 go test -short -tags unit -vet=off -ldflags="-s -w"
E2E_DIRS := e2e chaos upgrade realpods bench hostile conformance
E2E_PKGS  = $(shell go list ./... | grep -E '/test/($(subst $() $(),|,$(E2E_DIRS)))(/|$$)')
UNIT_PKGS = $(shell go list ./... | grep -v -E '/test/($(subst $() $(),|,$(E2E_DIRS)))(/|$$)')
PRODUCT_PKGS = $(shell go list ./... | grep -v -E '/(test|hack)(/|$$)')

.PHONY: test-unit
test-unit: ## Unit tier: the product's pure tests (go test -short; no cluster, no installed binaries, no root), under a minute.
	$(UNIT_TEST) $(PRODUCT_PKGS)

.PHONY: test-integration
test-integration: test-deps ## Integration tier: the packages outside test/'s end-to-end suites, with a real control plane, nginx, promtool and Prometheus.
	NGINX_OPERATOR_REQUIRE_TOOLS=1 $(GOTEST) $(TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-e2e
test-e2e: test-deps ## End-to-end tier: test/e2e, test/realpods, test/chaos, test/upgrade, test/hostile, test/conformance on local clusters and a real node.
	NGINX_OPERATOR_REQUIRE_TOOLS=1 $(GOTEST) $(TEST_FLAGS) $(E2E_PKGS)

# Instance counts of test/bench (make bench BENCH_N=100 for a quick run) and
# where it writes performance.json and performance.svg.
BENCH_N   ?= 100,1000,3000
BENCH_OUT ?= Documentation

.PHONY: test-chaos
test-chaos: test-deps ## Only the chaos tests (leader kills during churn, apiserver/etcd restarts, webhook outage), verbosely: about 4 minutes; make test runs them too.
	NGINX_OPERATOR_REQUIRE_TOOLS=1 go test -count=1 -timeout 30m -v ./test/chaos

.PHONY: test-realpods
test-realpods: test-deps ## Only the real-pod tests (bundle.yaml on a real kubelet/containerd node: probes, leader Lease, webhook, serving, Prometheus, rollouts, backup/restore), verbosely; make test runs them too.
	NGINX_OPERATOR_REQUIRE_TOOLS=1 go test -count=1 -timeout 15m -v ./test/realpods/...

# Gateway API's conformance suite (sigs.k8s.io/gateway-api/conformance, the
# version go.mod requires) against bundle.yaml on a local cluster with a real
# node: test/conformance, which make test runs too (it fails when a core
# test does not pass). This target runs it alone and writes the report to
# $(CONFORMANCE_REPORTS), in the layout of the gateway-api repository's
# conformance/reports, named after VERSION.
GATEWAY_API_VERSION  = $(shell go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api/conformance)
CONFORMANCE_REPORTS ?= conformance/reports/$(GATEWAY_API_VERSION)/nginx-operator

.PHONY: conformance
conformance: test-deps ## Run Gateway API's conformance suite (profiles GATEWAY-HTTP, -GRPC, -TLS, -TCP and -UDP, the features the GatewayClass claims; make test runs it too) and rewrite its report in conformance/reports/.
	NGINX_OPERATOR_REQUIRE_TOOLS=1 CONFORMANCE_REPORT_DIR=$(CURDIR)/$(CONFORMANCE_REPORTS) CONFORMANCE_VERSION=$(VERSION) \
		go test -count=1 -timeout 40m -v ./test/conformance/

.PHONY: bench
bench: test-deps ## Run the benchmarks (convergence vs a floor, API requests, CPU, RSS, heap); writes $(BENCH_OUT)/performance.{json,svg}.
	BENCH_N=$(BENCH_N) BENCH_OUT=$(BENCH_OUT) NGINX_OPERATOR_REQUIRE_TOOLS=1 \
		go test -p 1 -timeout 4h -run '^$$' -bench . -benchtime 1x ./...

.PHONY: bench-gateway
bench-gateway: test-deps ## Only the Gateway scale benchmark on the real node (routes attached one at a time, 64 HTTPS listeners, 1,000 endpoints; BENCH_ROUTES, BENCH_LISTENERS, BENCH_ENDPOINTS).
	NGINX_OPERATOR_REQUIRE_TOOLS=1 go test -timeout 3h -run '^$$' -bench BenchmarkGatewayScale -benchtime 1x -v ./test/realpods

# Images built with Go alone (hack/images, Documentation/images.md): one
# docker-archive per image in $(OUT); PUSH=1 also pushes them to $(REGISTRY)
# (default: bundle.yaml's registry) with $(TAG) (default: bundle.yaml's tag).
# The operator image is an image index of $(PLATFORMS) (also written as
# $(OUT)/operator.oci.tar; operator.tar is this machine's platform); the test
# images are built for this machine only.
REGISTRY  ?=
TAG       ?=
PUSH      ?=
IMAGES    ?=
OUT       ?= bin/images
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: images
images: ## Build the operator image index (PLATFORMS) and the nginx, exporter and pause test images without Docker into bin/images; PUSH=1 REGISTRY=... pushes them.
	go run ./hack/images -out $(OUT) -version $(VERSION) -revision $(REVISION) -platforms $(PLATFORMS) \
		$(if $(REGISTRY),-registry $(REGISTRY)) $(if $(TAG),-tag $(TAG)) \
		$(if $(filter 1 true yes,$(PUSH)),-push) $(if $(IMAGES),-only $(IMAGES))

# A release (hack/release.sh): VERSION=v1.2.3 REGISTRY=registry.example.com/team;
# PUSH=0 only builds into dist/$(VERSION); INSECURE=1 for a plain-HTTP registry.
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: release
release: ## Build bundle.yaml, the Helm chart, the OLM bundle and the operator image index with VERSION stamped into dist/VERSION, and push image and chart to REGISTRY.
	VERSION=$(VERSION) REGISTRY=$(REGISTRY) PLATFORMS=$(PLATFORMS) PUSH=$(or $(PUSH),1) INSECURE=$(or $(INSECURE),0) bash hack/release.sh

.PHONY: cluster-up
cluster-up: kube-binaries ## Start the local cluster (etcd, apiserver, controller-manager, scheduler, kwok nodes).
	go run ./hack/localcluster up -dir $(CLUSTER_DIR)

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and delete its state.
	go run ./hack/localcluster down -dir $(CLUSTER_DIR)

.PHONY: run
run: kube-binaries ## Run the operator against $$KUBECONFIG, or a new local cluster (with a real node where one can run; NODE=kwok for fake nodes) serving example/.
	bash hack/run.sh

.PHONY: clean
clean: ## Remove build output (not the cached Kubernetes binaries).
	rm -rf bin
