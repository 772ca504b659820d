#!/usr/bin/env bash
# Stages, on a machine with Debian's package registry, the build dependencies that a GPU machine
# without a registry lacks (one with only the CUDA toolkit, a compiler, CMake, fmt, GoogleTest and
# Google Benchmark): xxHash, CLI11, nlohmann-json and Highway (its headers and libhwy.so), unpacked
# into .deps/ (git-ignored), a folder that can travel with the tree. There:
# cmake -DCMAKE_PREFIX_PATH=$PWD/.deps/usr ... (.ci/gpu-session.sh and python/run-gpu-tests.sh do it).
#   bash .ci/stage-deps.sh [more Debian package names...]
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libxxhash-dev libxxhash0 libcli11-dev nlohmann-json3-dev libhwy-dev libhwy1 "$@")
rm -rf .deps && mkdir -p .deps/debs
[ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ] || apt-get update -qq
# apt-get download writes as the invoking user; a folder only root may write makes it warn, not fail.
(cd .deps/debs && apt-get download -qq "${packages[@]}")
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps; done
rm -rf .deps/debs
echo "staged into .deps/: ${packages[*]}"
