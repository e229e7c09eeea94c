# Shared settings of the local cluster (sourced by up.sh, down.sh, env.sh and the others).
# Everything the cluster writes lives under $ELO_CLUSTER_DIR except the host side effects that
# down.sh undoes (sysctls, iptables KUBE-* chains, the bridge, cgroups, /run/containerd, the links
# to the other nodes).
#
# Nodes: ELO_NODES real nodes (default 2; 1 to 4). The first, $NODE_NAME, runs the control plane
# and its containerd, kubelet and kube-proxy in the host's namespaces. Each further node (b, c, d)
# runs its own containerd, kubelet and kube-proxy in a network and a mount namespace of its own
# (hack/local-cluster/nodens.sh): see extra_node below.

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
# every node's pod CIDR is a /24 of it (10.244.<node index>.0/24); kube-proxy's clusterCIDR
CLUSTER_CIDR=10.244.0.0/16
NODE_COUNT=${ELO_NODES:-2}
EXTRA_NODE_LETTERS=(b c d)

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

# extra_nodes: the letters of the nodes after the first that ELO_NODES asks for.
extra_nodes() {
  case "$NODE_COUNT" in 1|2|3|4) ;; *) log "ELO_NODES=$NODE_COUNT: want 1 to 4"; return 1 ;; esac
  echo "${EXTRA_NODE_LETTERS[@]:0:$(( NODE_COUNT - 1 ))}"
}

# started_extra_nodes: the letters of the extra nodes a cluster has state of (what down.sh undoes,
# whatever ELO_NODES says now).
started_extra_nodes() {
  local d
  for d in "$STATE"/node-?; do [ -d "$d" ] && echo "${d##*-}"; done
}

# extra_node L: the settings of extra node L (b = index 1, c = 2, d = 3), as XN_* variables.
#   XN_NAME      Node name (elo-node-L)
#   XN_DIR       its state: containerd root and state, kubelet root, CNI, logs, namespaces
#   XN_NS        its namespace files (XN_NS/net, XN_NS/mnt), under a private bind mount
#   XN_IP        its InternalIP, on eth0 of its network namespace; XN_GW the host's end (XN_LINK)
#   XN_POD_CIDR  10.244.<index>.0/24, routed by the host through XN_IP
#   XN_CGROUP    its kubelet's cgroupRoot (/sys/fs/cgroup/<hierarchy>/XN_CGROUP)
#   XN_SOCK      its containerd's socket as the host sees it; inside its mount namespace it is the
#                standard /run/containerd/containerd.sock, where the operator's daemon finds it
extra_node() {
  local l=$1 i
  case "$l" in b) i=1 ;; c) i=2 ;; d) i=3 ;; *) log "no extra node $l"; return 1 ;; esac
  XN_NAME=$NODE_NAME-$l
  XN_DIR=$STATE/node-$l
  XN_NS=$XN_DIR/ns
  XN_IP=10.243.$i.2
  XN_GW=10.243.$i.1
  XN_LINK=elo-v$l
  XN_POD_CIDR=10.244.$i.0/24
  XN_CGROUP=$NODE_NAME-$l
  XN_SOCK=$XN_DIR/run/containerd/containerd.sock
}

# in_node L CMD...: runs CMD in extra node L's network and mount namespaces.
in_node() {
  extra_node "$1" || return 1
  shift
  nsenter --net="$XN_NS/net" --mount="$XN_NS/mnt" -- "$@"
}

# registry_addr: an address this host serves a test registry on that the local cluster made and
# every node's containerd reaches: the host's end of the first extra node's link (node A is in the
# host's network namespace, the others route through their link), else loopback (one node).
registry_addr() {
  local l
  for l in $(extra_nodes); do extra_node "$l"; echo "$XN_GW"; return; done
  echo 127.0.0.1
}

# node_sockets: "NAME=SOCKET" of every node's containerd, as the host reaches it.
node_sockets() {
  local l
  echo "$NODE_NAME=$CONTAINERD_SOCK"
  for l in $(extra_nodes); do extra_node "$l"; echo "$XN_NAME=$XN_SOCK"; done
}

ctr_() { "$CONTAINERD_BIN/ctr" --address "$CONTAINERD_SOCK" "$@"; }
kc() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
