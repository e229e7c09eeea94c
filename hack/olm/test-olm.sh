#!/usr/bin/env bash
# make test-olm: installs, upgrades and removes the operator with the real OLM on the local node.
#   1. tools: operator-sdk, scorecard-test, opm, olm, catalog, cpb, grpc_health_probe
#      (hack/build-olm.sh, cached in bin/olm/), Debian's busybox-static (hack/olm/busybox.sh)
#   2. the operator and test images (hack/imagebuilder) and two bundles of this tree, as `make
#      bundle` makes them (hack/bundle.sh, operator-sdk), with their images (hack/imagebuilder, as
#      `make release` builds one): 0.1.0, and 0.1.1 replacing it; the
#      operator image is pushed under both versions' tags, so the upgrade rolls every pod of the
#      operator to a new image reference; and `make release` 0.1.2-rc.1 of this tree into
#      bin/olm-test/dist, for the node's architecture
#   3. the local node (hack/local-cluster/up.sh), the HTTPS test registry (hack/olm/registry) and
#      containerd's hosts.toml for it; every image pushed (hack/olm/images), the release's
#      (its catalog image included) with the release-push program of its dist/
#   4. OLM (hack/olm/install.sh)
#   5. the Ginkgo suite test/olm (build tag olm): run bundle, the e2e smoke subset, run
#      bundle-upgrade, scorecard, cleanup; then the release from its catalog through a
#      CatalogSource, an OperatorGroup and a Subscription, and its uninstall
# The node and the registry are always stopped afterwards (trap), every host change undone.
#
# OLM_KEEP_CLUSTER=true leaves the nodes and the registry up (then stop the registry first, it
# listens in node B's network namespace too: kill $(cat bin/olm-test/registry.pid); then make
# cluster-down). Extra arguments go to `go test`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "test-olm must run as root (it starts a kubelet and containerd)" >&2; exit 1; }
KUSTOMIZE=${KUSTOMIZE:-$ROOT/bin/kustomize}
t0=$(date +%s)
phase() { log "=== $* ($(elapsed))"; }

registry_pid=
stop_registry() {
  [ -n "$registry_pid" ] || return 0
  if kill -0 "$registry_pid" 2>/dev/null; then
    kill -TERM "$registry_pid"
    for _ in $(seq 1 20); do kill -0 "$registry_pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$registry_pid" 2>/dev/null && { log "registry ($registry_pid) did not stop on TERM: KILL"; kill -KILL "$registry_pid"; }
  fi
  rm -f "$OLM_TEST_DIR/registry.pid"
  registry_pid=
}

cleanup() {
  local rc=$?
  if [ "${OLM_KEEP_CLUSTER:-false}" = true ]; then
    log "nodes and registry left up (OLM_KEEP_CLUSTER=true): kill \$(cat $OLM_TEST_DIR/registry.pid); make cluster-down"
  else
    stop_registry
    "$ROOT/hack/local-cluster/down.sh" || rc=1
  fi
  log "test-olm finished rc=$rc in $(elapsed)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

phase "tools"
OLM_BIN=$("$ROOT/hack/build-olm.sh")
BUSYBOX=$("$OLM_HACK/busybox.sh")
# SDK_VERSION, OPM_VERSION, OLM_VERSION: what hack/olm-build/go.mod pins
source "$OLM_BIN/versions.env"
# The scorecard config names its test image; it is served from the test registry under that name.
scorecard_images=$(awk '/image:/ {print $2}' "$ROOT/bundle/tests/scorecard/config.yaml" | sort -u)
[ "$scorecard_images" = "quay.io/operator-framework/scorecard-test:$SDK_VERSION" ] || {
  log "bundle/tests/scorecard/config.yaml uses $scorecard_images; the scorecard-test built here is $SDK_VERSION (config/scorecard)"; exit 1; }

phase "images and bundles"
mkdir -p "$OLM_TEST_DIR/bin"
(cd "$ROOT" && go build -o "$OLM_TEST_DIR/bin/" ./hack/imagebuilder ./hack/olm/registry ./hack/olm/images)
IMAGEBUILDER=$OLM_TEST_DIR/bin/imagebuilder
(cd "$ROOT" && "$IMAGEBUILDER" -out "$IMAGES_DIR" -tag e2e)
# make_bundle V: bundle V of this tree in $OLM_TEST_DIR/bundle-V, replacing $PREVIOUS when set,
# validated (hack/bundle.sh, as `make bundle`).
make_bundle() {
  local v=$1 k8s
  k8s=$(echo "${K8S_VERSION#v}" | cut -d. -f1,2)
  KUSTOMIZE="$KUSTOMIZE" OPERATOR_SDK="$OLM_BIN/operator-sdk" "$ROOT/hack/bundle.sh" --version "$v" \
    --image "$OPERATOR_IMAGE_BASE:v$v" --created-at 2026-11-30T00:00:00Z ${PREVIOUS:+--replaces "$PREVIOUS"} \
    --k8s-version "$k8s" --output-dir "$OLM_TEST_DIR/bundle-$v"
}
OPERATOR_IMAGE_BASE=$REGISTRY/enhanced-liveness-operator
PREVIOUS=
for v in "$UPGRADE_FROM" "$UPGRADE_TO"; do
  blog=$OLM_TEST_DIR/bundle-$v.log
  if ! make_bundle "$v" > "$blog" 2>&1; then
    cat "$blog" >&2; log "bundle $v: generation or validation failed"; exit 1
  fi
  log "bundle $v${PREVIOUS:+ (replaces $PREVIOUS)}: generated and valid, in $OLM_TEST_DIR/bundle-$v"
  # its image, as make release builds one (bundle.Dockerfile's layout and labels)
  (cd "$ROOT" && "$IMAGEBUILDER" -out "$OLM_TEST_DIR/bundle-$v-image" -tag "v$v" -version "$v" \
    -bundle-dir "$OLM_TEST_DIR/bundle-$v" bundle) > /dev/null
  PREVIOUS=$OPERATOR_PACKAGE.v$v
done
# The release as a maintainer makes it (docs/release.md), images for this node only.
RELEASE_DIST=$OLM_TEST_DIR/dist
if ! make -C "$ROOT" release VERSION="v$CATALOG_RELEASE" DIST="$RELEASE_DIST" REGISTRY="$REGISTRY" \
  RELEASE_PLATFORMS="linux/$(go env GOARCH)" RELEASE_TOOL_PLATFORMS="linux/$(go env GOARCH)" KUSTOMIZE="$KUSTOMIZE" \
  > "$OLM_TEST_DIR/release.log" 2>&1; then
  cat "$OLM_TEST_DIR/release.log" >&2; log "make release $CATALOG_RELEASE failed"; exit 1
fi
log "release $CATALOG_RELEASE: $(cd "$RELEASE_DIST" && ls | tr '\n' ' ')"
# The release's references, pinned by digest: its catalog image and the operator image it names.
CATALOG_IMAGE=$(awk -v r="$REGISTRY/$OPERATOR_PACKAGE-catalog:" 'index($1, r) == 1 {print $1}' "$RELEASE_DIST/images.txt")
RELEASE_IMAGE=$(awk -v r="$REGISTRY/$OPERATOR_PACKAGE:" 'index($1, r) == 1 {print $1}' "$RELEASE_DIST/images.txt")
[ -n "$CATALOG_IMAGE" ] && [ -n "$RELEASE_IMAGE" ] || { log "$RELEASE_DIST/images.txt names no catalog or operator image"; exit 1; }

phase "node"
"$ROOT/hack/local-cluster/up.sh" >/dev/null

phase "registry on $REGISTRY"
if curl -s -o /dev/null -m 2 -k "https://$REGISTRY/v2/"; then
  log "something already listens on $REGISTRY (a registry left by OLM_KEEP_CLUSTER=true? kill \$(cat $OLM_TEST_DIR/registry.pid))"; exit 1
fi
rm -f "$REGISTRY_CA"
# Each further node's containerd reaches 127.0.0.1 in its own network namespace: the registry
# listens there too.
registry_netns=()
for l in $(started_extra_nodes); do extra_node "$l"; registry_netns+=(-netns "$XN_NS/net"); done
"$OLM_TEST_DIR/bin/registry" -addr "$REGISTRY" -dir "$REGISTRY_DIR" "${registry_netns[@]}" > "$OLM_TEST_DIR/registry.log" 2>&1 &
registry_pid=$!
echo "$registry_pid" > "$OLM_TEST_DIR/registry.pid"
wait_until "registry serving" 30 curl -sf -m 2 --cacert "$REGISTRY_CA" "https://$REGISTRY/v2/" \
  || { cat "$OLM_TEST_DIR/registry.log" >&2; exit 1; }
# `operator-sdk run bundle-upgrade` has no --decompression-image: the init container of its new
# registry pod always runs the default of `run bundle --decompression-image`. That name is served
# from the test registry too (the opm image: sh, cat and gzip).
DEFAULT_INIT_IMAGE=$("$OLM_BIN/operator-sdk" run bundle --help | sed -n 's/.*--decompression-image string.*(default "\([^"]*\)").*/\1/p')
[ -n "$DEFAULT_INIT_IMAGE" ] || { log "cannot read the default --decompression-image of operator-sdk run bundle"; exit 1; }
# containerd reads hosts.toml at each pull: the registry itself, and the hosts of the images that
# operator-sdk names itself mirrored to it: quay.io for the scorecard test image of
# bundle/tests/scorecard/config.yaml, and the host of the default decompression image.
for host in "$REGISTRY" quay.io "${DEFAULT_INIT_IMAGE%%/*}"; do
  mkdir -p "$STATE/containerd/certs.d/$host"
  cat > "$STATE/containerd/certs.d/$host/hosts.toml" <<TOML
server = "https://$host"
[host."https://$REGISTRY"]
  capabilities = ["pull", "resolve"]
  ca = "$REGISTRY_CA"
TOML
done
PUSH="$OLM_TEST_DIR/bin/images"
"$PUSH" tools -bin "$OLM_BIN" -busybox "$BUSYBOX" -registry "$REGISTRY" -ca "$REGISTRY_CA" \
  -olm-tag "$OLM_VERSION" -opm-tag "$OPM_VERSION" -sdk-tag "$SDK_VERSION"
"$PUSH" copy -from "$REGISTRY/opm:$OPM_VERSION" -ref "$REGISTRY/${DEFAULT_INIT_IMAGE#*/}" -ca "$REGISTRY_CA"
for v in "$UPGRADE_FROM" "$UPGRADE_TO"; do
  "$PUSH" archive -file "$IMAGES_DIR/operator.tar" -ca "$REGISTRY_CA" -ref "$OPERATOR_IMAGE_BASE:v$v"
done
for v in "$UPGRADE_FROM" "$UPGRADE_TO"; do
  "$PUSH" archive -file "$OLM_TEST_DIR/bundle-$v-image/bundle.tar" -ref "$REGISTRY/$OPERATOR_PACKAGE-bundle:v$v" -ca "$REGISTRY_CA"
done
# The release, catalog image included, with the release-push it ships, run in its directory.
(cd "$RELEASE_DIST" && "./release-push-linux-$(go env GOARCH)" --ca-file "$REGISTRY_CA")

phase "OLM $OLM_VERSION"
"$OLM_HACK/install.sh" "$REGISTRY/olm:$OLM_VERSION" "$REGISTRY/opm:$OPM_VERSION"

phase "suite test/olm"
export KUBECONFIG=$KUBECONFIG_FILE KUBECTL=$K8S_BIN/kubectl SSL_CERT_FILE=$REGISTRY_CA
export OLM_OPERATOR_SDK=$OLM_BIN/operator-sdk
export OLM_UPGRADE_FROM=$UPGRADE_FROM OLM_UPGRADE_TO=$UPGRADE_TO
export OLM_BUNDLE_V1=$REGISTRY/$OPERATOR_PACKAGE-bundle:v$UPGRADE_FROM OLM_BUNDLE_V2=$REGISTRY/$OPERATOR_PACKAGE-bundle:v$UPGRADE_TO
export OLM_INDEX_IMAGE=$REGISTRY/opm:$OPM_VERSION OLM_UNTAR_IMAGE=$REGISTRY/scorecard-untar:$SDK_VERSION
# A pre-release is in the candidate channel only (docs/release.md).
export OLM_CATALOG_IMAGE=$CATALOG_IMAGE OLM_CATALOG_RELEASE=$CATALOG_RELEASE OLM_RELEASE_IMAGE=$RELEASE_IMAGE OLM_CATALOG_CHANNEL=candidate
export E2E_APP_IMAGE=localhost/e2e-app:e2e E2E_REPORT_DIR=${E2E_REPORT_DIR:-$ROOT/bin/olm-report}
export PATH=$K8S_BIN:$CONTAINERD_BIN:$PATH
cd "$ROOT"
go test -tags=olm ./test/olm/ -count=1 -timeout 45m -v -ginkgo.v "$@"
