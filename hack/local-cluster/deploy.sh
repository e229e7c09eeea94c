#!/usr/bin/env bash
# Deploys the operator into the local cluster the way a user does: config/default through
# kustomize, with the image set to the tarball imported by up.sh (no registry). The manager then
# creates the node daemon DaemonSet itself. Waits until the manager and the daemon are ready.
#
# usage: hack/local-cluster/deploy.sh [IMG]        (default localhost/enhanced-liveness-operator:e2e)
#        hack/local-cluster/deploy.sh --delete [IMG]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
action=apply
if [ "${1:-}" = --delete ]; then action=delete; shift; fi
IMG=${1:-localhost/enhanced-liveness-operator:e2e}
KUSTOMIZE=${KUSTOMIZE:-$ROOT/bin/kustomize}
NS=${OPERATOR_NAMESPACE:-enhanced-liveness-system}
export KUBECONFIG=${KUBECONFIG:-$KUBECONFIG_FILE}

# A throw-away overlay so the repo's config/manager/kustomization.yaml is left untouched (this is
# what `make deploy IMG=...` renders, without its `kustomize edit` of a committed file).
overlay=$(mktemp -d)
trap 'rm -rf "$overlay"' EXIT
cat > "$overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$overlay" "$ROOT/config/default")
images:
- name: controller
  newName: ${IMG%:*}
  newTag: ${IMG##*:}
YAML
"$KUSTOMIZE" build --load-restrictor LoadRestrictionsNone "$overlay" > "$overlay/install.yaml"

if [ "$action" = delete ]; then
  # The user's way out (make undeploy): the manager first, so that its leader, shutting down,
  # hands back the Node conditions it set (NotJudged) before the CRDs and its RBAC go.
  make -C "$ROOT" --no-print-directory undeploy ignore-not-found=true IMG="$IMG" \
    KUBECTL="$K8S_BIN/kubectl" KUSTOMIZE="$KUSTOMIZE"
  exit 0
fi
kc apply --server-side --force-conflicts -f "$overlay/install.yaml" >/dev/null
log "applied config/default with image $IMG"
# Generous: a manager becomes Ready only when its webhook serving certificate, written by the
# manager into a Secret, has reached its Secret volume (kubelet sync) and the cert rotator's
# exponentially backed-off file check has seen it (measured here: 20 s to 3.5 min).
t0=$(date +%s)
kc -n "$NS" rollout status deployment --timeout=420s >&2
log "manager rollout complete in $(( $(date +%s) - t0 ))s"
# the manager creates the daemon DaemonSet: wait for it to exist, then to be ready
for _ in $(seq 1 120); do
  ds=$(kc -n "$NS" get daemonset -o name 2>/dev/null | head -1)
  [ -n "$ds" ] && break
  sleep 1
done
[ -n "$ds" ] || { log "the manager did not create the daemon DaemonSet in $NS"; exit 1; }
kc -n "$NS" rollout status "$ds" --timeout=180s >&2
log "operator ready: $(kc -n "$NS" get deploy,ds --no-headers | awk '{print $1 " " $2}' | paste -sd ' ')"
