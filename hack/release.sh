#!/usr/bin/env bash
# make release: writes every artifact of release VERSION, for the registry REGISTRY, into DIST
# (docs/release.md has the table of files):
#
#   install.yaml, crds.yaml                         config/default with the release's image; its CRDs alone
#   enhanced-liveness-operator-<V>.tgz              the Helm chart, its default image the release's
#   <name>-v<V>.oci.tar                             the operator image, an OCI image layout in one tar
#                                                   holding an image index of RELEASE_PLATFORMS
#   <name>-bundle-v<V>.oci.tar                      the OLM bundle image, same form
#   <name>-catalog-v<V>.oci.tar                     the OLM catalog image (opm serving catalog.yaml)
#   catalog.yaml                                    the file-based catalog in it: the bundle, by digest,
#                                                   in the channels of VERSION, with the upgrade edge
#                                                   from the previous release
#   release-push-<os>-<arch>                        cmd/release-push for RELEASE_TOOL_PLATFORMS: pushes
#                                                   this directory to REGISTRY, needing nothing else
#   kubectl-enhancedliveness-<os>-<arch>.tar.gz     the kubectl plugin for PLUGIN_PLATFORMS (binary + LICENSE)
#   enhancedliveness.yaml                           its krew plugin manifest: each archive's URL (under
#                                                   PLUGIN_URL_BASE, default the GitHub release's) and SHA-256
#   <name>-v<V>-<binary>-<os>-<arch>.cdx.json       a CycloneDX SBOM of each Go binary of the operator image
#   images.txt                                      each image's reference, its digest and its archive
#   README.md, SHA256SUMS
#
# Every reference to an image the release built is REGISTRY/<repository>:v<V>@<digest>: the
# operator image is built first, then what names it (install.yaml, the chart, the bundle), then
# the bundle image, the catalog that names it, and the catalog image.
#
# Channels (OLM): a pre-release (VERSION with a "-") is in "candidate" only, a release in "stable"
# (the default channel) and "candidate". The previous release, which the catalog entry replaces
# and skips from (skipRange ">=<previous> <V>"), is PREVIOUS when set ("none": no edge), else the
# newest dated section of CHANGELOG.md below VERSION.
#
# Everything is built from the checked-out commit, stamped with VERSION and dated by the commit
# (SOURCE_DATE_EPOCH): rebuilding a commit gives the same files. A final release (X.Y.Z) needs a
# clean tree and a dated CHANGELOG.md section (## X.Y.Z - YYYY-MM-DD); a pre-release needs neither.
#
# usage: hack/release.sh [--preflight | --plan]
#   --preflight  only the checks that need nothing built (the Makefile runs them first)
#   --plan       prints the release's channels and previous release, and checks nothing else
# Environment (the Makefile sets it): VERSION (semver, no v), REGISTRY, DIST, RELEASE_PLATFORMS,
# RELEASE_TOOL_PLATFORMS, PLUGIN_PLATFORMS, PLUGIN_URL_BASE (optional), PREVIOUS, BUNDLE_K8S_VERSION,
# KUSTOMIZE, HELM, OPERATOR_SDK, OPM, CYCLONEDX_GOMOD.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mode=${1:-build}
case $mode in build|--preflight|--plan) ;; *) echo "release: unknown argument $mode (--preflight, --plan)" >&2; exit 2 ;; esac
: "${VERSION:?}"
[ "$mode" != build ] || : "${REGISTRY:?}" "${DIST:?}" "${RELEASE_PLATFORMS:?}" "${RELEASE_TOOL_PLATFORMS:?}" "${PLUGIN_PLATFORMS:?}" \
  "${KUSTOMIZE:?}" "${HELM:?}" "${OPERATOR_SDK:?}" "${OPM:?}" "${BUNDLE_K8S_VERSION:?}" "${CYCLONEDX_GOMOD:?}"
PACKAGE=enhanced-liveness-operator
t0=$(date +%s)
step() { echo "release: $* ($(( $(date +%s) - t0 ))s)" >&2; }
die() { echo "release: $*" >&2; exit 1; }

# semver_lt A B: A < B in Semantic Versioning's precedence (build metadata ignored).
semver_lt() {
  local a=${1%%+*} b=${2%%+*} i x y
  local -a ac bc ap bp
  IFS=. read -ra ac <<< "${a%%-*}"; IFS=. read -ra bc <<< "${b%%-*}"
  for i in 0 1 2; do
    [ "${ac[i]}" -lt "${bc[i]}" ] && return 0
    [ "${ac[i]}" -gt "${bc[i]}" ] && return 1
  done
  # Same core: a pre-release is lower than the release; pre-releases compare field by field.
  [[ $a == *-* ]] || return 1
  [[ $b == *-* ]] || return 0
  IFS=. read -ra ap <<< "${a#*-}"; IFS=. read -ra bp <<< "${b#*-}"
  for ((i = 0; i < ${#ap[@]} && i < ${#bp[@]}; i++)); do
    x=${ap[i]} y=${bp[i]}
    [ "$x" = "$y" ] && continue
    if [[ $x =~ ^[0-9]+$ && $y =~ ^[0-9]+$ ]]; then [ "$x" -lt "$y" ]; return; fi
    [[ $x =~ ^[0-9]+$ ]] && return 0
    [[ $y =~ ^[0-9]+$ ]] && return 1
    [[ $x < $y ]]; return
  done
  [ ${#ap[@]} -lt ${#bp[@]} ]
}

# plan: the channels of VERSION and the release it upgrades from (channels, default_channel,
# previous; previous empty when there is none).
plan() {
  case $VERSION in
    *-*) channels=candidate default_channel=candidate ;;
    *) channels=stable,candidate default_channel=stable ;;
  esac
  previous=
  if [ -n "${PREVIOUS:-}" ]; then
    if [ "$PREVIOUS" != none ]; then
      previous=$(VERSION=$PREVIOUS hack/version.sh 2>&1) || die "PREVIOUS=$PREVIOUS: $previous"
      semver_lt "$previous" "$VERSION" || die "PREVIOUS=$PREVIOUS is not lower than VERSION=$VERSION: the catalog's upgrade edge goes from the previous release to this one"
    fi
  else
    local v
    for v in $(awk '/^## [0-9][^ ]* - [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/ {print $2}' CHANGELOG.md); do
      if semver_lt "$v" "$VERSION"; then previous=$v; break; fi
    done
  fi
}

# readme: dist/README.md, what the release holds and how to install it from these files alone.
readme() {
  local chart_repo=$REGISTRY/charts/$PACKAGE edge=
  [ -z "$previous" ] || edge=" It replaces $previous (the catalog's upgrade edge, and \`skipRange: \">=$previous <$VERSION\"\`)."
  cat <<EOF
# enhanced-liveness-operator $VERSION

Built from revision $revision of https://github.com/enhanced-liveness/enhanced-liveness-operator
(docs/release.md there says how) for the registry \`$REGISTRY\`: every image reference in these
files is \`$REGISTRY/...:v$VERSION@sha256:...\`, pinned by the digest of the image in its archive.
Check the files first: \`sha256sum --check SHA256SUMS\`.

| file | what |
|---|---|
| \`install.yaml\` | everything the operator needs, for \`kubectl apply --server-side -f install.yaml\` |
| \`crds.yaml\` | its CRDs alone, for a cluster where CRDs are applied apart (the chart's \`crds.install=false\`) |
| \`$PACKAGE-$VERSION.tgz\` | the Helm chart; \`release-push\` publishes it as \`oci://$chart_repo\` |
| \`$PACKAGE-v$VERSION.oci.tar\` | the operator image (manager and daemon), $RELEASE_PLATFORMS, an OCI archive |
| \`$PACKAGE-bundle-v$VERSION.oci.tar\` | the OLM bundle image, an OCI archive |
| \`$PACKAGE-catalog-v$VERSION.oci.tar\` | the OLM catalog image (\`opm serve\` of \`catalog.yaml\`), an OCI archive |
| \`catalog.yaml\` | the file-based OLM catalog in that image: channel(s) \`$channels\`.$edge |
$(for p in ${RELEASE_TOOL_PLATFORMS//,/ }; do printf '| `release-push-%s-%s` | the push program for %s |\n' "${p%/*}" "${p#*/}" "$p"; done)
$(for p in ${PLUGIN_PLATFORMS//,/ }; do printf '| `kubectl-enhancedliveness-%s-%s.tar.gz` | the kubectl plugin for %s ([kubectl-plugin.md](https://github.com/enhanced-liveness/enhanced-liveness-operator/blob/main/docs/kubectl-plugin.md)) |\n' "${p%/*}" "${p#*/}" "$p"; done)
| \`enhancedliveness.yaml\` | the plugin's krew manifest: \`kubectl krew install --manifest=enhancedliveness.yaml\` |
$(sbom_rows)
| \`images.txt\` | each image's reference with its digest, and its archive |

## 1. Publish the release to $REGISTRY

With the \`release-push\` program of your platform, from this directory (no container engine;
the credentials of \`docker login\`, \`~/.docker/config.json\`):

\`\`\`sh
./release-push-linux-amd64            # or -linux-arm64, -darwin-amd64, -darwin-arm64
# flags: --insecure for a registry over plain HTTP, --ca-file FILE for a private CA
\`\`\`

It checks every file against \`SHA256SUMS\`, pushes the three images, each under its reference
in \`images.txt\` and checked to have the recorded digest there, and the chart as
\`oci://$chart_repo:$VERSION\`. These files pin \`$REGISTRY\`'s references: for another registry,
build the release for it (\`make release VERSION=v$VERSION REGISTRY=<yours>\` from a checkout of
the tag gives the same images under your names).

## 2. Install, one of three ways

- **Manifest**: \`kubectl apply --server-side -f install.yaml\`; remove with \`kubectl delete -f install.yaml\`,
  after your enrolled workloads (without the operator their pods have no liveness; docs/install.md,
  Uninstalling).
- **Helm**: the namespace first, labelled for the privileged Pod Security level (the daemon needs
  the host network and the CRI socket), then the chart:
  \`kubectl create namespace enhanced-liveness-system\`,
  \`kubectl label namespace enhanced-liveness-system pod-security.kubernetes.io/enforce=privileged\`,
  \`helm install enhanced-liveness-operator oci://$chart_repo --version $VERSION -n enhanced-liveness-system --wait\`
  (or the file \`$PACKAGE-$VERSION.tgz\` in place of the \`oci://\` reference; \`--plain-http\` for a
  registry over HTTP). The chart installs and upgrades the CRDs itself; where someone else manages
  CRDs, apply \`crds.yaml\` and add \`--set crds.install=false\`.
- **OLM**: a CatalogSource of the catalog image, then a Subscription to the package
  \`$PACKAGE\` in channel \`$default_channel\` (docs/install.md, With OLM):
  \`spec.image: $catalog_ref\`.

## 3. Upgrade from the previous release

Read the release's section of CHANGELOG.md (its upgrade notes), then apply the new
\`install.yaml\`, \`helm upgrade enhanced-liveness-operator oci://$chart_repo --version $VERSION\`,
or point the CatalogSource at the new catalog image and let OLM follow the channel. The upgrade
pages are docs/upgrade-kustomize.md and docs/upgrade-olm.md.
EOF
}

# sboms ARCHIVE PREFIX: a CycloneDX SBOM of each Go binary of each platform of the image ARCHIVE,
# DIST/PREFIX-<binary>-<os>-<arch>.cdx.json (hack/sbom, cyclonedx-gomod from hack/sbom-build): the
# modules the Go linker recorded in the binary, with their versions and go.sum hashes. No serial
# number or timestamp, so the same binaries give the same files.
sboms() {
  go run ./hack/sbom -tool "$CYCLONEDX_GOMOD" -archive "$1" -version "$VERSION" -prefix "$2" -out "$DIST" > "$scratch/sboms"
}
# sbom_rows: the README's rows of the SBOMs sboms wrote.
sbom_rows() {
  local f
  while read -r f; do
    printf '| `%s` | a CycloneDX SBOM of that binary of the operator image and platform: the modules it was built from, their versions and go.sum hashes |\n' "$f"
  done < "$scratch/sboms"
}

VERSION=$(VERSION=$VERSION hack/version.sh)
plan
if [ "$mode" = --plan ]; then
  echo "release: $VERSION: channels $channels (default $default_channel), previous ${previous:-none}"
  exit 0
fi
case $VERSION in
  *-*) final=false ;;   # a pre-release
  *) final=true ;;
esac
if $final; then
  grep -Eq "^## ${VERSION//./\\.} - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md ||
    die "CHANGELOG.md has no section \"## $VERSION - YYYY-MM-DD\": date the release's section first (docs/release.md)"
  [ -z "$(git status --porcelain --untracked-files=normal -- . ':!bin' ':!dist')" ] ||
    die "the working tree differs from the commit: a release is built from a clean checkout of its tag"
fi
[ "$mode" = --preflight ] && exit 0
# The revision is the checkout's before anything is written: a DIST inside the checkout (other
# than dist/) must not make the images say -dirty. Every later stamp (imagebuilder) reads it.
revision=$(hack/version.sh revision)
export GIT_REVISION=$revision
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH
created_at=$(TZ=UTC0 git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
REGISTRY=${REGISTRY%/}

# DIST is emptied first; refuse a directory that does not look like an earlier release.
if [ -d "$DIST" ] && [ -n "$(ls -A "$DIST")" ] && [ ! -f "$DIST/SHA256SUMS" ]; then
  die "$DIST is not empty and holds no earlier release (SHA256SUMS): choose another DIST"
fi
rm -rf "$DIST" && mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

tag=v$VERSION
step "$PACKAGE $VERSION (revision $revision, $created_at) into $DIST for $REGISTRY: $RELEASE_PLATFORMS, channels $channels, previous ${previous:-none}"
go build -o "$scratch/imagebuilder" ./hack/imagebuilder
# build_image NAME [FLAGS...]: hack/imagebuilder's NAME as an OCI archive in DIST; prints its
# reference, pinned by the digest of its image index.
build_image() {
  local n=$1 repo=$PACKAGE
  shift
  [ "$n" = operator ] || repo=$PACKAGE-$n
  "$scratch/imagebuilder" -out "$scratch/images" -format oci-archive -platforms "$RELEASE_PLATFORMS" \
    -version "$VERSION" -tag "$tag" -registry "$REGISTRY" "$@" "$n" >&2
  mv "$scratch/images/$n.oci.tar" "$DIST/$repo-$tag.oci.tar"
  echo "$REGISTRY/$repo:$tag@$(cat "$scratch/images/$n.digest")"
}

step "operator image"
img=$(build_image operator)
step "SBOMs"
sboms "$DIST/$PACKAGE-$tag.oci.tar" "$PACKAGE-$tag"

step "install.yaml, crds.yaml ($img)"
KUSTOMIZE=$KUSTOMIZE hack/render-install.sh "$img" > "$DIST/install.yaml"
# The CRDs of install.yaml on their own, for clusters where CRDs are applied apart from the chart.
awk '
  function flush() { if (crd) printf "%s%s", (n++ ? "---\n" : ""), doc; doc = ""; crd = 0 }
  /^---$/ { flush(); next }
  { doc = doc $0 "\n"; if ($0 == "kind: CustomResourceDefinition") crd = 1 }
  END { flush() }' "$DIST/install.yaml" > "$DIST/crds.yaml"
[ "$(grep -c '^kind: CustomResourceDefinition$' "$DIST/crds.yaml")" -eq "$(grep -c '^kind: CustomResourceDefinition$' "$DIST/install.yaml")" ] ||
  die "crds.yaml does not hold every CRD of install.yaml"

step "OLM bundle and its image"
KUSTOMIZE=$KUSTOMIZE OPERATOR_SDK=$OPERATOR_SDK hack/bundle.sh --version "$VERSION" --image "$img" \
  --created-at "$created_at" --channels "$channels" --default-channel "$default_channel" \
  ${previous:+--replaces "$PACKAGE.v$previous"} --k8s-version "$BUNDLE_K8S_VERSION" \
  --output-dir "$scratch/bundle" > "$scratch/bundle.log" 2>&1 || { cat "$scratch/bundle.log" >&2; die "the bundle failed"; }
bundle_ref=$(build_image bundle -bundle-dir "$scratch/bundle")

step "file-based catalog ($bundle_ref)"
cat=$scratch/catalog/$PACKAGE
mkdir -p "$cat"
{
  "$OPM" init "$PACKAGE" --default-channel "$default_channel" --output yaml
  # The bundle by digest: the catalog names exactly the image this release pushes.
  "$OPM" render "$scratch/bundle" --alpha-image-ref-template "$bundle_ref" --output yaml
  for ch in ${channels//,/ }; do
    printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n- name: %s.v%s\n' "$PACKAGE" "$ch" "$PACKAGE" "$VERSION"
    [ -z "$previous" ] || printf '  replaces: %s.v%s\n  skipRange: ">=%s <%s"\n' "$PACKAGE" "$previous" "$previous" "$VERSION"
  done
} > "$cat/catalog.yaml"
"$OPM" validate "$scratch/catalog" || die "opm validate refused the catalog ($cat/catalog.yaml)"
cp "$cat/catalog.yaml" "$DIST/catalog.yaml"

step "catalog image (opm and grpc_health_probe for $RELEASE_PLATFORMS, hack/build-olm.sh)"
for p in ${RELEASE_PLATFORMS//,/ }; do
  d=$(GOARCH=${p#*/} hack/build-olm.sh opm grpc_health_probe)
  mkdir -p "$scratch/catalog-tools/${p/\//-}"
  cp "$d/opm" "$d/grpc_health_probe" "$scratch/catalog-tools/${p/\//-}/"
done
catalog_ref=$(build_image catalog -catalog-dir "$scratch/catalog" -catalog-tools "$scratch/catalog-tools")

step "Helm chart"
chart=$scratch/chart/$PACKAGE
mkdir -p "$scratch/chart" && cp -R charts/$PACKAGE "$chart"
# The packaged chart's default image is the release's: repository, tag and digest.
digest=${img##*@}
awk -v repo="$REGISTRY/$PACKAGE" -v tag="$tag" -v digest="$digest" '
  /^image:/ { in_image = 1 }
  /^[^ #]/ && !/^image:/ { in_image = 0 }
  in_image && /^  repository:/ { print "  repository: " repo; n++; next }
  in_image && /^  tag:/ { print "  tag: " tag; n++; next }
  in_image && /^  digest:/ { print "  digest: " digest; n++; next }
  { print }
  END { if (n != 3) exit 1 }' charts/$PACKAGE/values.yaml > "$chart/values.yaml" ||
  die "cannot set image.repository, image.tag and image.digest in the chart's values.yaml"
"$HELM" lint --strict "$chart" > "$scratch/lint.log" 2>&1 || { cat "$scratch/lint.log" >&2; die "helm lint refused the chart"; }
"$HELM" package "$chart" --version "$VERSION" --app-version "$VERSION" --destination "$DIST" > /dev/null

step "release-push ($RELEASE_TOOL_PLATFORMS)"
for p in ${RELEASE_TOOL_PLATFORMS//,/ }; do
  CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$VERSION" \
    -o "$DIST/release-push-${p/\//-}" ./cmd/release-push
done

step "kubectl plugin ($PLUGIN_PLATFORMS)"
mkdir -p "$scratch/plugin"
for p in ${PLUGIN_PLATFORMS//,/ }; do
  ext=
  [ "${p%/*}" != windows ] || ext=.exe
  CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -trimpath -buildvcs=false -ldflags "-s -w $(hack/version.sh ldflags)" \
    -o "$scratch/plugin/kubectl-enhancedliveness-${p/\//-}$ext" ./cmd/kubectl-enhancedliveness
done
go run ./hack/pluginpack -version "v$VERSION" -bin-dir "$scratch/plugin" -out "$DIST" -platforms "$PLUGIN_PLATFORMS" \
  -url-base "${PLUGIN_URL_BASE:-https://github.com/enhanced-liveness/enhanced-liveness-operator/releases/download/v$VERSION}" > /dev/null

step "images.txt, README.md, checksums"
for ref in "$img" "$bundle_ref" "$catalog_ref"; do
  repo=${ref%%:v*}
  echo "$ref ${repo##*/}-$tag.oci.tar"
done > "$DIST/images.txt"
readme > "$DIST/README.md"
if command -v sha256sum > /dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
(cd "$DIST" && "${sum[@]}" $(ls | grep -v '^SHA256SUMS$') > SHA256SUMS)
step "done: $(cd "$DIST" && ls | tr '\n' ' ')"
