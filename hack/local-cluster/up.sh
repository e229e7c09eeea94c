#!/usr/bin/env bash
# Starts a one-node Kubernetes cluster on this machine: etcd, kube-apiserver, containerd (+ runc,
# CNI bridge), kube-controller-manager, kube-scheduler, kubelet and kube-proxy, all built from
# source (hack/build-k8s.sh, hack/build-containerd.sh) or installed from Debian packages. Idempotent: when the cluster is
# already up it only re-imports the images. On failure it runs down.sh (every host change undone).
#
# usage: hack/local-cluster/up.sh        then: export KUBECONFIG=$(hack/local-cluster/env.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE=$ROOT/hack/local-cluster
[ "$(id -u)" = 0 ] || { echo "up.sh must run as root (it starts a kubelet and containerd)" >&2; exit 1; }
t0=$(date +%s)

all_up() { local c; for c in "${COMPONENTS[@]}"; do pid_alive "$c" || return 1; done; }

import_images() {
  local f
  for f in "$IMAGES_DIR"/*.tar; do
    [ -f "$f" ] || continue
    # ctr's stderr carries a cgroup v1 deprecation warning on every call: shown only on failure
    ctr_ -n k8s.io images import --no-unpack=false "$f" >/dev/null 2>"$LOGS/ctr-import.log" \
      || { cat "$LOGS/ctr-import.log" >&2; return 1; }
    log "imported $(basename "$f")"
  done
}

if all_up; then
  log "cluster already up (state in $STATE)"
  import_images
  echo "$KUBECONFIG_FILE"
  exit 0
fi
if [ -d "$PIDS" ]; then
  log "a previous cluster is partly running: stopping it first"
  "$HERE/down.sh"
fi

# --- prerequisites -------------------------------------------------------------------------
if [ -S "$CONTAINERD_SOCK" ]; then
  log "$CONTAINERD_SOCK exists and no local cluster of ours is running: another containerd owns it; stop it first"
  exit 1
fi
"$HERE/prereqs.sh"

trap 'rc=$?; if [ $rc -ne 0 ]; then log "up failed (rc=$rc): running down.sh (it keeps the logs in bin/local-cluster-logs)"; "$HERE/down.sh" || true; fi' EXIT

mkdir -p "$PIDS" "$LOGS" "$PKI"
# --- record the host state that down.sh restores -------------------------------------------
if [ ! -f "$STATE/host.saved" ]; then
  {
    for s in "${SYSCTLS[@]}"; do
      [ -f "/proc/sys/$s" ] && echo "sysctl $s $(cat "/proc/sys/$s")"
    done
    for d in /run/containerd /run/crio /var/lib/cni /var/log/containers /var/log/pods /run/netns /etc/cni; do
      [ -e "$d" ] && echo "existed $d"
    done
    command -v nft >/dev/null && nft list tables 2>/dev/null | sed 's/^table /nfttable /'
    true
  } > "$STATE/host.saved"
fi

NODE_IP=$(node_ip)
[ -n "$NODE_IP" ] || { log "cannot find the node IP (eth0)"; exit 1; }
log "node $NODE_NAME at $NODE_IP, state in $STATE"

# --- PKI and configs ------------------------------------------------------------------------
pki=$(go_tool pki ./hack/local-cluster/pki)
"$pki" -dir "$PKI" -node-name "$NODE_NAME" -node-ip "$NODE_IP" \
  -service-ip "$SERVICE_IP" -server "https://$NODE_IP:$APISERVER_PORT"
"$HERE/configs.sh" "$NODE_IP"

# start NAME MATCH CMD...: starts CMD in its own session, detached from this shell, and records
# its PID (and a string of its command line, checked before it is ever signalled).
start() {
  local name=$1 match=$2; shift 2
  setsid "$@" > "$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
  echo "$match" > "$PIDS/$name.cmd"
}

# wait_for WHAT SECONDS CMD...: polls CMD every 0.5 s.
wait_for() {
  local what=$1 n=$(( $2 * 2 )); shift 2
  while ! "$@" >/dev/null 2>&1; do
    n=$((n - 1))
    if [ $n -le 0 ]; then log "timed out waiting for $what"; return 1; fi
    sleep 0.5
  done
  log "$what ready"
}

start etcd "$K8S_BIN/etcd" "$K8S_BIN/etcd" --name default --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
  --unsafe-no-fsync --log-level warn
wait_for etcd 30 curl -sf -m 2 "http://127.0.0.1:$ETCD_PORT/health"

start kube-apiserver "$K8S_BIN/kube-apiserver" "$K8S_BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" --bind-address 0.0.0.0 --secure-port "$APISERVER_PORT" \
  --advertise-address "$NODE_IP" --service-cluster-ip-range "$SERVICE_CIDR" \
  --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --authorization-mode Node,RBAC --allow-privileged=true --enable-aggregator-routing=true \
  --cert-dir "$STATE/apiserver" --profiling=false --v=1
wait_for kube-apiserver 120 kc get --raw /readyz

# PATH: containerd finds its runc shim there (runc itself is Debian's, in /usr/bin).
start containerd "$CONTAINERD_BIN/containerd" env PATH="$CONTAINERD_BIN:$PATH" \
  "$CONTAINERD_BIN/containerd" --config "$STATE/containerd/config.toml"
wait_for containerd 30 ctr_ version
import_images

start kube-controller-manager "$K8S_BIN/kube-controller-manager" "$K8S_BIN/kube-controller-manager" \
  --kubeconfig "$PKI/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$PKI/controller-manager.kubeconfig" --authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --use-service-account-credentials=true --leader-elect=false --bind-address 127.0.0.1 --secure-port 30257 \
  --cert-dir "$STATE/controller-manager" --v=1
start kube-scheduler "$K8S_BIN/kube-scheduler" "$K8S_BIN/kube-scheduler" --kubeconfig "$PKI/scheduler.kubeconfig" \
  --authentication-kubeconfig "$PKI/scheduler.kubeconfig" --authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port 30259 --v=1
start kubelet "$K8S_BIN/kubelet" "$K8S_BIN/kubelet" --config "$STATE/kubelet/config.yaml" \
  --kubeconfig "$PKI/kubelet-client.kubeconfig" --root-dir "$STATE/kubelet/root" \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
start kube-proxy "$K8S_BIN/kube-proxy" "$K8S_BIN/kube-proxy" --config "$STATE/kube-proxy.yaml" --v=1

wait_for "node $NODE_NAME" 120 kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
wait_for "default ServiceAccount" 60 kc get serviceaccount default -n default
untainted() { [ -z "$(kc get node "$NODE_NAME" -o jsonpath='{.spec.taints}')" ]; }
wait_for "untainted node" 60 untainted
for c in "${COMPONENTS[@]}"; do pid_alive "$c" || { log "$c exited: see $LOGS/$c.log"; exit 1; }; done

trap - EXIT
log "cluster up in $(( $(date +%s) - t0 ))s"
echo "$KUBECONFIG_FILE"
