# Shared settings of `make test-olm` (sourced by hack/olm/*.sh), on top of the local node's.
source "$(dirname "${BASH_SOURCE[0]}")/../local-cluster/lib.sh"

OLM_HACK=$ROOT/hack/olm
OLM_TEST_DIR=${OLM_TEST_DIR:-$ROOT/bin/olm-test}
# The test registry: HTTPS on loopback (operator-sdk reads images over HTTPS from this machine;
# the node's containerd pulls through it), a fixed port next to the node's.
REGISTRY=127.0.0.1:35000
REGISTRY_DIR=$OLM_TEST_DIR/registry
REGISTRY_CA=$REGISTRY_DIR/ca.crt
OLM_NAMESPACE=olm
OPERATOR_PACKAGE=enhanced-liveness-operator
OPERATOR_NAMESPACE=enhanced-liveness-system
# The upgrade of `make test-olm`: two bundles of this tree, the second replacing the first.
UPGRADE_FROM=0.1.0
UPGRADE_TO=0.1.1
# The release installed from its catalog: `make release` of this tree, pushed with `make
# release-push`, its dist/catalog.yaml served by a catalog image, subscribed to as docs/install.md
# says.
CATALOG_RELEASE=0.1.2-rc.1

# elapsed: seconds since $t0 (set by the caller)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

# wait_until WHAT SECONDS CMD...: polls CMD every 2 s, says so every 30 s, fails with a message
# naming WHAT after SECONDS.
wait_until() {
  local what=$1 limit=$2 start=$SECONDS next=30; shift 2
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS - start >= limit )); then log "timed out after ${limit}s waiting for $what"; return 1; fi
    if (( SECONDS - start >= next )); then log "still waiting for $what ($(( SECONDS - start ))s)"; next=$(( next + 30 )); fi
    sleep 2
  done
  log "$what ($(( SECONDS - start ))s)"
}
