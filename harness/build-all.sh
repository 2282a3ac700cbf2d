#!/usr/bin/env bash
# Build every Go test harness (the allocator oracle, the control plane, helm and kustomize),
# each into its cache folder under ~/.cache/draguard, saying which component builds and for
# how long (harness/progress.sh). With 4 cores or more the three builds run at the same time
# (each go build already uses every core, so on fewer they only compete for memory and run
# one after another); then the time taken and the disk used, the build and module caches
# included. A warm cache builds nothing and says so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
start=$SECONDS
builds=("$here/allocator-oracle/build.sh" "$here/control-plane/build.sh" "$here/renderers/build.sh")
if [ "$(nproc)" -ge 4 ]; then
  echo "harness: building ${#builds[@]} harnesses at once ($(nproc) cores)" >&2
  pids=()
  for build in "${builds[@]}"; do "$build" >/dev/null & pids+=($!); done
  for pid in "${pids[@]}"; do wait "$pid"; done
else
  echo "harness: building ${#builds[@]} harnesses one after another ($(nproc) cores)" >&2
  for build in "${builds[@]}"; do "$build" >/dev/null; done
fi
cache="${DRAGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draguard}"
sizes="$(du -sh "$cache" "$(go env GOCACHE)" "$(go env GOMODCACHE)" 2>/dev/null | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')"
echo "harness: ready in $(( SECONDS - start )) s; disk: $sizes" >&2
