#!/usr/bin/env bash
# make release: writes every artifact of release VERSION into DIST (docs/release.md):
#
#   install.yaml                                    config/default with the release's image (kubectl apply --server-side -f)
#   enhanced-liveness-operator-<V>.tgz              the Helm chart (helm install ... <file>)
#   <name>-v<V>.oci.tar, <name>-bundle-v<V>.oci.tar the operator image and the OLM bundle image, each an OCI
#                                                   image layout in one tar holding an image index of
#                                                   RELEASE_PLATFORMS (hack/imagebuilder; make release-push
#                                                   pushes them with crane)
#   catalog.yaml                                    a file-based OLM catalog (opm) of the package, the bundle
#                                                   pinned by its digest, for a catalog image of a CatalogSource
#   images.txt                                      each image's reference and the digest it has once pushed
#   <name>-v<V>-<binary>-<os>-<arch>.cdx.json        a CycloneDX SBOM of each Go binary of the operator image
#   SHA256SUMS                                      the SHA-256 of every file above
#
# Everything is built from the checked-out commit, stamped with VERSION and dated by the commit
# (SOURCE_DATE_EPOCH): rebuilding a commit gives the same images and the same checksums. A final
# release (X.Y.Z) needs a clean tree and a dated CHANGELOG.md section (## X.Y.Z - YYYY-MM-DD); a
# pre-release (X.Y.Z-rc.1, a test release) needs neither.
#
# Environment (the Makefile sets it): VERSION (semver, no v), IMAGE_TAG_BASE, DIST, RELEASE_PLATFORMS,
# BUNDLE_CHANNELS, BUNDLE_DEFAULT_CHANNEL, BUNDLE_REPLACES, BUNDLE_K8S_VERSION, KUSTOMIZE, HELM,
# OPERATOR_SDK, OPM, CYCLONEDX_GOMOD.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# --preflight: only the checks that need nothing built (the Makefile runs them before it builds
# the OLM tools, which takes minutes on a fresh machine).
preflight=false
[ "${1:-}" = --preflight ] && preflight=true
: "${VERSION:?}"
$preflight || : "${IMAGE_TAG_BASE:?}" "${DIST:?}" "${RELEASE_PLATFORMS:?}" "${KUSTOMIZE:?}" "${HELM:?}" \
  "${OPERATOR_SDK:?}" "${OPM:?}" "${BUNDLE_CHANNELS:?}" "${BUNDLE_DEFAULT_CHANNEL:?}" "${BUNDLE_K8S_VERSION:?}" \
  "${CYCLONEDX_GOMOD:?}"
PACKAGE=enhanced-liveness-operator
t0=$(date +%s)
step() { echo "release: $* ($(( $(date +%s) - t0 ))s)" >&2; }
die() { echo "release: $*" >&2; exit 1; }

# readme VERSION IMAGE BUNDLE-IMAGE NAME: dist/README.md, what the release holds and how to install
# it from these files alone.
readme() {
  cat <<EOF
# enhanced-liveness-operator $1

Built from revision $revision of https://github.com/enhanced-liveness/enhanced-liveness-operator
(docs/release.md there says how). Check the files first: \`sha256sum --check SHA256SUMS\`.

| file | what |
|---|---|
| \`install.yaml\` | everything the operator needs, for \`kubectl apply --server-side -f install.yaml\` |
| \`crds.yaml\` | its CRDs alone, for a cluster where CRDs are applied apart (the chart's \`crds.install=false\`) |
| \`enhanced-liveness-operator-$1.tgz\` | the Helm chart |
| \`$4-v$1.oci.tar\` | the operator image (manager and daemon), multi-platform, an OCI archive |
| \`$4-bundle-v$1.oci.tar\` | the OLM bundle image, an OCI archive |
| \`catalog.yaml\` | a file-based OLM catalog of the bundle, for a catalog image |
| \`images.txt\` | each image's reference and the digest it has once pushed |
$(sbom_rows)

## 1. Push the images

Nothing is published for you: the manifests name \`$2\` and \`$3\`, the references this release
was built for (\`make release IMAGE_TAG_BASE=<registry>/<name>\` builds one for your registry).
Push each archive to its reference, with the digest \`images.txt\` gives:

\`\`\`sh
# with crane (go install github.com/google/go-containerregistry/cmd/crane@latest)
mkdir -p op bundle && tar -xf $4-v$1.oci.tar -C op && tar -xf $4-bundle-v$1.oci.tar -C bundle
crane push --index op $2
crane push --index bundle $3
# or, with skopeo: skopeo copy --all oci-archive:$4-v$1.oci.tar docker://$2
\`\`\`

From a checkout of the tag, \`make release-push DIST=<this directory>\` does the same and checks the
digests.

## 2. Install, one of three ways

- **Manifest**: \`kubectl apply --server-side -f install.yaml\`; remove with \`kubectl delete -f install.yaml\`,
  after your enrolled workloads (without the operator their pods have no liveness; docs/install.md,
  Uninstalling).
- **Helm**: the namespace first, labelled for the privileged Pod Security level (the daemon needs
  the host network and the CRI socket), then the chart:
  \`kubectl create namespace enhanced-liveness-system\`,
  \`kubectl label namespace enhanced-liveness-system pod-security.kubernetes.io/enforce=privileged\`,
  \`helm install enhanced-liveness-operator enhanced-liveness-operator-$1.tgz -n enhanced-liveness-system --wait\`.
  The chart installs and upgrades the CRDs itself; where someone else manages CRDs, apply
  \`crds.yaml\` and set \`--set crds.install=false\`. \`helm upgrade\` with the next release's chart upgrades it.
- **OLM**: put \`catalog.yaml\` in a catalog image (\`catalog/enhanced-liveness-operator/catalog.yaml\`
  with \`opm generate dockerfile catalog\`, or any file-based catalog image), push it, create a
  CatalogSource for it and a Subscription to the package \`enhanced-liveness-operator\`
  (docs/upgrade-olm.md).

## 3. Upgrade from the previous release

Read the release's section of CHANGELOG.md (its upgrade notes), then apply the new
\`install.yaml\`, \`helm upgrade\` to the new chart, or let OLM follow the catalog's channel. The
upgrade pages are docs/upgrade-kustomize.md and docs/upgrade-olm.md.
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
$preflight && exit 0
# The revision is the checkout's before anything is written: a DIST inside the checkout (other
# than dist/) must not make the images say -dirty. Every later stamp (imagebuilder) reads it.
revision=$(hack/version.sh revision)
export GIT_REVISION=$revision
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH
created_at=$(TZ=UTC0 git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)

# DIST is emptied first; refuse a directory that does not look like an earlier release.
if [ -d "$DIST" ] && [ -n "$(ls -A "$DIST")" ] && [ ! -f "$DIST/SHA256SUMS" ]; then
  die "$DIST is not empty and holds no earlier release (SHA256SUMS): choose another DIST"
fi
rm -rf "$DIST" && mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

img=$IMAGE_TAG_BASE:v$VERSION
bundle_img=$IMAGE_TAG_BASE-bundle:v$VERSION
name=${IMAGE_TAG_BASE##*/}
step "$PACKAGE $VERSION (revision $revision, $created_at) into $DIST: $img, $bundle_img, $RELEASE_PLATFORMS"

step "install.yaml, crds.yaml"
KUSTOMIZE=$KUSTOMIZE hack/render-install.sh "$img" > "$DIST/install.yaml"
# The CRDs of install.yaml on their own, for clusters where CRDs are applied apart from the chart.
awk '
  function flush() { if (crd) printf "%s%s", (n++ ? "---\n" : ""), doc; doc = ""; crd = 0 }
  /^---$/ { flush(); next }
  { doc = doc $0 "\n"; if ($0 == "kind: CustomResourceDefinition") crd = 1 }
  END { flush() }' "$DIST/install.yaml" > "$DIST/crds.yaml"
[ "$(grep -c '^kind: CustomResourceDefinition$' "$DIST/crds.yaml")" -eq "$(grep -c '^kind: CustomResourceDefinition$' "$DIST/install.yaml")" ] ||
  die "crds.yaml does not hold every CRD of install.yaml"

step "OLM bundle"
KUSTOMIZE=$KUSTOMIZE OPERATOR_SDK=$OPERATOR_SDK hack/bundle.sh --version "$VERSION" --image "$img" \
  --created-at "$created_at" --channels "$BUNDLE_CHANNELS" --default-channel "$BUNDLE_DEFAULT_CHANNEL" \
  ${BUNDLE_REPLACES:+--replaces "$BUNDLE_REPLACES"} --k8s-version "$BUNDLE_K8S_VERSION" \
  --output-dir "$scratch/bundle" > "$scratch/bundle.log" 2>&1 || { cat "$scratch/bundle.log" >&2; die "the bundle failed"; }

step "images ($RELEASE_PLATFORMS)"
go build -o "$scratch/imagebuilder" ./hack/imagebuilder
"$scratch/imagebuilder" -out "$scratch/images" -format oci-archive -platforms "$RELEASE_PLATFORMS" \
  -version "$VERSION" -tag "v$VERSION" -registry "${IMAGE_TAG_BASE%/*}" -bundle-dir "$scratch/bundle" operator bundle
mv "$scratch/images/operator.oci.tar" "$DIST/$name-v$VERSION.oci.tar"
mv "$scratch/images/bundle.oci.tar" "$DIST/$name-bundle-v$VERSION.oci.tar"
step "SBOMs"
sboms "$DIST/$name-v$VERSION.oci.tar" "$name-v$VERSION"
bundle_digest=$(cat "$scratch/images/bundle.digest")
printf '%s@%s %s\n%s@%s %s\n' \
  "$img" "$(cat "$scratch/images/operator.digest")" "$name-v$VERSION.oci.tar" \
  "$bundle_img" "$bundle_digest" "$name-bundle-v$VERSION.oci.tar" > "$DIST/images.txt"

step "file-based catalog"
cat=$scratch/catalog/$PACKAGE
mkdir -p "$cat"
{
  "$OPM" init "$PACKAGE" --default-channel "$BUNDLE_DEFAULT_CHANNEL" --output yaml
  # The bundle by digest: the catalog names exactly the image this release pushed.
  "$OPM" render "$scratch/bundle" --alpha-image-ref-template "${IMAGE_TAG_BASE}-bundle@$bundle_digest" --output yaml
  for ch in ${BUNDLE_CHANNELS//,/ }; do
    printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n- name: %s.v%s\n' "$PACKAGE" "$ch" "$PACKAGE" "$VERSION"
    [ -z "${BUNDLE_REPLACES:-}" ] || printf '  replaces: %s\n' "$BUNDLE_REPLACES"
  done
} > "$cat/catalog.yaml"
"$OPM" validate "$scratch/catalog" || die "opm validate refused the catalog ($cat/catalog.yaml)"
cp "$cat/catalog.yaml" "$DIST/catalog.yaml"

step "Helm chart"
chart=$scratch/chart/$PACKAGE
mkdir -p "$scratch/chart" && cp -R charts/$PACKAGE "$chart"
# The packaged chart's default image is the release's.
awk -v repo="$IMAGE_TAG_BASE" '
  /^image:/ { in_image = 1 }
  in_image && /^  repository:/ { print "  repository: " repo; in_image = 0; next }
  { print }' charts/$PACKAGE/values.yaml > "$chart/values.yaml"
grep -q "^  repository: $IMAGE_TAG_BASE\$" "$chart/values.yaml" || die "cannot set image.repository in the chart's values.yaml"
"$HELM" lint --strict "$chart" > "$scratch/lint.log" 2>&1 || { cat "$scratch/lint.log" >&2; die "helm lint refused the chart"; }
"$HELM" package "$chart" --version "$VERSION" --app-version "$VERSION" --destination "$DIST" > /dev/null

step "README.md"
readme "$VERSION" "$img" "$bundle_img" "$name" > "$DIST/README.md"

step "checksums"
if command -v sha256sum > /dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
(cd "$DIST" && "${sum[@]}" $(ls | grep -v '^SHA256SUMS$') > SHA256SUMS)
step "done: $(cd "$DIST" && ls | tr '\n' ' ')"
