#!/usr/bin/env bash
# The version of everything this tree builds (both binaries, the images, the OLM bundle's CSV, the
# Helm chart): one string, decided here and nowhere else (docs/release.md).
#
#   version   $VERSION when set (a leading v is dropped: v0.1.0 -> 0.1.0), else the version of
#             the first section of CHANGELOG.md (## 0.1.0 - Unreleased). Must be semver.
#   revision  $GIT_REVISION when set, else the commit checked out (12 hex digits), with -dirty
#             when the working tree differs from it; "unknown" outside a git checkout.
#   ldflags   the -X linker flags that stamp both into a binary (internal/version).
#
# usage: hack/version.sh [version|revision|ldflags]      (default: version)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=github.com/enhanced-liveness/enhanced-liveness-operator/internal/version
# Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH, an optional pre-release and build metadata.
SEMVER='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'

version() {
  local v=${VERSION:-}
  if [ -z "$v" ]; then
    v=$(awk '/^## [0-9]/ {print $2; exit}' "$ROOT/CHANGELOG.md")
    [ -n "$v" ] || { echo "version: CHANGELOG.md has no version section (## X.Y.Z - ...); set VERSION" >&2; exit 1; }
  fi
  v=${v#v}
  [[ $v =~ $SEMVER ]] || { echo "version: \"$v\" is not a semantic version (X.Y.Z[-pre.release][+build])" >&2; exit 1; }
  echo "$v"
}

revision() {
  if [ -n "${GIT_REVISION:-}" ]; then echo "$GIT_REVISION"; return; fi
  local r
  if ! r=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null); then echo unknown; return; fi
  # bin/ holds the build caches and outputs, dist/ the release: neither is source.
  if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=normal -- . ':!bin' ':!dist' ':!cover.out' 2>/dev/null)" ]; then
    r=$r-dirty
  fi
  echo "$r"
}

case ${1:-version} in
  version) version ;;
  revision) revision ;;
  ldflags) echo "-X $PKG.version=$(version) -X $PKG.revision=$(revision)" ;;
  *) echo "usage: hack/version.sh [version|revision|ldflags]" >&2; exit 2 ;;
esac
