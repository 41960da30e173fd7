#!/usr/bin/env bash
# make run: runs the operator from source against a cluster.
#
# With KUBECONFIG unset, it first brings up the local cluster of test/framework.
# Where a real node can run (Linux, root, the node's binaries from
# `make test-deps`) the cluster has one (kubelet, containerd, runc: pods
# really run, with the project's images) and lives as long as this script;
# it forwards 127.0.0.1:$FORWARD_PORT to team-a's www Service and
# 127.0.0.1:$FORWARD_GATEWAY_PORT to the Service of the Gateway team-a/web
# (example/web-gateway.yaml), and the script ends by showing that page through
# both. Elsewhere (or with NODE=kwok) the cluster's nodes are kwok's, under
# .cache/cluster, left running for `make cluster-down`: pods are scheduled
# but run nothing.
#
# It then installs the CRDs and Gateway API's (the standard channel go.mod
# pins, unless the cluster has some of them already: `localcluster
# gateway-crds`), starts the operator, waits until it is ready, applies
# example/ and keeps the operator in the foreground until Ctrl-C.
#
# On the real node the operator runs with its defaults: it reads each pod's
# reloader over the route the node gives the host to its pods' subnet, as it
# does from its pod in a cluster, so `kubectl get nginx` shows LOADED and a
# change's reload. kwok's pods and a remote cluster's are out of its reach.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=$(bash hack/install-kube-binaries.sh)
kubectl="$bin_dir/kubectl"
health=${HEALTH_ADDR:-127.0.0.1:8081}
metrics=${METRICS_ADDR:-127.0.0.1:8443}

webhook_port=${WEBHOOK_PORT:-9443}
forward=127.0.0.1:${FORWARD_PORT:-8880}
forward_gateway=127.0.0.1:${FORWARD_GATEWAY_PORT:-8881}
node_dir=.cache/node-cluster
image_args=()
# The operator's flags that say where it cannot reach the pods; none on the
# real node.
reach_args=()
cluster=
kwok=
mkdir -p bin
# Every path needs it: it installs Gateway API's CRDs.
go build -o bin/localcluster ./hack/localcluster
if [ -z "${KUBECONFIG:-}" ]; then
  if [ "${NODE:-real}" != kwok ] && why=$(bin/localcluster node-check); then
    rm -f "$node_dir/ready"
    bin/localcluster node -dir "$node_dir" -listen "$forward" -forward "team-a/www:80,$forward_gateway=team-a/web-gateway:80" &
    cluster=$!
    # Whatever ends this script also stops the cluster and its node.
    trap 'kill -TERM $cluster 2>/dev/null; wait $cluster' EXIT
    echo "starting a local cluster with a real node (the first start builds images: minutes)"
    until [ -f "$node_dir/ready" ]; do
      kill -0 $cluster 2>/dev/null || { echo "the local cluster did not start: see $node_dir/*.log" >&2; exit 1; }
      sleep 1
    done
    export KUBECONFIG=$PWD/$node_dir/kubeconfig
    mapfile -t image_args < "$node_dir/operator-args"
  else
    [ "${NODE:-real}" = kwok ] && why="NODE=kwok"
    echo "no real node here (${why:-unknown}; \`make test-deps\` installs one where Linux and root allow): kwok nodes schedule the examples' pods but run nothing"
    echo "kwok's pods run no reloader to read: the operator runs with --read-pod-status=false and LOADED stays empty"
    reach_args=(--read-pod-status=false)
    kwok=1
    if [ ! -f .cache/cluster/pids ]; then
      bin/localcluster up -dir .cache/cluster
    fi
    export KUBECONFIG=$PWD/.cache/cluster/kubeconfig
  fi
  echo "using the local cluster: export KUBECONFIG=$KUBECONFIG"
  # The local apiserver reaches the conversion webhook on loopback.
  conversion=(--namespace=default --webhook-port="$webhook_port" --webhook-url="https://127.0.0.1:$webhook_port/convert")
else
  echo "using the cluster of KUBECONFIG=$KUBECONFIG"
  # A remote apiserver cannot call a webhook on this machine: v1beta1 only.
  conversion=(--conversion-webhook=false)
  echo "that cluster's pods are seldom reachable from here: the operator runs with --read-pod-status=false and LOADED stays empty (bash hack/run.sh --read-pod-status=true where pod IPs are routable)"
  reach_args=(--read-pod-status=false)
fi

"$kubectl" apply --server-side -f config/crd/bases
# A CRD the apiserver has just stored may have no conditions yet, which
# kubectl wait reports as an error instead of waiting: ask again.
for try in $(seq 10); do
  if "$kubectl" wait --for condition=Established --timeout=60s \
    crd/nginxoperators.nginx.operator.dev crd/nginxmonitors.nginx.operator.dev crd/nginxbackups.nginx.operator.dev \
    crd/nginxgatewayparameters.nginx.operator.dev crd/nginxexternalauths.nginx.operator.dev; then
    break
  fi
  [ "$try" -lt 10 ] || { echo "the CRDs did not become established" >&2; exit 1; }
  sleep 1
done
# The operator looks for Gateway API when it starts, not later: its CRDs
# come before it. A cluster that has some of them keeps what it has.
bin/localcluster gateway-crds

if curl -fsS "http://$health/readyz" >/dev/null 2>&1; then
  echo "something already answers on $health (an operator of an earlier make run?): stop it or set HEALTH_ADDR" >&2
  exit 1
fi
go build -o bin/operator ./cmd/operator
bin/operator run --health-probe-bind-address="$health" --metrics-bind-address="$metrics" "${reach_args[@]}" "${conversion[@]}" "${image_args[@]}" "$@" &
operator=$!
# Whatever ends this script (Ctrl-C, a failed step) also stops the operator,
# then the cluster it started.
trap 'kill -TERM $operator 2>/dev/null; wait $operator; [ -z "$cluster" ] || { kill -TERM $cluster 2>/dev/null; wait $cluster; }' EXIT
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
# fetch ADDR WHAT prints the page of www.team-a.example through ADDR.
# Ready pods are not yet reachable: kube-proxy on the node programs the
# Service's endpoints a moment later, and refuses connections until then.
fetch() {
  for _ in $(seq 30); do
    if curl -fsS --max-time 10 -H 'Host: www.team-a.example' "http://$1/"; then
      return 0
    fi
    sleep 1
  done
  echo "$2 does not answer through $1" >&2
  return 1
}
if [ -n "$cluster" ]; then
  "$kubectl" -n team-a wait nginxoperator/www --for=condition=Available --timeout=180s
  echo
  echo "team-a/www serves on the real node; through $forward:"
  echo "  curl -H 'Host: www.team-a.example' http://$forward/"
  fetch "$forward" team-a/www || exit 1
  # Programmed: a ready pod of the Gateway's instance serves its listeners.
  echo
  "$kubectl" -n team-a wait gateway/web --for=condition=Programmed --timeout=180s ||
    { echo "the Gateway team-a/web is not Programmed: kubectl -n team-a describe gateway web" >&2; exit 1; }
  echo "the Gateway team-a/web sends www.team-a.example to team-a/www; through its Service web-gateway, on $forward_gateway:"
  echo "  curl -H 'Host: www.team-a.example' http://$forward_gateway/"
  fetch "$forward_gateway" "the Gateway team-a/web" || exit 1
  # A rollout is complete once every pod's reloader said it serves the
  # current configuration: then LOADED equals READY for every example.
  echo
  "$kubectl" wait nginxoperators --all -A --for=condition=Progressing=False --timeout=120s >/dev/null ||
    echo "some instances have yet to load their configuration (see their Progressing condition):"
  "$kubectl" get nginxoperators -A
  "$kubectl" get gateways -A
  stop="Stop the operator, the cluster and its node with Ctrl-C."
else
  # Nothing here forwards to the Gateway: kwok's pods run nothing, and a
  # remote cluster's Service is for kubectl port-forward to reach. Its
  # status still shows the operator took it: a short wait, not a failure.
  echo
  if "$kubectl" -n team-a wait gateway/web --for=condition=Accepted --timeout=60s >/dev/null; then
    if [ -n "$kwok" ]; then
      echo "the Gateway team-a/web is Accepted; kwok's pods run no nginx, so nothing serves its page here (a real node does: make test-deps)."
      echo "Its PROGRAMMED, below, takes kwok's word that the pod of web-gateway is ready."
    else
      echo "the Gateway team-a/web is Accepted; its page, once Programmed:"
      echo "  kubectl -n team-a port-forward service/web-gateway ${forward_gateway##*:}:80 &"
      echo "  curl -H 'Host: www.team-a.example' http://$forward_gateway/"
    fi
  else
    echo "the Gateway team-a/web is not Accepted (kubectl -n team-a describe gateway web; the operator's log says whether its Gateway controllers run)"
  fi
  "$kubectl" get gateways -A || true
  stop="Stop the operator with Ctrl-C; stop the local cluster with: make cluster-down"
fi
cat <<MSG

The operator runs against the cluster; try:
  export KUBECONFIG=$KUBECONFIG
  $kubectl get nginx -A
$stop
MSG
wait $operator
