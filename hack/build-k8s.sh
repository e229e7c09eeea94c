#!/usr/bin/env bash
# Builds Kubernetes and etcd binaries from the Go module proxy into bin/k8s/<version>-linux-amd64/.
# No download site is reachable on the machines this project runs on, so setup-envtest and release
# tarballs cannot be used. A binary that is already there is not rebuilt.
#
# usage: hack/build-k8s.sh [component ...]
#   components: etcd kube-apiserver kubectl kubelet kube-controller-manager kube-scheduler kube-proxy
#   default: etcd kube-apiserver (what envtest needs)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
ARCH=$(go env GOARCH)
OUT=${K8S_BIN_DIR:-$ROOT/bin/k8s/${K8S_VERSION#v}-linux-$ARCH}
mkdir -p "$OUT"

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kube-apiserver)

major=$(echo "${K8S_VERSION#v}" | cut -d. -f1)
minor=$(echo "${K8S_VERSION#v}" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} \
 -X k8s.io/component-base/version.gitMajor=${major} -X k8s.io/component-base/version.gitMinor=${minor} \
 -X k8s.io/component-base/version.gitTreeState=clean"

for c in "${components[@]}"; do
  if [ -x "$OUT/$c" ]; then
    echo "build-k8s: $c present in $OUT, skipping"
    continue
  fi
  start=$(date +%s)
  # progress.sh prints what is being compiled every 20 s: a cold kube-apiserver or kubelet takes
  # minutes on 2 cores and go build is silent meanwhile.
  case "$c" in
    etcd)
      (cd "$ROOT/hack/etcd-build" && CGO_ENABLED=0 "$ROOT/hack/progress.sh" "build-k8s: compiling etcd" \
        go build -v -mod=mod -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3) ;;
    kube-apiserver|kubectl|kubelet|kube-controller-manager|kube-scheduler|kube-proxy)
      (cd "$ROOT/hack/k8s-build" && CGO_ENABLED=0 "$ROOT/hack/progress.sh" "build-k8s: compiling $c" \
        go build -v -mod=mod -trimpath -ldflags "$ldflags" -o "$OUT/$c.tmp" "k8s.io/kubernetes/cmd/$c") ;;
    *) echo "build-k8s: unknown component $c" >&2; exit 2 ;;
  esac
  mv "$OUT/$c.tmp" "$OUT/$c"
  echo "build-k8s: built $c in $(( $(date +%s) - start ))s"
done
echo "$OUT"
