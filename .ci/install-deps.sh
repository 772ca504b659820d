#!/usr/bin/env bash
# Installs what building and testing tropical-gemm needs on a Debian machine that already has the
# CUDA toolkit (its headers and NVRTC; no GPU needed). Safe to run again.
set -euo pipefail
packages=(cmake ninja-build g++ libfmt-dev libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev python3-pip python3-venv
          # Google Highway: the SIMD of the CPU kernels (src/cpu)
          libhwy-dev
          # nlohmann-json: the warm-up tool's --json documents, and its tests reading them
          nlohmann-json3-dev
          # clang-format: the code's style, checked by .ci/check-format.sh
          clang-format
          # clang with libFuzzer and its sanitizer runtimes, for the fuzz build (.ci/fuzz.sh)
          clang libclang-rt-14-dev
          # ccache: CI's builds share the objects they have in common (.ci/run)
          ccache)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! ls /usr/local/cuda/include/nvrtc.h >/dev/null 2>&1 && [ -z "${CUDA_HOME:-}" ]; then
    echo "install-deps: the CUDA toolkit (nvrtc.h, libnvrtc) was not found under /usr/local/cuda; install it or set CUDA_HOME" >&2
    exit 1
fi
