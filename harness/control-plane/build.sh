#!/usr/bin/env bash
# Build kube-apiserver, kube-scheduler and kube-controller-manager (k8s.io/kubernetes v1.37.2)
# and etcd (go.etcd.io/etcd/server/v3) into a cache folder outside the source tree, and print
# that folder. The folder is named by a hash of the wrapper modules and the build flags, so the
# binaries are rebuilt only when the pins change. Pure Go (CGO_ENABLED=0), version-stamped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../progress.sh"
version="v1.37.2"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"
cache="${DRAGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draguard}/control-plane"
key="$( (cat "$here"/kubernetes/go.mod "$here"/kubernetes/go.sum "$here"/etcd/go.mod "$here"/etcd/go.sum "$here"/etcd/main.go; echo "$ldflags") | sha256sum | cut -c1-16)"
bin="$cache/$key"
if [ ! -x "$bin/etcd" ] || [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-scheduler" ] || [ ! -x "$bin/kube-controller-manager" ]; then
  mkdir -p "$bin.tmp"
  (cd "$here/kubernetes" && timed "control-plane: kube-apiserver, kube-scheduler, kube-controller-manager ${version}" \
      env CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin.tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
      k8s.io/kubernetes/cmd/kube-controller-manager)
  (cd "$here/etcd" && timed "control-plane: etcd" env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin.tmp/etcd" .)
  rm -rf "$bin" && mv "$bin.tmp" "$bin"
fi
echo "$bin"
