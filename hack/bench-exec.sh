#!/usr/bin/env bash
# Exec-probe benchmark on the local node (make bench-exec; docs/daemon.md#performance): starts a
# one-node cluster unless one is up (its pods run on the first node), runs BENCH_EXEC_PODS pods of the e2e app in namespace
# execbench, measures test/bench/cmd/execbench on their containers (the daemon's CRI path, then
# the kubelet's, same command and period), deletes the namespace, and stops the cluster again if
# it started it. Extra arguments go to execbench. The node is machine-wide: on a shared machine
# run it under the node lock, flock -o /tmp/elo-node.lock make bench-exec.
set -euo pipefail
export ELO_NODES=${ELO_NODES:-1}
source "$(dirname "${BASH_SOURCE[0]}")/local-cluster/lib.sh"
PODS=${BENCH_EXEC_PODS:-10}
NS=execbench
APP_IMAGE=localhost/e2e-app:e2e

started=false
cleanup() {
  local rc=$?
  kc delete namespace "$NS" --ignore-not-found --timeout=120s >/dev/null 2>&1 || log "namespace $NS not deleted"
  if $started; then "$ROOT/hack/local-cluster/down.sh" || rc=1; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -f "$IMAGES_DIR/app.tar" ] || [ ! -f "$IMAGES_DIR/pause.tar" ]; then
  imagebuilder=$(go_tool imagebuilder ./hack/imagebuilder)
  "$imagebuilder" -out "$IMAGES_DIR" -tag e2e pause app
fi
pid_alive kubelet || started=true
"$ROOT/hack/local-cluster/up.sh" >/dev/null

kc create namespace "$NS" --dry-run=client -o yaml | kc apply -f - >/dev/null
for i in $(seq 60); do kc get serviceaccount default -n "$NS" >/dev/null 2>&1 && break; sleep 1; done
for i in $(seq "$PODS"); do
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: app-$i, namespace: $NS}
spec:
  nodeName: $NODE_NAME
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: $APP_IMAGE, imagePullPolicy: Never}
YAML
done | kc apply -f - >/dev/null
kc wait -n "$NS" --for=condition=Ready pod --all --timeout=180s >/dev/null
log "$PODS pods running in namespace $NS"

mkdir -p "$ROOT/bin/hack"
cd "$ROOT/test/bench"
go build -o "$ROOT/bin/hack/execbench" ./cmd/execbench
"$ROOT/bin/hack/execbench" -endpoint "unix://$CONTAINERD_SOCK" -namespace "$NS" -container app "$@"
