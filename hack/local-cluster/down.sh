#!/usr/bin/env bash
# Stops exactly what up.sh started (by recorded PID) and undoes every host side effect: pod
# sandboxes, containers and shims, mounts, kubepods cgroups, the CNI bridge, KUBE-*/CNI-* iptables
# chains, the further nodes' namespaces, links and cgroup roots (nodens.sh down), the sysctls
# (restored to the values saved by up.sh) and the directories the nodes created. Safe to run at any
# time, any number of times. Logs are kept in bin/local-cluster-logs.
set -uo pipefail # no -e on purpose: every cleanup step runs even if an earlier one fails
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "down.sh must run as root" >&2; exit 1; }
if [ ! -d "$STATE" ]; then log "nothing to stop ($STATE absent)"; exit 0; fi
t0=$(date +%s)

stop() {
  local name=$1 pid i
  if pid_alive "$name"; then
    pid=$(cat "$PIDS/$name.pid")
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 30); do [ -d "/proc/$pid" ] || break; sleep 0.5; done
    if [ -d "/proc/$pid" ]; then log "$name ($pid) did not stop on TERM: KILL"; kill -KILL "$pid" 2>/dev/null; sleep 0.5; fi
    log "stopped $name ($pid)"
  fi
  rm -f "$PIDS/$name.pid" "$PIDS/$name.cmd"
}

EXTRA=$(started_extra_nodes)
# 1. node agents first, so nothing recreates pods while they are removed
for l in $EXTRA; do stop "kube-proxy-$l"; stop "kubelet-$l"; done
for c in kube-proxy kubelet kube-scheduler kube-controller-manager; do stop "$c"; done

# 2a. the further nodes: pod sandboxes through their containerd (from the host, through the
#     socket in the node's directory), their containerd, then whatever is left in them, their
#     namespaces (every mount of theirs goes with the mount namespace), link and cgroup root
for l in $EXTRA; do
  extra_node "$l"
  if pid_alive "containerd-$l" && [ -x "$TOOLS_BIN/crictl" ]; then
    timeout 120 "$TOOLS_BIN/crictl" --runtime-endpoint "unix://$XN_SOCK" --timeout 30s rmp -a -f >/dev/null 2>&1 \
      || log "crictl rmp on $XN_NAME failed; its processes are killed below"
  fi
  stop "containerd-$l"
  "$ROOT/hack/local-cluster/nodens.sh" down "$l"
done

# 2b. pod sandboxes through CRI (stops containers, tears down the CNI network and the netns)
if pid_alive containerd && [ -x "$TOOLS_BIN/crictl" ]; then
  timeout 120 "$TOOLS_BIN/crictl" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 30s rmp -a -f >/dev/null 2>&1 \
    || log "crictl rmp failed; falling back to runc"
fi
# containers left behind (e.g. containerd already dead): kill them with runc under our runc root
RUNC_ROOT=$STATE/containerd/runc/k8s.io
if [ -d "$RUNC_ROOT" ]; then
  for id in $(runc --root "$RUNC_ROOT" list -q 2>/dev/null); do
    runc --root "$RUNC_ROOT" kill -a "$id" KILL 2>/dev/null; sleep 0.2
    runc --root "$RUNC_ROOT" delete -f "$id" 2>/dev/null
  done
fi
stop containerd
# shims started by our containerd (their command line names our socket)
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $CONTAINERD_SOCK" || true); do
  kill -KILL "$pid" 2>/dev/null && log "killed shim $pid"
done

# 3. control plane
for c in kube-apiserver etcd; do stop "$c"; done

# 4. mounts under the state dir (kubelet root bind mount, volumes, overlay rootfs, shm) and
#    leftover CNI network namespaces
for m in $(awk '{print $2}' /proc/mounts | grep -E "^$STATE/|^/run/netns/cni-|^/run/containerd/" | sort -r); do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
done
rm -f /run/netns/cni-* 2>/dev/null

# 5. cgroups the kubelet created (cgroupfs driver), deepest first
for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
  [ -d "$h" ] && log "cannot remove cgroup $h"
done

# 6. the CNI bridge
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE" && log "deleted bridge $BRIDGE"

# 7. iptables: rules jumping to KUBE-*/CNI-* chains, then the chains themselves
for ipt in iptables ip6tables; do
  command -v "$ipt" >/dev/null || continue
  for t in nat filter mangle; do
    "$ipt-save" -t "$t" 2>/dev/null | grep -E '^-A [A-Z]+ .*-j (KUBE|CNI)-' | grep -vE '^-A (KUBE|CNI)-' \
      | sed 's/^-A /-D /' | while read -r rule; do eval "$ipt -t $t $rule" 2>/dev/null; done
    chains=$("$ipt-save" -t "$t" 2>/dev/null | grep -oE '^:(KUBE|CNI)-[^ ]+' | tr -d ':')
    for ch in $chains; do "$ipt" -t "$t" -F "$ch" 2>/dev/null; done
    for ch in $chains; do "$ipt" -t "$t" -X "$ch" 2>/dev/null; done
  done
done

# iptables-nft tables that only the node created, once no rule is left in them
if command -v nft >/dev/null && [ -f "$STATE/host.saved" ]; then
  for fam in ip ip6; do
    for t in nat filter mangle; do
      grep -qx "nfttable $fam $t" "$STATE/host.saved" && continue
      nft list table "$fam" "$t" >/dev/null 2>&1 || continue
      ipt=iptables; [ "$fam" = ip6 ] && ipt=ip6tables
      if [ "$("$ipt-save" -t "$t" 2>/dev/null | grep -c '^-A')" = 0 ]; then nft delete table "$fam" "$t" && log "deleted empty nft table $fam $t"; fi
    done
  done
fi

# 8. sysctls and directories, as they were before up.sh
if [ -f "$STATE/host.saved" ]; then
  while read -r kind a b; do
    if [ "$kind" = sysctl ] && [ -f "/proc/sys/$a" ] && [ "$(cat "/proc/sys/$a")" != "$b" ]; then
      echo "$b" > "/proc/sys/$a" 2>/dev/null && log "restored $a=$b" || log "cannot restore $a=$b"
    fi
  done < "$STATE/host.saved"
  for d in /run/containerd /run/crio /var/lib/cni /var/log/containers /var/log/pods /run/netns /etc/cni; do
    grep -qx "existed $d" "$STATE/host.saved" || { [ -e "$d" ] && rm -rf "$d" && log "removed $d"; }
  done
fi

# 9. the state dir (logs kept in the repo's bin/), with the registry hosts (containerd/certs.d)
#    that make test-olm and the quick start spec wrote there
mkdir -p "$ROOT/bin/local-cluster-logs" && cp -f "$LOGS"/*.log "$ROOT/bin/local-cluster-logs/" 2>/dev/null
left=$(awk '{print $2}' /proc/mounts | grep -c "^$STATE/")
if [ "$left" -eq 0 ]; then rm -rf "$STATE"; else log "$left mounts left under $STATE: state dir kept"; exit 1; fi
log "cluster down in $(( $(date +%s) - t0 ))s (logs in bin/local-cluster-logs)"
