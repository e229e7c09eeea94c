#!/usr/bin/env bash
# Installs OLM on the local node for `make test-olm`: OLM's CRDs (from the operator-framework/api
# module), then hack/olm/olm.yaml with the olm and opm images from the test registry; waits until
# the olm-operator and the catalog-operator are available and the OLMConfig exists.
#
# usage: hack/olm/install.sh OLM_IMAGE OPM_IMAGE
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# = 2 ] || { echo "usage: $0 OLM_IMAGE OPM_IMAGE" >&2; exit 2; }
OLM_IMAGE=$1 OPM_IMAGE=$2
t0=$(date +%s)

crds=$(cd "$ROOT" && go run ./hack/olm/crds)
echo "$crds" | kc apply --server-side --force-conflicts -f - >/dev/null
echo "$crds" | kc wait --for condition=Established --timeout=60s -f - >/dev/null
log "OLM CRDs established ($(elapsed))"

sed -e "s|OLM_IMAGE|$OLM_IMAGE|g" -e "s|OPM_IMAGE|$OPM_IMAGE|g" "$OLM_HACK/olm.yaml" | kc apply --server-side -f - >/dev/null
for d in olm-operator catalog-operator; do
  kc -n "$OLM_NAMESPACE" rollout status "deployment/$d" --timeout=180s >&2 \
    || { kc -n "$OLM_NAMESPACE" describe pods -l "app=$d" >&2; exit 1; }
done
log "OLM ready: olm-operator and catalog-operator available ($(elapsed))"
