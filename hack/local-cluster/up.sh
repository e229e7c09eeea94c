#!/usr/bin/env bash
# Starts a Kubernetes cluster of ELO_NODES real nodes (default 2) on this machine: etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler, and on each node a containerd (+ runc,
# CNI bridge), a kubelet and a kube-proxy, all built from source (hack/build-k8s.sh,
# hack/build-containerd.sh) or installed from Debian packages. The first node runs in the host's
# namespaces; each further one in a network and a mount namespace of its own (nodens.sh).
# Idempotent: when the cluster is already up it only re-imports the images. On failure it runs
# down.sh (every host change undone).
#
# usage: hack/local-cluster/up.sh        then: export KUBECONFIG=$(hack/local-cluster/env.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE=$ROOT/hack/local-cluster
[ "$(id -u)" = 0 ] || { echo "up.sh must run as root (it starts a kubelet and containerd)" >&2; exit 1; }
t0=$(date +%s)

EXTRA=$(extra_nodes)
# every component of every node, as recorded in $PIDS
components() {
  local c l
  for c in "${COMPONENTS[@]}"; do echo "$c"; done
  for l in $EXTRA; do for c in containerd kubelet kube-proxy; do echo "$c-$l"; done; done
}
# (a cluster with more nodes than asked for is used as it is)
all_up() { local c; for c in $(components); do pid_alive "$c" || return 1; done; }

# import_images [SOCKET]: imports bin/images/*.tar into one node's containerd (all nodes' without
# an argument).
import_images() {
  local f sock node
  if [ $# = 0 ]; then
    for node in $(node_sockets); do import_images "${node#*=}" || return 1; done
    return 0
  fi
  sock=$1
  for f in "$IMAGES_DIR"/*.tar; do
    [ -f "$f" ] || continue
    # ctr's stderr carries a cgroup v1 deprecation warning on every call: shown only on failure
    "$CONTAINERD_BIN/ctr" --address "$sock" -n k8s.io images import --no-unpack=false "$f" >/dev/null 2>"$LOGS/ctr-import.log" \
      || { cat "$LOGS/ctr-import.log" >&2; return 1; }
  done
  log "imported $(cd "$IMAGES_DIR" && ls -- *.tar 2>/dev/null | paste -sd ' ') into $sock"
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

# --- the further nodes' namespaces, links and cgroup roots ------------------------------------
# First, before anything mounts: a mount namespace is a copy of the host's mounts when it is made.
for l in $EXTRA; do "$HERE/nodens.sh" up "$l"; done
# Forwarding between the nodes (the CNI bridge plugin would also set it, at node A's first pod).
echo 1 > /proc/sys/net/ipv4/ip_forward

# --- PKI and configs ------------------------------------------------------------------------
pki=$(go_tool pki ./hack/local-cluster/pki)
pki_nodes=(-node "$NODE_NAME=$NODE_IP")
for l in $EXTRA; do extra_node "$l"; pki_nodes+=(-node "$XN_NAME=$XN_IP"); done
"$pki" -dir "$PKI" "${pki_nodes[@]}" -apiserver-ip "$NODE_IP" \
  -service-ip "$SERVICE_IP" -server "https://$NODE_IP:$APISERVER_PORT"
"$HERE/configs.sh" "$STATE" "$NODE_NAME" "$NODE_IP" "$POD_CIDR"
for l in $EXTRA; do extra_node "$l"; "$HERE/configs.sh" "$XN_DIR" "$XN_NAME" "$XN_IP" "$XN_POD_CIDR" "$XN_CGROUP"; done

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
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --allow-privileged=true --enable-aggregator-routing=true \
  --cert-dir "$STATE/apiserver" --profiling=false --v=1
wait_for kube-apiserver 120 kc get --raw /readyz

# PATH: containerd finds its runc shim there (runc itself is Debian's, in /usr/bin).
start containerd "$CONTAINERD_BIN/containerd" env PATH="$CONTAINERD_BIN:$PATH" \
  "$CONTAINERD_BIN/containerd" --config "$STATE/containerd/config.toml"
for l in $EXTRA; do
  extra_node "$l"
  start "containerd-$l" "$XN_DIR/containerd/config.toml" nsenter --net="$XN_NS/net" --mount="$XN_NS/mnt" -- \
    env PATH="$CONTAINERD_BIN:$PATH" "$CONTAINERD_BIN/containerd" --config "$XN_DIR/containerd/config.toml"
done
wait_for containerd 30 ctr_ version
for l in $EXTRA; do extra_node "$l"; wait_for "containerd of $XN_NAME" 30 "$CONTAINERD_BIN/ctr" --address "$XN_SOCK" version; done
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
  --kubeconfig "$PKI/kubelet-client-$NODE_NAME.kubeconfig" --root-dir "$STATE/kubelet/root" \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
start kube-proxy "$K8S_BIN/kube-proxy" "$K8S_BIN/kube-proxy" --config "$STATE/kube-proxy.yaml" --v=1
# The further nodes' kubelet and kube-proxy share their node's namespaces with its containerd: the
# kubelet's volume mounts must be where runc bind-mounts them from.
for l in $EXTRA; do
  extra_node "$l"
  start "kubelet-$l" "$XN_DIR/kubelet/config.yaml" nsenter --net="$XN_NS/net" --mount="$XN_NS/mnt" -- \
    "$K8S_BIN/kubelet" --config "$XN_DIR/kubelet/config.yaml" \
    --kubeconfig "$PKI/kubelet-client-$XN_NAME.kubeconfig" --root-dir "$XN_DIR/kubelet/root" \
    --hostname-override "$XN_NAME" --node-ip "$XN_IP" --v=1
  start "kube-proxy-$l" "$XN_DIR/kube-proxy.yaml" nsenter --net="$XN_NS/net" --mount="$XN_NS/mnt" -- \
    "$K8S_BIN/kube-proxy" --config "$XN_DIR/kube-proxy.yaml" --v=1
done

nodes=("$NODE_NAME")
for l in $EXTRA; do extra_node "$l"; nodes+=("$XN_NAME"); done
untainted() { [ -z "$(kc get node "$1" -o jsonpath='{.spec.taints}')" ]; }
for n in "${nodes[@]}"; do
  wait_for "node $n" 120 kc wait --for=condition=Ready "node/$n" --timeout=1s
  wait_for "untainted node $n" 60 untainted "$n"
done
wait_for "default ServiceAccount" 60 kc get serviceaccount default -n default
for c in $(components); do pid_alive "$c" || { log "$c exited: see $LOGS/$c.log"; exit 1; }; done

trap - EXIT
log "cluster of ${#nodes[@]} node(s) up in $(( $(date +%s) - t0 ))s: ${nodes[*]}"
echo "$KUBECONFIG_FILE"
