#!/usr/bin/env bash
# Snapshots the host state the local cluster touches, to prove down.sh undid it:
#   hostcheck.sh snapshot FILE     before up.sh
#   hostcheck.sh compare FILE      after down.sh; prints the differences, exits 1 if any
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

snapshot() {
  set +e
  local s
  for s in "${SYSCTLS[@]}"; do echo "sysctl $s=$(cat "/proc/sys/$s" 2>/dev/null || echo absent)"; done
  for t in nat filter mangle; do iptables-save -t "$t" 2>/dev/null | grep -vE '^(#|:)' | sed "s/^/iptables $t /" || true; done
  for ipt in iptables ip6tables; do "$ipt-save" 2>/dev/null | grep -E '^:' | awk -v i="$ipt" '{print i " chain " $1}' || true; done
  command -v nft >/dev/null && nft list tables 2>/dev/null | sed 's/^/nft /'
  awk '{print "mount " $2}' /proc/mounts
  ls -d /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/*/"$NODE_NAME"-* 2>/dev/null | sed 's/^/cgroup /' || true
  ip -o link | awk '{print "link " $2}' | sed 's/@.*//'
  ip -4 route | sed 's/^/route /'
  for d in /run/containerd /run/crio /var/lib/cni /var/log/containers /var/log/pods /run/netns /etc/cni "$STATE"; do
    [ -e "$d" ] && echo "path $d"
  done
  pgrep -f "$STATE|containerd-shim" | sed 's/^/process /' || true
}

case "${1:-}" in
  snapshot) snapshot | sort > "$2" ;;
  compare)
    if diff <(sort "$2") <(snapshot | sort); then echo "hostcheck: host state identical to $2"; else
      echo "hostcheck: host state differs from $2 (< before, > now)"; exit 1; fi ;;
  *) echo "usage: $0 snapshot|compare FILE" >&2; exit 2 ;;
esac
