# Sourced by the harness build scripts: `timed NAME COMMAND...` runs one Go build and says on
# stderr which component it is and how long it has taken: at the start, every 30 s while it
# runs (a cold build of the control plane takes many minutes and go build prints nothing),
# and at the end. stdout stays the build script's answer (the folder it built into).
timed() {
  local name="$1"; shift
  local start=$SECONDS every="${DRAGUARD_PROGRESS_EVERY:-30}"
  echo "harness: $name: building" >&2
  "$@" >&2 &
  local build=$!
  ( while sleep "$every"; do
      echo "harness: $name: still building ($(( SECONDS - start )) s)" >&2
    done ) &
  local ticker=$!
  local status=0
  wait "$build" || status=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "harness: $name: failed after $(( SECONDS - start )) s (exit $status)" >&2
    return "$status"
  fi
  echo "harness: $name: built in $(( SECONDS - start )) s" >&2
}
