#!/usr/bin/env bash
# Build draguard's two images from the repository's Dockerfiles without a Docker engine, and
# write them as OCI archives: buildah (chroot isolation, vfs storage: no daemon, no overlay
# mounts) runs the same Dockerfile steps `docker build` and the release workflow run.
#
#   deploy/image/build.sh OUTPUT_DIR
#
# The base: DRAGUARD_IMAGE_BASE if set (e.g. python:3.11-slim-bookworm where a registry is
# reachable), else a Debian bookworm minbase with its Python 3.11 made here by debootstrap
# (what python:3.11-slim-bookworm is built on), kept as localhost/draguard-base:bookworm.
# The build machine's CA bundle ($SSL_CERT_FILE, for a TLS-inspecting proxy in front of PyPI)
# is mounted into the RUN steps only: it is never part of an image.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: deploy/image/build.sh OUTPUT_DIR}"
mkdir -p "$out"
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}" BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"
for tool in buildah; do
  command -v "$tool" >/dev/null || { echo "image: $tool is not installed (Debian: apt-get install buildah)" >&2; exit 2; }
done
version="$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
start=$SECONDS

base="${DRAGUARD_IMAGE_BASE:-localhost/draguard-base:bookworm}"
if [ -z "${DRAGUARD_IMAGE_BASE:-}" ] && ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "image: debootstrap is not installed (Debian: apt-get install debootstrap)" >&2; exit 2; }
  work="$(mktemp -d)"
  echo "image: making the base $base (debootstrap bookworm minbase with python3)"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$work/rootfs" \
    "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  container="$(buildah from scratch)"
  buildah copy --quiet "$container" "$work/rootfs" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/sh "$container"
  buildah commit --quiet --rm "$container" "$base" >/dev/null
  rm -rf "$work"
fi

ca=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  ca=(--volume "$SSL_CERT_FILE:/etc/ssl/certs/ca-certificates.crt:ro")
fi
build() {  # build NAME DOCKERFILE
  echo "image: building $1 from $2 on $base"
  buildah bud --quiet --layers=false "${ca[@]}" --build-arg PYTHON="$base" -t "$1" -f "$2" . >/dev/null
}
build "ghcr.io/draguard/draguard:$version" Dockerfile
build "localhost/draguard-teardown:$version" deploy/teardown/Dockerfile
buildah push --quiet "ghcr.io/draguard/draguard:$version" "oci-archive:$out/draguard-$version.oci.tar"
buildah push --quiet "localhost/draguard-teardown:$version" "oci-archive:$out/draguard-teardown-$version.oci.tar"
echo "image: ghcr.io/draguard/draguard:$version and localhost/draguard-teardown:$version in $((SECONDS - start)) s;" \
     "archives in $out"
