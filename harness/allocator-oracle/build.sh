#!/usr/bin/env bash
# Build the allocator oracle into a cache folder outside the source tree and print its path.
# The binary is rebuilt only when go.mod, go.sum or main.go change (their hash names the folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../progress.sh"
cache="${DRAGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draguard}/allocator-oracle"
key="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
binary="$cache/$key/allocator-oracle"
if [ ! -x "$binary" ]; then
  mkdir -p "$cache/$key"
  (cd "$here" && timed "allocator-oracle (k8s.io/dynamic-resource-allocation)" \
      env CGO_ENABLED=0 go build -trimpath -o "$binary.tmp" .)
  mv "$binary.tmp" "$binary"
fi
echo "$binary"
