#!/usr/bin/env bash
# Installs what the local cluster needs, skipping what is there: the Debian packages (runc, CNI
# plugins, iptables, conntrack), containerd and the Kubernetes binaries built from the Go module
# proxy (hack/build-containerd.sh and hack/build-k8s.sh, cached under bin/), crictl (bin/tools) and
# the pause image tarball.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

missing=()
command -v runc >/dev/null || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null || missing+=(iptables)
command -v conntrack >/dev/null || missing+=(conntrack)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  "$ROOT/hack/progress.sh" "apt-get update" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "$ROOT/hack/progress.sh" "apt-get install ${missing[*]}" \
    apt-get install -y -qq runc containernetworking-plugins iptables conntrack
fi

CONTAINERD_BIN_DIR=$CONTAINERD_BIN CONTAINERD_VERSION=$CONTAINERD_VERSION "$ROOT/hack/build-containerd.sh" 2>&1 >/dev/null \
  | grep --line-buffered -v "present in" >&2 || true
for c in containerd containerd-shim-runc-v2 ctr; do
  [ -x "$CONTAINERD_BIN/$c" ] || { log "missing $CONTAINERD_BIN/$c"; exit 1; }
done

K8S_BIN_DIR=$K8S_BIN "$ROOT/hack/build-k8s.sh" etcd kube-apiserver kubectl kubelet kube-controller-manager \
  kube-scheduler kube-proxy | grep --line-buffered -v 'present in' >&2 || true
for c in etcd kube-apiserver kubectl kubelet kube-controller-manager kube-scheduler kube-proxy; do
  [ -x "$K8S_BIN/$c" ] || { log "missing $K8S_BIN/$c"; exit 1; }
done

if [ ! -x "$TOOLS_BIN/crictl" ]; then
  GOBIN=$TOOLS_BIN "$ROOT/hack/progress.sh" "compiling crictl" go install -v sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0
fi
if [ ! -f "$IMAGES_DIR/pause.tar" ]; then
  imagebuilder=$(go_tool imagebuilder ./hack/imagebuilder)
  "$imagebuilder" -out "$IMAGES_DIR" pause
fi
