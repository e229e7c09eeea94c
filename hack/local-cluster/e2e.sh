#!/usr/bin/env bash
# Runs the real-node end-to-end suites (make test-e2e): builds the images, starts the local
# cluster, runs the Ginkgo suites in test/e2e (which deploys the operator from config/default),
# test/quickstart (which runs the quick start of docs/install.md as written: images pushed to
# a registry it serves, `make deploy` with a plain kubectl) and test/helm (two `make release`s:
# the first's install.yaml applied and deleted, then installed, upgraded and uninstalled with the
# Helm chart; HELM names helm), one after the other,
# and always stops the cluster afterwards (trap), undoing every host change.
#
# test/e2e runs on E2E_PROCS Ginkgo processes (default 2, the Ginkgo CLI built from go.mod's
# version): the specs marked Serial run alone after the others (docs/e2e.md says which and why).
#
# E2E_KEEP_CLUSTER=true leaves the cluster up after the run (then: make cluster-down).
# Extra arguments go to every suite, written as for `go test`, e.g.
# hack/local-cluster/e2e.sh -ginkgo.focus=CRR (the Ginkgo CLI gets --focus=CRR).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE=$ROOT/hack/local-cluster
t0=$(date +%s)

cleanup() {
  local rc=$?
  if [ "${E2E_KEEP_CLUSTER:-false}" = true ]; then
    log "cluster left up (E2E_KEEP_CLUSTER=true): make cluster-down to stop it"
  else
    "$HERE/down.sh" || rc=1
  fi
  log "e2e finished rc=$rc in $(( $(date +%s) - t0 ))s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

procs=${E2E_PROCS:-2}
case "$procs" in [1-9]) ;; *) log "E2E_PROCS=$procs: want a number of Ginkgo processes from 1 to 9"; exit 2 ;; esac
# The go test form of each extra argument (-ginkgo.X) is the Ginkgo CLI's --X.
ginkgo_args=()
for a in "$@"; do
  case "$a" in -ginkgo.*) ginkgo_args+=("--${a#-ginkgo.}") ;; *) ginkgo_args+=("$a") ;; esac
done
ginkgo=$(go_tool ginkgo github.com/onsi/ginkgo/v2/ginkgo)
imagebuilder=$(go_tool imagebuilder ./hack/imagebuilder)
"$imagebuilder" -out "$IMAGES_DIR" -tag e2e
log "images built ($(( $(date +%s) - t0 ))s)"
"$HERE/up.sh" >/dev/null
log "cluster up ($(( $(date +%s) - t0 ))s)"

export KUBECONFIG=$KUBECONFIG_FILE
export KUBECTL=$K8S_BIN/kubectl
export E2E_OPERATOR_IMAGE=localhost/enhanced-liveness-operator:e2e
export E2E_APP_IMAGE=localhost/e2e-app:e2e
# every node's containerd as this host reaches it (NAME=SOCKET ...), and the nodes' credentials
# (the kubelets' kubeconfigs, for the specs that compare the operator's node scope with theirs)
export E2E_IMAGES_DIR=$IMAGES_DIR E2E_NODE_CONTAINERD="$(node_sockets | paste -sd ' ')" E2E_CLUSTER_PKI=$PKI
# test/quickstart: where the node's containerd reads registry hosts (config_path), the node's address
export E2E_CONTAINERD_HOSTS_DIR=$STATE/containerd/certs.d E2E_NODE_IP=$(node_ip)
# test/helm: where its registry listens (an address the cluster made, not the host's eth0)
export E2E_REGISTRY_ADDR=$(registry_addr)
export E2E_REPORT_DIR=${E2E_REPORT_DIR:-$ROOT/bin/e2e-report}
export PATH=$K8S_BIN:$CONTAINERD_BIN:$PATH
cd "$ROOT"
# One suite after the other: they share the nodes, and each installs and removes the operator.
# Both steps run even when the first fails, as go test -p 1 ran them.
rc=0
"$ginkgo" --tags=e2e --procs="$procs" --timeout=90m --no-color -v "${ginkgo_args[@]}" ./test/e2e/ || rc=$?
go test -tags=e2e -p 1 ./test/quickstart/ ./test/helm/ -count=1 -timeout 60m -v -ginkgo.v "$@" || rc=$?
exit $rc
