#!/usr/bin/env bash
# make demo: builds everything, starts the local node, deploys the operator like a user does,
# deploys a 6-replica app under a policy in Shadow mode, and hack/local-cluster/narrate plays the
# story: first in Shadow (steps 5-6: a shared dependency down on 5 pods, which the kubelet restarts
# over and over, and what the operator would have done instead, from the policy's figures), then,
# after the switch to Enforce (step 7: the policy's mode and a rollout restart, as a user does it),
# steps 8-10 (a stuck process, the dependency down again, its recovery). It narrates what the
# operator does and judges each step against the story's expected outcome from what really
# happened. Exits non-zero, naming the step, when a step did not happen as the story says. Leaves
# the cluster up to explore; `make demo-down` stops it.
set -euo pipefail
# The story is about one workload's pods: one node keeps it short (ELO_NODES=2 for two).
export ELO_NODES=${ELO_NODES:-1}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE=$ROOT/hack/local-cluster
t0=$(date +%s)
banner() { printf '\n\033[1m== %s\033[0m  (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }
on_exit() {
  local rc=$?
  if [ $rc -eq 1 ] && [ "${story_played:-}" = yes ]; then
    echo "make demo: FAILED, the operator did not do what the story says (verdicts above). The cluster is left up for a look; make demo-down stops it." >&2
  elif [ $rc -ne 0 ]; then
    echo "demo failed (rc=$rc). The cluster is left up for a look (logs: $LOGS); make demo-down stops it." >&2
  fi
}
trap on_exit EXIT

banner "1. building the tools, binaries and images (no Docker engine: docker-archive tarballs)"
imagebuilder=$(go_tool imagebuilder ./hack/imagebuilder)
narrate=$(go_tool narrate ./hack/local-cluster/narrate)
"$imagebuilder" -out "$IMAGES_DIR" -tag e2e

banner "2. starting a $NODE_COUNT-node cluster on this machine (kubelet + containerd, built here)"
"$HERE/up.sh" >/dev/null
export KUBECONFIG=$KUBECONFIG_FILE

banner "3. deploying the operator: config/default through kustomize, as a user does"
"$HERE/deploy.sh" localhost/enhanced-liveness-operator:e2e
kc get pods -n enhanced-liveness-system -o wide

banner "4. deploying 'checkout' (6 replicas, HTTP liveness probe) under the policy 'shop', in Shadow mode"
kc delete namespace demo --ignore-not-found --wait=true --timeout=120s >/dev/null
kc apply -f "$HERE/demo/shop.yaml" >/dev/null
kc -n demo rollout status deploy/checkout --timeout=180s >/dev/null
first=$(kc -n demo get pods -l app=checkout --sort-by=.metadata.name -o jsonpath='{.items[0].metadata.name}')
echo "In Shadow mode the kubelet stays in charge: the pod keeps its liveness probe, and is enrolled beside it:"
echo "  spec livenessProbe of $first: $(kc -n demo get pod "$first" -o jsonpath='{.spec.containers[0].livenessProbe.httpGet}')"
echo "  label enhancedliveness.io/mode: $(kc -n demo get pod "$first" -o jsonpath='{.metadata.labels.enhancedliveness\.io/mode}')"
echo "The node daemon probes it too; the operator judges every failure and restarts nothing."

# The steps, what the story expects of each and the verdicts are in narrate/story.go.
story_played=yes
rc=0
"$narrate" -phase shadow -namespace demo -policy shop -deployment checkout -t0 "$t0" || rc=$?

banner "7. switching 'checkout' to Enforce: the policy's mode, then new pods (a pod keeps the mode it was admitted in)"
echo "+ kubectl -n demo patch elp shop --type merge -p '{\"spec\":{\"mode\":\"Enforce\"}}'"
kc -n demo patch elp shop --type merge -p '{"spec":{"mode":"Enforce"}}' >/dev/null
echo "+ kubectl -n demo rollout restart deploy/checkout"
kc -n demo rollout restart deploy/checkout >/dev/null
kc -n demo rollout status deploy/checkout --timeout=180s >/dev/null
first=$(kc -n demo get pods -l app=checkout --sort-by=.metadata.name -o jsonpath='{.items[0].metadata.name}')
echo "The webhook moved the liveness probe out of the new pods' spec, so the kubelet will not act on it:"
echo "  spec livenessProbe of $first: '$(kc -n demo get pod "$first" -o jsonpath='{.spec.containers[0].livenessProbe}')' (empty)"
echo "  annotation: $(kc -n demo get pod "$first" -o jsonpath='{.metadata.annotations.enhancedliveness\.io/container-probe-context}')"
echo "The node daemon probes it; the operator decides whether to restart."
"$narrate" -phase enforce -namespace demo -policy shop -deployment checkout -t0 "$t0" || rc=$?

banner "where things stand"
kc -n demo get pods -o custom-columns='POD:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount,READY:.status.containerStatuses[0].ready'
kc -n demo get crr 2>/dev/null || true
kc -n demo get elp shop -o jsonpath='{range .status.conditions[*]}  {.type}={.status}: {.message}{"\n"}{end}' || true
echo
echo "The cluster is still up. Explore it with:"
echo "  export KUBECONFIG=$KUBECONFIG_FILE; $K8S_BIN/kubectl get pods,crr,elp -n demo"
echo "Stop it (and undo every host change) with:  make demo-down"
exit $rc
