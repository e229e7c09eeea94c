#!/usr/bin/env bash
# make release-push: pushes the images of the release in DIST (make release) with crane, each to
# the reference images.txt names, after checking every file against SHA256SUMS; fails when a
# pushed image's digest is not the one images.txt records (the catalog pins the bundle by it).
#
# Environment (the Makefile sets it): DIST, CRANE, INSECURE_REGISTRY (true: plain HTTP).
# Credentials: those of `crane auth login` or `docker login`.
set -euo pipefail
: "${DIST:?}" "${CRANE:?}"
die() { echo "release-push: $*" >&2; exit 1; }
[ -f "$DIST/SHA256SUMS" ] && [ -f "$DIST/images.txt" ] || die "$DIST holds no release (SHA256SUMS, images.txt): run make release"
if command -v sha256sum > /dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
(cd "$DIST" && "${sum[@]}" --check --quiet SHA256SUMS) || die "$DIST does not match its SHA256SUMS"
insecure=()
[ "${INSECURE_REGISTRY:-false}" = true ] && insecure=(--insecure)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while read -r ref file; do
  want=${ref##*@}
  mkdir -p "$tmp/$file" && tar -xf "$DIST/$file" -C "$tmp/$file"
  got=$("$CRANE" push "${insecure[@]}" "$tmp/$file" "${ref%@*}")
  [ "${got##*@}" = "$want" ] || die "${ref%@*} was pushed as $got, not with the digest images.txt records ($want)"
  echo "release-push: ${ref%@*} -> $got"
done < "$DIST/images.txt"
