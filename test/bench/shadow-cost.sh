#!/usr/bin/env bash
# The added cost of Shadow mode on the local nodes: N pods with an HTTP liveness probe (period 1 s)
# run three ways, each measured over WINDOW seconds after it settled:
#   native   not enrolled: the kubelet probes them, the daemon does not;
#   shadow   enrolled under a Shadow policy: the kubelet probes them and the daemon probes them too;
#   failing  the same Shadow pods with a dependency down that survives restarts: the kubelet
#            restarts them over and over and the operator counts what it would have done.
# It prints the node daemons' CPU (process_cpu_seconds_total, both nodes), their report writes
# (enhanced_liveness_daemon_status_writes_total), the leader manager's API writes
# (rest_client_requests_total, POST/PUT/PATCH) and the kubelet's restarts in each window, and the
# per-pod and per-restart figures docs/performance.md records.
#
# Needs the local cluster up with the operator deployed (E2E_KEEP_CLUSTER=true
# hack/local-cluster/e2e.sh leaves it so, or make demo). Usage: test/bench/shadow-cost.sh
# [N=40] [WINDOW=120]. Cleans up its namespace and cluster-scoped objects at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
source hack/local-cluster/lib.sh
export KUBECONFIG=$KUBECONFIG_FILE

N=${N:-40}
WINDOW=${WINDOW:-120}
NS=shadow-cost
METRICS_PORT=10290 # internal/controller/daemonset DefaultMetricsPort
OP_NS=enhanced-liveness-system

if ! kc -n "$OP_NS" get deploy enhanced-liveness-operator-controller-manager >/dev/null 2>&1; then
  echo "shadow-cost: the operator is not deployed on the local cluster (hack/local-cluster/deploy.sh localhost/enhanced-liveness-operator:e2e)" >&2
  exit 2
fi

cleanup() {
  kc delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kc delete clusterrolebinding,clusterrole "$NS-metrics" --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup
kc wait --for=delete namespace/"$NS" --timeout=120s >/dev/null 2>&1 || true

kc create namespace "$NS" >/dev/null
kc -n "$NS" create serviceaccount scraper >/dev/null
kc create clusterrole "$NS-metrics" --non-resource-url=/metrics --verb=get >/dev/null
kc create clusterrolebinding "$NS-metrics" --clusterrole="$NS-metrics" --serviceaccount="$NS:scraper" >/dev/null
TOKEN=$(kc -n "$NS" create token scraper --duration=1h)

# scrape URL METRIC [LABEL-FILTER]: the sum of the metric's samples whose labels match the regexp.
scrape() {
  curl -sk --max-time 10 -H "Authorization: Bearer $TOKEN" "$1" |
    awk -v m="$2" -v f="${3:-}" '$1 ~ "^"m"([{]|$)" && $0 ~ f { s += $NF } END { printf "%.6f\n", s }'
}
# calc EXPR [DECIMALS]: arithmetic without bc.
calc() { awk "BEGIN { printf \"%.${2:-6}f\", $1 }"; }
node_ips() { kc get nodes -o jsonpath='{range .items[*]}{.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}'; }
leader_ip() {
  local holder
  holder=$(kc -n "$OP_NS" get lease bcbe718c.enhancedliveness.io -o jsonpath='{.spec.holderIdentity}')
  kc -n "$OP_NS" get pod "${holder%%_*}" -o jsonpath='{.status.podIP}'
}
restarts() { kc -n "$NS" get pods -l app=cost -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | awk '{s+=$1} END {print s+0}'; }

# sample: "daemon-cpu-seconds daemon-writes manager-writes kubelet-restarts" now.
sample() {
  local cpu=0 writes=0 ip
  for ip in $(node_ips); do
    cpu=$(calc "$cpu + $(scrape "https://$ip:$METRICS_PORT/metrics" process_cpu_seconds_total)")
    writes=$(calc "$writes + $(scrape "https://$ip:$METRICS_PORT/metrics" enhanced_liveness_daemon_status_writes_total 'result="success"')")
  done
  local mw
  mw=$(scrape "https://$(leader_ip):8443/metrics" rest_client_requests_total 'method="(POST|PUT|PATCH)"')
  echo "$cpu $writes $mw $(restarts)"
}

deploy() { # deploy ENROLLED STICKY
  local annotations=""
  [ "$1" = true ] && annotations='annotations: {enhancedliveness.io/enabled: "true"}'
  kc apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: cost, namespace: $NS}
spec:
  replicas: $N
  selector: {matchLabels: {app: cost}}
  template:
    metadata:
      labels: {app: cost}
      $annotations
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: localhost/e2e-app:e2e
        imagePullPolicy: Never
        resources: {requests: {cpu: 1m, memory: 8Mi}}
        env: [{name: DEPENDENCY_FILE, value: /shared/dependency-down}]
        volumeMounts: [{name: shared, mountPath: /shared}]
        ports: [{containerPort: 8080, name: http}]
        livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1, failureThreshold: 3}
      volumes: [{name: shared, emptyDir: {}}]
EOF
  kc -n "$NS" rollout status deploy/cost --timeout=300s >/dev/null
}

# measure NAME: a sample, WINDOW seconds, a sample; prints the deltas.
declare -A CPU WRITES MWRITES RESTARTS
measure() {
  sleep 15 # settled: the new pods' first probes and the report's first writes are not counted
  read -r c0 w0 m0 r0 < <(sample)
  sleep "$WINDOW"
  read -r c1 w1 m1 r1 < <(sample)
  CPU[$1]=$(calc "$c1 - $c0"); WRITES[$1]=$(calc "$w1 - $w0")
  MWRITES[$1]=$(calc "$m1 - $m0"); RESTARTS[$1]=$((r1 - r0))
  printf '%-8s daemon CPU %8.3f s, report writes %5.0f, manager API writes %5.0f, kubelet restarts %4d in %ss\n' \
    "$1" "${CPU[$1]}" "${WRITES[$1]}" "${MWRITES[$1]}" "${RESTARTS[$1]}" "$WINDOW"
}

echo "$N pods, HTTP liveness probe every 1 s, windows of ${WINDOW}s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
deploy false
measure native

kc -n "$NS" delete deploy cost --wait=true >/dev/null
kc -n "$NS" wait --for=delete pods -l app=cost --timeout=120s >/dev/null 2>&1 || true
kc apply -f - >/dev/null <<EOF
apiVersion: policy.enhancedliveness.io/v1alpha1
kind: EnhancedLivenessPolicy
metadata: {name: shadow, namespace: $NS}
spec: {mode: Shadow}
EOF
kc -n "$NS" wait elp/shadow --for=condition=Ready --timeout=60s >/dev/null
deploy true
measure shadow

for ip in $(kc -n "$NS" get pods -l app=cost -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}'); do
  curl -s --max-time 5 -X POST "http://$ip:8080/admin/dependency-down" >/dev/null || true
done
measure failing

probes=$((N * WINDOW))
cpu_per_probe=$(calc "(${CPU[shadow]} - ${CPU[native]}) * 1000000 / $probes" 1)
echo
echo "added by Shadow, healthy: daemon CPU $cpu_per_probe µs per probe run ($(calc "(${CPU[shadow]} - ${CPU[native]}) / $WINDOW / $N * 1000" 4) millicores per pod at period 1 s), report writes $(calc "(${WRITES[shadow]} - ${WRITES[native]}) / $N" 2) per pod in ${WINDOW}s, manager API writes $(calc "(${MWRITES[shadow]} - ${MWRITES[native]}) / $N" 2) per pod"
if [ "${RESTARTS[failing]}" -gt 0 ]; then
  echo "failing: per kubelet restart, report writes $(calc "${WRITES[failing]} / ${RESTARTS[failing]}" 2), manager API writes $(calc "${MWRITES[failing]} / ${RESTARTS[failing]}" 2)"
fi
