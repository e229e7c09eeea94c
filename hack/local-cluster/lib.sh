# Shared settings of the local one-node cluster (sourced by up.sh, down.sh, env.sh).
# Everything the cluster writes lives under $ELO_CLUSTER_DIR except the host side effects that
# down.sh undoes (sysctls, iptables KUBE-* chains, the bridge, cgroups, /run/containerd).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
K8S_BIN=${K8S_BIN_DIR:-$ROOT/bin/k8s/${K8S_VERSION#v}-linux-$(go env GOARCH 2>/dev/null || echo amd64)}
TOOLS_BIN=$ROOT/bin/tools
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
CONTAINERD_BIN=${CONTAINERD_BIN_DIR:-$ROOT/bin/containerd/${CONTAINERD_VERSION#v}-linux-$(go env GOARCH 2>/dev/null || echo amd64)}
IMAGES_DIR=${ELO_IMAGES_DIR:-$ROOT/bin/images}

STATE=${ELO_CLUSTER_DIR:-/var/lib/elo-local-cluster}
PIDS=$STATE/pids
LOGS=$STATE/logs
PKI=$STATE/pki
KUBECONFIG_FILE=$PKI/admin.kubeconfig
# containerd listens on the standard socket path, so the operator's daemon finds it as on any node
# (its DaemonSet mounts /run/containerd). up.sh refuses to start if another containerd owns it.
CONTAINERD_SOCK=/run/containerd/containerd.sock

NODE_NAME=${ELO_NODE_NAME:-elo-node}
ETCD_PORT=32379
ETCD_PEER_PORT=32380
APISERVER_PORT=36443
KUBELET_PORT=30250
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
BRIDGE=elo-br0

# Host settings the node changes; their values are saved before start and restored by down.sh.
SYSCTLS=(net/ipv4/ip_forward vm/overcommit_memory kernel/panic kernel/panic_on_oops
  net/ipv4/conf/all/route_localnet net/bridge/bridge-nf-call-iptables
  net/bridge/bridge-nf-call-ip6tables net/netfilter/nf_conntrack_max
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

# Order matters: up starts them in this order, down stops them in reverse.
COMPONENTS=(etcd kube-apiserver containerd kube-controller-manager kube-scheduler kubelet kube-proxy)

log() { printf '[local-cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

node_ip() {
  local ip
  ip=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
  [ -n "$ip" ] || ip=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for(i=1;i<NF;i++) if ($i=="src") print $(i+1)}')
  echo "$ip"
}

# pid_alive NAME: the PID recorded for NAME is running and is still the program we started.
pid_alive() {
  local f=$PIDS/$1.pid pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -d "/proc/$pid" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$(cat "$PIDS/$1.cmd" 2>/dev/null || echo "$1")"
}

# go_tool NAME PKG: compiles this repo's helper program PKG (e.g. ./hack/imagebuilder) into
# bin/hack/NAME and prints its path. `go run` would do the same silently, which on a cold cache is
# minutes of nothing printed; hack/progress.sh says what is being compiled meanwhile.
go_tool() {
  mkdir -p "$ROOT/bin/hack"
  (cd "$ROOT" && "$ROOT/hack/progress.sh" "compiling $2" go build -v -o "$ROOT/bin/hack/$1" "$2") >&2
  echo "$ROOT/bin/hack/$1"
}

ctr_() { "$CONTAINERD_BIN/ctr" --address "$CONTAINERD_SOCK" "$@"; }
kc() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
