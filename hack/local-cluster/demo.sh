#!/usr/bin/env bash
# make demo: builds everything, starts the local node, deploys the operator like a user does,
# deploys a 6-replica app under a policy, makes part of the fleet sick and narrates what the
# operator does. Leaves the cluster up to explore; `make demo-down` stops it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE=$ROOT/hack/local-cluster
t0=$(date +%s)
banner() { printf '\n\033[1m== %s\033[0m  (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }
narrator=
on_exit() {
  local rc=$?
  [ -n "$narrator" ] && kill "$narrator" 2>/dev/null
  if [ $rc -ne 0 ]; then
    echo "demo failed (rc=$rc). The cluster is left up for a look (logs: $LOGS); make demo-down stops it." >&2
  fi
}
trap on_exit EXIT

banner "1. building the binaries and images (no Docker engine: docker-archive tarballs)"
(cd "$ROOT" && go run ./hack/imagebuilder -out "$IMAGES_DIR" -tag e2e)

banner "2. starting a one-node cluster on this machine (kubelet + containerd, built here)"
"$HERE/up.sh" >/dev/null
export KUBECONFIG=$KUBECONFIG_FILE

banner "3. deploying the operator: config/default through kustomize, as a user does"
"$HERE/deploy.sh" localhost/enhanced-liveness-operator:e2e
kc get pods -n enhanced-liveness-system -o wide

banner "4. deploying 'checkout' (6 replicas, HTTP liveness probe) under the policy 'shop'"
kc delete namespace demo --ignore-not-found --wait=true >/dev/null
kc apply -f "$HERE/demo/shop.yaml" >/dev/null
kc -n demo rollout status deploy/checkout --timeout=120s >/dev/null
mapfile -t pods < <(kc -n demo get pods -l app=checkout --sort-by=.metadata.name -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP}{"\n"}{end}')
first=${pods[0]%% *}
echo "The webhook moved the liveness probe out of the pod spec, so the kubelet will not act on it:"
echo "  spec livenessProbe of $first: '$(kc -n demo get pod "$first" -o jsonpath='{.spec.containers[0].livenessProbe}')' (empty)"
echo "  annotation: $(kc -n demo get pod "$first" -o jsonpath='{.metadata.annotations.enhancedliveness\.io/container-probe-context}')"
echo "The node daemon probes it instead; the operator decides whether to restart."

sick() { curl -sf -m 3 -X POST "http://$1:8080/admin/sick" >/dev/null; }
healthy() { curl -sf -m 3 -X POST "http://$1:8080/admin/healthy" >/dev/null; }

go run "$ROOT/hack/local-cluster/narrate" -namespace demo &
narrator=$!

banner "5. two pods go bad (a stuck process): the operator restarts them, one at a time (maxUnavailable 1)"
for p in "${pods[@]:0:2}"; do echo "  making ${p%% *} sick"; sick "${p##* }"; done
sleep 25

banner "6. a shared dependency fails: 5 of 6 pods fail their probe at once"
echo "  restarting them would not help and would take the whole service down: the storm breaker holds"
echo "  (a failure reported before the others are seen may still be restarted, within maxUnavailable)"
for p in "${pods[@]:1:5}"; do
  ip=$(kc -n demo get pod "${p%% *}" -o jsonpath='{.status.podIP}' 2>/dev/null || true)
  [ -n "$ip" ] && sick "$ip" || true
done
sleep 30

banner "7. the dependency recovers: the probes pass again; the hold should clear with nothing else restarted"
for ip in $(kc -n demo get pods -l app=checkout -o jsonpath='{.items[*].status.podIP}'); do healthy "$ip" || true; done
sleep 35
kill "$narrator" 2>/dev/null; wait "$narrator" 2>/dev/null || true; narrator=

banner "where things stand"
kc -n demo get pods -o custom-columns='POD:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount,READY:.status.containerStatuses[0].ready'
kc -n demo get crr 2>/dev/null || true
kc -n demo get elp shop -o jsonpath='{range .status.conditions[*]}  {.type}={.status}: {.message}{"\n"}{end}' || true
echo
echo "The cluster is still up. Explore it with:"
echo "  export KUBECONFIG=$KUBECONFIG_FILE; $K8S_BIN/kubectl get pods,crr,elp -n demo"
echo "Stop it (and undo every host change) with:  make demo-down"
