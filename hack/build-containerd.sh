#!/usr/bin/env bash
# Builds containerd, its runc shim and ctr from the Go module proxy into bin/containerd/<version>/.
# The local cluster uses containerd 2.x rather than Debian's 1.6 because 1.6 does not implement the
# CRI container event stream (GetContainerEvents): with it the kubelet's EventedPLEG hint relists a
# pod as soon as one of its containers stops, instead of at its next 1 s relist (docs/e2e.md).
# runc itself still comes from Debian. A binary that is already there is not rebuilt.
#
# usage: hack/build-containerd.sh        prints the output directory
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
OUT=${CONTAINERD_BIN_DIR:-$ROOT/bin/containerd/${CONTAINERD_VERSION#v}-linux-$(go env GOARCH)}
mkdir -p "$OUT"

# cgo off: the btrfs, devmapper and zfs snapshotters need C headers and are not used.
tags="no_btrfs no_devmapper no_zfs"
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION}"
for c in containerd containerd-shim-runc-v2 ctr; do
  if [ -x "$OUT/$c" ]; then
    echo "build-containerd: $c present in $OUT, skipping" >&2
    continue
  fi
  start=$(date +%s)
  tmp=$(mktemp -d)
  CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS=-mod=mod "$ROOT/hack/progress.sh" "build-containerd: compiling $c" \
    go install -v -trimpath -tags "$tags" -ldflags "$ldflags" "github.com/containerd/containerd/v2/cmd/$c@$CONTAINERD_VERSION"
  mv "$tmp/$c" "$OUT/$c"
  rmdir "$tmp"
  echo "build-containerd: built $c in $(( $(date +%s) - start ))s" >&2
done
echo "$OUT"
