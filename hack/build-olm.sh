#!/usr/bin/env bash
# Builds the OLM tools `make test-olm` needs from the Go module proxy, pinned by the wrapper module
# hack/olm-build (no download site or container registry is reachable here): operator-sdk and its
# scorecard-test, opm, and OLM's olm, catalog and cpb. One `go build` for all six shares the
# compilation of their common dependencies. The binaries land in bin/olm/<versions>/ with
# versions.env (SDK_VERSION, OPM_VERSION, OLM_VERSION); when all of them are there nothing is
# rebuilt.
#
# usage: hack/build-olm.sh [TOOL...]   prints the output directory
#   With TOOLs (e.g. operator-sdk, for `make bundle`), only those are built when missing.
#        hack/build-olm.sh --print-dir   prints the output directory only
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD=$ROOT/hack/olm-build

# version MODULE: the version hack/olm-build/go.mod requires (the tools are stamped with it)
version() {
  local v
  v=$(awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$MOD/go.mod")
  [ -n "$v" ] || { echo "build-olm: $1 not required in $MOD/go.mod" >&2; exit 1; }
  echo "$v"
}
SDK=$(version github.com/operator-framework/operator-sdk)
OPM=$(version github.com/operator-framework/operator-registry)
OLM=$(version github.com/operator-framework/operator-lifecycle-manager)
OUT=${OLM_BIN_DIR:-$ROOT/bin/olm/sdk-${SDK#v}_opm-${OPM#v}_olm-${OLM#v}-linux-$(go env GOARCH)}
[ "${1:-}" = --print-dir ] && { echo "$OUT"; exit 0; }
ALL_TOOLS=(operator-sdk scorecard-test opm olm catalog cpb grpc_health_probe)
TOOLS=("${@:-${ALL_TOOLS[@]}}")
declare -A PKG=(
  [operator-sdk]=github.com/operator-framework/operator-sdk/cmd/operator-sdk
  [scorecard-test]=github.com/operator-framework/operator-sdk/images/scorecard-test
  [opm]=github.com/operator-framework/operator-registry/cmd/opm
  [olm]=github.com/operator-framework/operator-lifecycle-manager/cmd/olm
  [catalog]=github.com/operator-framework/operator-lifecycle-manager/cmd/catalog
  [cpb]=github.com/operator-framework/operator-lifecycle-manager/util/cpb
  [grpc_health_probe]=github.com/grpc-ecosystem/grpc-health-probe
)
for t in "${TOOLS[@]}"; do
  [ -n "${PKG[$t]:-}" ] || { echo "build-olm: unknown tool $t (one of ${ALL_TOOLS[*]})" >&2; exit 2; }
done

missing=()
for t in "${TOOLS[@]}"; do { [ -x "$OUT/$t" ] && [ -f "$OUT/versions.env" ]; } || missing+=("$t"); done
if [ ${#missing[@]} = 0 ]; then
  echo "build-olm: ${TOOLS[*]} present in $OUT, skipping" >&2
  echo "$OUT"
  exit 0
fi
TOOLS=("${missing[@]}")
pkgs=()
for t in "${TOOLS[@]}"; do pkgs+=("${PKG[$t]}"); done

mkdir -p "$OUT"
tmp=$(mktemp -d "$OUT/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sdkpkg=github.com/operator-framework/operator-sdk
ldflags="-s -w \
 -X $sdkpkg/internal/version.Version=$SDK -X $sdkpkg/internal/version.GitVersion=$SDK \
 -X $sdkpkg/internal/version.ImageVersion=$SDK \
 -X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$OPM \
 -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=$OLM"
start=$(date +%s)
echo "build-olm: building ${TOOLS[*]} (operator-sdk $SDK, opm $OPM, OLM $OLM); about 8 min on 2 cores from an empty build cache" >&2
# Progress every 30 s: a cold build prints nothing for minutes.
( while sleep 30; do echo "build-olm: still building ($(( $(date +%s) - start ))s)" >&2; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null; rm -rf "$tmp"' EXIT
(cd "$MOD" && CGO_ENABLED=0 go build -mod=mod -trimpath -tags containers_image_openpgp,json1 -ldflags "$ldflags" -o "$tmp/" \
  "${pkgs[@]}")
# go build names each binary after its package's last element (grpc-health-probe).
for t in "${TOOLS[@]}"; do mv "$tmp/${PKG[$t]##*/}" "$OUT/$t"; done
printf 'SDK_VERSION=%s\nOPM_VERSION=%s\nOLM_VERSION=%s\n' "$SDK" "$OPM" "$OLM" > "$OUT/versions.env"
echo "build-olm: built ${TOOLS[*]} in $(( $(date +%s) - start ))s" >&2
echo "$OUT"
