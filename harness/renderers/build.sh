#!/usr/bin/env bash
# Build the real renderers users have: helm (helm.sh/helm/v4/cmd/helm) and kustomize
# (sigs.k8s.io/kustomize/kustomize/v5), each from its own pinned module, into a cache folder
# outside the source tree, and print that folder (put it first on PATH to use them).
# Rebuilt only when a go.mod, go.sum or the build flags change (their hash names the folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../progress.sh"
helm_version="$(grep -Eo 'helm\.sh/helm/v4 v[0-9][^ ]*' "$here/helm/go.mod" | cut -d' ' -f2)"
[ -n "$helm_version" ] || { echo "renderers: no helm.sh/helm/v4 version in helm/go.mod" >&2; exit 1; }
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=${helm_version}"
cache="${DRAGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draguard}/renderers"
key="$( (cat "$here"/helm/go.mod "$here"/helm/go.sum "$here"/kustomize/go.mod "$here"/kustomize/go.sum; echo "$ldflags") \
  | sha256sum | cut -c1-16)"
bin="$cache/$key"
if [ ! -x "$bin/helm" ] || [ ! -x "$bin/kustomize" ]; then
  mkdir -p "$bin.tmp"
  (cd "$here/helm" && timed "renderers: helm ${helm_version}" \
      env CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin.tmp/helm" helm.sh/helm/v4/cmd/helm)
  (cd "$here/kustomize" && timed "renderers: kustomize" env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
      -o "$bin.tmp/kustomize" sigs.k8s.io/kustomize/kustomize/v5)
  rm -rf "$bin" && mv "$bin.tmp" "$bin"
fi
echo "$bin"
