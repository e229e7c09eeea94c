#!/usr/bin/env bash
# Generates and validates an OLM bundle with operator-sdk (`make bundle`, and the two test bundles
# of `make test-olm`):
#
#   kustomize build config/manifests (images set)  |  operator-sdk generate bundle
#   operator-sdk bundle validate --select-optional suite=operatorframework
#
# What operator-sdk does not do, and this script does around it:
#   - the images: a throw-away overlay sets the manager image (and the CSV's containerImage
#     annotation) and RELATED_IMAGE_DAEMON, which operator-sdk turns into the CSV's relatedImages
#     (catalogs add the Deployment's own image themselves), so no committed file is edited;
#   - spec.replaces: set on the base CSV in the same overlay (generate bundle has no flag for it);
#   - createdAt: operator-sdk stamps the current time; it is set to --created-at so that
#     regenerating an unchanged bundle changes nothing (make verify);
#   - the webhook Service of config/webhook: operator-sdk needs it to map each webhook to the
#     manager Deployment, then writes it into the bundle; OLM creates its own Service for the
#     webhooks (<deployment>-service), so it is removed from the bundle.
# Everything else that differs under OLM is a kustomize patch in config/manifests.
#
# usage: hack/bundle.sh --version V --image IMG [--daemon-image IMG] [--replaces CSV]
#          [--channels C] [--default-channel C] [--created-at RFC3339] [--k8s-version 1.37]
#          --output-dir DIR [--dockerfile FILE]
# Relative paths are relative to the repository root. KUSTOMIZE and OPERATOR_SDK name the tools.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUSTOMIZE=${KUSTOMIZE:-$ROOT/bin/kustomize}
OPERATOR_SDK=${OPERATOR_SDK:?set OPERATOR_SDK (make bundle builds it with hack/build-olm.sh operator-sdk)}
PACKAGE=enhanced-liveness-operator
MANAGER_DEPLOYMENT=$PACKAGE-controller-manager
WEBHOOK_SERVICE_MANIFEST=$PACKAGE-webhook-service_v1_service.yaml

version= image= daemon_image= replaces= channels=stable default_channel=stable
created_at= k8s_version= out= dockerfile=
while [ $# -gt 0 ]; do
  case $1 in
    --version) version=$2 ;;
    --image) image=$2 ;;
    --daemon-image) daemon_image=$2 ;;
    --replaces) replaces=$2 ;;
    --channels) channels=$2 ;;
    --default-channel) default_channel=$2 ;;
    --created-at) created_at=$2 ;;
    --k8s-version) k8s_version=$2 ;;
    --output-dir) out=$2 ;;
    --dockerfile) dockerfile=$2 ;;
    *) echo "bundle: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$version" ] && [ -n "$image" ] && [ -n "$out" ] && [ -n "$created_at" ] || {
  echo "bundle: --version, --image, --created-at and --output-dir are required" >&2; exit 2; }
daemon_image=${daemon_image:-$image}

tmp=$(cd "$(mktemp -d)" && pwd -P)
trap 'rm -rf "$tmp"' EXIT

# The overlay: images and replaces, on top of config/manifests. The image is set by a patch of the
# Deployment, not by kustomize's image transformer, which would also walk the samples' fields
# named "containers" (a policy's blacklist.containers is a list of names).
mkdir -p "$tmp/overlay" "$tmp/work"
cat > "$tmp/overlay/kustomization.yaml" <<EOF
resources:
- $(echo "$tmp/overlay" | sed -e 's|[^/][^/]*|..|g' -e 's|^/||')$(cd "$ROOT/config/manifests" && pwd -P)
patches:
- target:
    kind: Deployment
    name: $MANAGER_DEPLOYMENT
  patch: |-
    - op: test
      path: /spec/template/spec/containers/0/name
      value: manager
    - op: replace
      path: /spec/template/spec/containers/0/image
      value: "$image"
    - op: add
      path: /spec/template/spec/containers/0/env/-
      value: {name: RELATED_IMAGE_DAEMON, value: "$daemon_image"}
EOF
cat >> "$tmp/overlay/kustomization.yaml" <<EOF
- target:
    kind: ClusterServiceVersion
  patch: |-
    - op: add
      path: /metadata/annotations/containerImage
      value: "$image"
EOF
if [ -n "$replaces" ]; then
  cat >> "$tmp/overlay/kustomization.yaml" <<EOF
    - op: add
      path: /spec/replaces
      value: "$replaces"
EOF
fi

# operator-sdk reads the project's layout from PROJECT and writes bundle/ and bundle.Dockerfile
# into its working directory.
cp "$ROOT/PROJECT" "$tmp/work/"
# It reads the manifests from stdin only when stdin is a pipe.
"$KUSTOMIZE" build "$tmp/overlay" | (cd "$tmp/work" && "$OPERATOR_SDK" generate bundle --quiet --overwrite \
  --package "$PACKAGE" --version "$version" --channels "$channels" --default-channel "$default_channel" \
  --extra-service-accounts "$PACKAGE-daemon" --output-dir bundle)

csv=$tmp/work/bundle/manifests/$PACKAGE.clusterserviceversion.yaml
grep -q '^    createdAt: ' "$csv" || { echo "bundle: no createdAt annotation in $csv" >&2; exit 1; }
sed "s|^    createdAt: .*|    createdAt: \"$created_at\"|" "$csv" > "$csv.new" && mv "$csv.new" "$csv"
[ -f "$tmp/work/bundle/manifests/$WEBHOOK_SERVICE_MANIFEST" ] || {
  echo "bundle: $WEBHOOK_SERVICE_MANIFEST not generated: update hack/bundle.sh to the webhook Service's name" >&2; exit 1; }
rm "$tmp/work/bundle/manifests/$WEBHOOK_SERVICE_MANIFEST"

(cd "$tmp/work" && "$OPERATOR_SDK" bundle validate ./bundle --select-optional suite=operatorframework \
  ${k8s_version:+--optional-values=k8s-version=$k8s_version})

abs() { case $1 in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
dest=$(abs "$out")
rm -rf "${dest:?}"
mkdir -p "$(dirname "$dest")"
mv "$tmp/work/bundle" "$dest"
if [ -n "$dockerfile" ]; then
  mv "$tmp/work/bundle.Dockerfile" "$(abs "$dockerfile")"
fi
echo "bundle: $PACKAGE.v$version in $out${dockerfile:+ and $dockerfile}${replaces:+ (replaces $replaces)}" >&2
