#!/usr/bin/env bash
# Prints the install manifest: a kustomization (default config/default) with the manager image set
# to IMG. The image is set in a throw-away overlay, so no committed file is edited (make verify
# stays clean). `make deploy`, `make undeploy`, `make build-installer` and `make release` use it.
#
# kustomize takes only relative paths to a base: the overlay names the kustomization by going up
# from its own (physical) directory to / and down again, with nothing but POSIX cd, pwd and sed
# (no GNU realpath: this runs on macOS too).
#
# usage: hack/render-install.sh IMG [KUSTOMIZATION]     KUSTOMIZE names kustomize (default bin/kustomize)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUSTOMIZE=${KUSTOMIZE:-$ROOT/bin/kustomize}
img=${1:?usage: hack/render-install.sh IMG [KUSTOMIZATION]}
base=$(cd "${2:-$ROOT/config/default}" && pwd -P)
d=$(cd "$(mktemp -d)" && pwd -P)
trap 'rm -rf "$d"' EXIT
printf 'resources:\n- %s%s\n' "$(echo "$d" | sed -e 's|[^/][^/]*|..|g' -e 's|^/||')" "$base" > "$d/kustomization.yaml"
(cd "$d" && "$KUSTOMIZE" edit set image "controller=$img")
"$KUSTOMIZE" build "$d"
