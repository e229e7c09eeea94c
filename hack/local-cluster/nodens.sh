#!/usr/bin/env bash
# Makes (up) or removes (down) the host side of one further node of the local cluster: a network
# and a mount namespace of its own, the veth link and routes that join it to the host, and its
# kubelet's cgroup root. up.sh starts the node's containerd, kubelet and kube-proxy inside both
# namespaces (nsenter); down.sh stops them by PID, then runs `nodens.sh down`, which also kills
# whatever process is left in the node (its pods' cgroups, its namespaces).
#
#   network   eth0 = XN_IP/24 (the node's InternalIP), default route through the host's end of the
#             link (XN_LINK, XN_GW); the host routes the node's pod CIDR through XN_IP. The node's
#             iptables rules (kube-proxy's), bridge and sysctls live and die with the namespace.
#   mount     the default paths below are bind-mounted from the node's own directory, so that the
#             operator's daemon DaemonSet (hostPath /run/containerd, /run/crio) finds this node's
#             containerd as on any node, and the kubelet's and CNI's default paths are the node's
#             own. The node's containerd, kubelet and their pods' mounts stay in this namespace:
#             the host sees none of them.
#
# usage: nodens.sh up|down L        (L: b, c or d; see extra_node in lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "nodens.sh must run as root" >&2; exit 1; }
action=${1:-} l=${2:-}
extra_node "$l"

# Each is bind-mounted from $XN_DIR<path> in the node's mount namespace. The mount points are made
# on the host if missing (down.sh removes those that did not exist before up.sh).
PRIVATE_PATHS=(/run/containerd /run/crio /var/log/containers /var/lib/cni)

up() {
  if mountpoint -q "$XN_NS/net" 2>/dev/null; then log "$XN_NAME: namespaces already made"; return 0; fi
  # Namespace files can be bind-mounted only on a mount that does not propagate into them.
  mkdir -p "$XN_NS"
  mountpoint -q "$XN_NS" || { mount --bind "$XN_NS" "$XN_NS" && mount --make-private "$XN_NS"; }
  touch "$XN_NS/net" "$XN_NS/mnt"
  local binds="" p
  for p in "${PRIVATE_PATHS[@]}"; do
    mkdir -p "$p" "$XN_DIR$p"
    binds+="mount --bind '$XN_DIR$p' '$p'; "
  done
  unshare --net="$XN_NS/net" --mount="$XN_NS/mnt" --propagation private \
    sh -ec "$binds ip link set lo up; echo 1 > /proc/sys/net/ipv4/ip_forward"

  ip link add "$XN_LINK" type veth peer name eth0 netns "$XN_NS/net"
  ip addr add "$XN_GW/24" dev "$XN_LINK"
  ip link set "$XN_LINK" up
  nsenter --net="$XN_NS/net" sh -ec "ip addr add $XN_IP/24 dev eth0; ip link set eth0 up; ip route add default via $XN_GW"
  ip route add "$XN_POD_CIDR" via "$XN_IP" dev "$XN_LINK"

  # The kubelet wants its cgroupRoot to exist in every hierarchy; a new cpuset gets no CPUs or
  # memory nodes of its own, so they are copied from the root.
  local h
  for h in /sys/fs/cgroup/*/; do
    mkdir -p "$h$XN_CGROUP"
    if [ -f "${h}cpuset.cpus" ]; then
      cat "${h}cpuset.cpus" > "$h$XN_CGROUP/cpuset.cpus"
      cat "${h}cpuset.mems" > "$h$XN_CGROUP/cpuset.mems"
    fi
  done
  log "$XN_NAME: namespaces, link $XN_LINK ($XN_GW - $XN_IP), route $XN_POD_CIDR, cgroup root /$XN_CGROUP"
}

# ns_inode KIND: the inode of the node's KIND namespace ("" when its file is not mounted).
ns_inode() { mountpoint -q "$XN_NS/$1" 2>/dev/null && stat -L -c %i "$XN_NS/$1" || true; }

# kill_left: the processes still in the node once its components are stopped: its pods' (in its
# cgroup root) and any in its namespaces (its containerd's shims, host-network containers).
kill_left() {
  local net mnt pid pids=""
  net=$(ns_inode net) mnt=$(ns_inode mnt)
  pids=$(find /sys/fs/cgroup/*/"$XN_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un || true)
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    if { [ -n "$net" ] && [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "net:[$net]" ]; } ||
      { [ -n "$mnt" ] && [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "mnt:[$mnt]" ]; }; then
      pids+=" $pid"
    fi
  done
  for pid in $pids; do
    [ -d "/proc/$pid" ] || continue
    log "$XN_NAME: killing $pid left in the node ($(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-80))"
    kill -KILL "$pid" 2>/dev/null || true
  done
  [ -z "$pids" ] || sleep 0.5
}

down() {
  kill_left
  local f h
  for f in net mnt; do mountpoint -q "$XN_NS/$f" 2>/dev/null && umount "$XN_NS/$f"; done
  mountpoint -q "$XN_NS" 2>/dev/null && umount "$XN_NS"
  # The link goes with the network namespace; it stays while something still holds the namespace.
  if ip link show "$XN_LINK" >/dev/null 2>&1; then ip link del "$XN_LINK" && log "$XN_NAME: deleted link $XN_LINK"; fi
  # (a killed process leaves its cgroup a moment later)
  local try
  for try in 1 2 3 4 5; do
    for h in /sys/fs/cgroup/*/"$XN_CGROUP"; do
      [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    ls -d /sys/fs/cgroup/*/"$XN_CGROUP" >/dev/null 2>&1 || break
    sleep 1
  done
  for h in /sys/fs/cgroup/*/"$XN_CGROUP"; do [ -d "$h" ] && log "$XN_NAME: cannot remove cgroup $h"; done
  true
}

case "$action" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down L" >&2; exit 2 ;;
esac
