#!/usr/bin/env bash
# make run: runs the operator from source against a cluster.
#
# With KUBECONFIG unset, it first brings up the local cluster of test/framework
# (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes) under
# .cache/cluster. It then installs the CRDs, starts the operator, waits until it
# is ready, applies example/ and keeps the operator in the foreground until
# Ctrl-C. `make cluster-down` stops the local cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=$(bash hack/install-kube-binaries.sh)
kubectl="$bin_dir/kubectl"
health=${HEALTH_ADDR:-127.0.0.1:8081}
metrics=${METRICS_ADDR:-127.0.0.1:8443}

webhook_port=${WEBHOOK_PORT:-9443}
if [ -z "${KUBECONFIG:-}" ]; then
  if [ ! -f .cache/cluster/pids ]; then
    go run ./hack/localcluster up -dir .cache/cluster
  fi
  export KUBECONFIG=$PWD/.cache/cluster/kubeconfig
  echo "using the local cluster: export KUBECONFIG=$KUBECONFIG"
  # The local apiserver reaches the conversion webhook on loopback.
  conversion=(--namespace=default --webhook-port="$webhook_port" --webhook-url="https://127.0.0.1:$webhook_port/convert")
else
  echo "using the cluster of KUBECONFIG=$KUBECONFIG"
  # A remote apiserver cannot call a webhook on this machine: v1beta1 only.
  conversion=(--conversion-webhook=false)
fi

"$kubectl" apply --server-side -f config/crd/bases
"$kubectl" wait --for condition=Established --timeout=60s \
  crd/nginxoperators.nginx.operator.dev crd/nginxmonitors.nginx.operator.dev crd/nginxbackups.nginx.operator.dev

if curl -fsS "http://$health/readyz" >/dev/null 2>&1; then
  echo "something already answers on $health (an operator of an earlier make run?): stop it or set HEALTH_ADDR" >&2
  exit 1
fi
mkdir -p bin
go build -o bin/operator ./cmd/operator
bin/operator run --health-probe-bind-address="$health" --metrics-bind-address="$metrics" "${conversion[@]}" "$@" &
operator=$!
# Whatever ends this script (Ctrl-C, a failed step) also stops the operator.
trap 'kill -TERM $operator 2>/dev/null; wait $operator' EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 120); do
  if curl -fsS "http://$health/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 $operator 2>/dev/null; then echo "the operator exited" >&2; exit 1; fi
  sleep 0.5
done
curl -fsS "http://$health/readyz" >/dev/null || { echo "the operator did not become ready" >&2; exit 1; }
echo "operator ready (pid $operator): http://$health/readyz"

"$kubectl" apply --server-side -R -f example/
# The examples' gateways want certificates of their own: self-signed ones here.
if command -v openssl >/dev/null; then
  tls_dir=$(mktemp -d)
  for pair in team-a/gateway-tls team-b/shop-tls; do
    ns=${pair%%/*} name=${pair##*/}
    if ! "$kubectl" -n "$ns" get secret "$name" >/dev/null 2>&1; then
      openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$name.$ns.example" \
        -keyout "$tls_dir/$name.key" -out "$tls_dir/$name.crt" 2>/dev/null
      "$kubectl" -n "$ns" create secret tls "$name" --cert="$tls_dir/$name.crt" --key="$tls_dir/$name.key"
    fi
  done
  rm -rf "$tls_dir"
else
  echo "openssl not found: create the TLS Secrets team-a/gateway-tls and team-b/shop-tls to make the gateways Available"
fi
cat <<MSG

The operator runs against the cluster; try:
  export KUBECONFIG=$KUBECONFIG
  $kubectl get nginx -A
Stop it with Ctrl-C; stop the local cluster with: make cluster-down
MSG
wait $operator
