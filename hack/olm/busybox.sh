#!/usr/bin/env bash
# Prints the path of a statically linked busybox for the test images of `make test-olm` (sh, cp,
# cat, gzip and tar for OLM's Jobs and pods), taken from Debian's busybox-static package with
# `apt-get download` and unpacked under bin/olm/ without installing it. Skipped when present.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT=$ROOT/bin/olm/busybox-static
if [ -x "$OUT/busybox" ]; then echo "$OUT/busybox"; exit 0; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download -q busybox-static >"$tmp/apt.log" 2>&1); then
  log "apt-get download busybox-static failed; updating the package lists once and retrying"
  apt-get update -qq
  (cd "$tmp" && apt-get download -q busybox-static >"$tmp/apt.log" 2>&1) || { cat "$tmp/apt.log" >&2; exit 1; }
fi
dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/x"
"$tmp/x/bin/busybox" true || { log "the downloaded busybox does not run"; exit 1; }
mkdir -p "$OUT"
mv "$tmp/x/bin/busybox" "$OUT/busybox"
log "busybox-static $(dpkg-deb -f "$tmp"/busybox-static_*.deb Version) in $OUT"
echo "$OUT/busybox"
