#!/usr/bin/env bash
# deploy/build.sh: the container image's build steps, as a script that the
# Dockerfile's stages run and that a test can run on a fresh Debian 12 root
# (there is no Docker engine where Stepbox is developed). As root on Debian 12:
#
#   deploy/build.sh build OUTDIR [VERSION]   install the build's packages and build
#                                            OUTDIR/stepbox with cgo: DuckDB and GLPK
#   deploy/build.sh runtime-deps             install what the binary needs at run
#                                            time: the C++ runtime, python3 with
#                                            numpy and pandas, CA certificates
#
# build checks that the binary has both modules (stepbox version) and fails
# otherwise, so an image never ships without them. runtime-deps empties
# apt's caches afterwards, for the image's size: it is meant for the image's
# runtime stage, not for a machine one works on.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/packages.sh"

usage() { sed -n '6,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Packages of the runtime stage. The binary links GLPK (and its libraries)
# statically and glibc, libm, libstdc++ and libgcc_s dynamically (ldd);
# python3 runs Python steps, with the data stack they import; CA
# certificates for the egress proxy's TLS. tzdata: pandas reads the zone
# files.
runtime_packages=(libstdc++6 libgcc-s1 ca-certificates python3 python3-numpy python3-pandas tzdata)

build() {
  local out=${1:?usage: deploy/build.sh build OUTDIR [VERSION]} version=${2:-dev}
  need=()
  sb_build_needs
  if [ ${#need[@]} -gt 0 ]; then
    sb_can_install || { echo "build.sh: missing ${need[*]}; run as root on Debian" >&2; exit 1; }
    echo "build.sh: installing ${need[*]}" >&2
    sb_install --no-install-recommends "${need[@]}"
  fi
  mkdir -p "$out"
  CGO_ENABLED=1 go -C "$repo" build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/stepbox/stepbox/internal/cli.Version=$version" \
    -o "$out/stepbox" ./cmd/stepbox
  local v
  v=$("$out/stepbox" version)
  echo "$v" >&2
  if ! grep -q '^duckdb: yes' <<<"$v" || ! grep -q '^glpk: yes' <<<"$v"; then
    echo "build.sh: $out/stepbox lacks a module" >&2
    exit 1
  fi
}

runtime_deps() {
  sb_can_install || { echo "build.sh: runtime-deps installs Debian packages: run as root on Debian" >&2; exit 1; }
  sb_install --no-install-recommends "${runtime_packages[@]}"
  apt-get clean
  rm -rf /var/lib/apt/lists/*
}

case ${1:-} in
build) shift; build "$@" ;;
runtime-deps) runtime_deps ;;
*) usage ;;
esac
