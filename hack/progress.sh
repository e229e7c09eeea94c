#!/usr/bin/env bash
# Runs a long build step and says what it is doing while it runs, so that a first run on a slow
# machine (nothing cached: tens of minutes of compiling) does not look hung.
#
# usage: hack/progress.sh LABEL CMD [ARG...]
#
# Prints "LABEL ..." at the start, then every PROGRESS_INTERVAL seconds (default 20, so the user
# hears something at least every 30 s) the elapsed time and, for go commands run with -v, how many
# packages were compiled so far and the last one (or the last module being downloaded), and at the
# end "LABEL: done in …". All of it goes to stderr. CMD's own output (package names from -v,
# "go: downloading" lines) is kept in a temporary log and shown only when CMD fails, without the
# package names. The exit status is CMD's. TERM/INT are passed on to CMD.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 LABEL CMD [ARG...]" >&2; exit 2; }
label=$1; shift
cmd=$(basename "$1")
interval=${PROGRESS_INTERVAL:-20}
log=$(mktemp)
child=
cleanup() { rm -f "$log"; }
trap cleanup EXIT
# A background job of a non-interactive shell ignores SIGINT, so pass the signal on ourselves.
forward() { [ -n "$child" ] && kill -TERM "$child" 2>/dev/null || true; }
trap forward INT TERM

elapsed() { local s=$(( SECONDS - start )); printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); }
# A line of `go build -v` output is a bare import path; anything else (errors, "go: downloading")
# is a message.
is_pkg='^[A-Za-z0-9._~/+-]+$'

plural() { if [ "$1" -eq 1 ]; then echo "1 $2"; else echo "$1 $2s"; fi; }

status() {
  local pkgs last dl
  pkgs=$(grep -cE "$is_pkg" "$log" || true)
  dl=$(grep -c '^go: downloading ' "$log" || true)
  last=$(tail -n 1 "$log" 2>/dev/null || true)
  if [[ $last == "go: downloading "* ]]; then
    printf '%s downloaded, last %s' "$(plural "$dl" module)" "${last#go: downloading }"
  elif [ "$pkgs" -gt 0 ]; then
    printf '%s compiled, last %s' "$(plural "$pkgs" package)" "$last"
  elif [ "$cmd" = go ]; then
    printf 'nothing compiled yet (checking the build cache, or linking)'
  else
    printf 'running'
  fi
}

start=$SECONDS
echo "[$(date +%H:%M:%S)] $label ..." >&2
"$@" >"$log" 2>&1 &
child=$!
next=$(( SECONDS + interval ))
while kill -0 "$child" 2>/dev/null; do
  sleep 1
  if [ "$SECONDS" -ge "$next" ]; then
    echo "[$(date +%H:%M:%S)] $label: $(elapsed), $(status)" >&2
    next=$(( SECONDS + interval ))
  fi
done
rc=0
wait "$child" || rc=$?
pkgs=$(grep -cE "$is_pkg" "$log" || true)
if [ "$rc" -ne 0 ]; then
  echo "[$(date +%H:%M:%S)] $label FAILED (exit $rc) after $(elapsed); its output:" >&2
  grep -vE "$is_pkg" "$log" >&2 || true
  exit "$rc"
fi
echo "[$(date +%H:%M:%S)] $label: done in $(elapsed)$([ "$pkgs" -gt 0 ] && echo ", $(plural "$pkgs" package) compiled")" >&2
