#!/usr/bin/env bash
# The Python package's tests on CI (no GPU), from the repository's root: a virtual environment, the
# package installed with pip from this checkout (scikit-build-core builds the CMake project), PyTorch,
# NumPy and pytest from PyPI, then pytest (the gpu tests skip).
#
# PyTorch from PyPI is its CUDA build (PyPI has no CPU-only wheel): measured on a 2-core Debian
# machine like CI's, `pip install torch` took 67 s, downloading 2.8 GB (torch 540 MB, cuDNN 520 MB,
# cuBLAS 400 MB, ...) and installing 5.4 GB. That is within CI's budget, so CI installs it. Should
# it fail anyway (network, disk), the package is installed without it and the tests that need no
# PyTorch still run (import, the NumPy CPU reference, the C ABI's statuses and descriptors, NVRTC
# and its fallbacks, the registry and cache warm-up).
set -euo pipefail
cd "$(dirname "$0")/.."
# A fresh environment of this run's own (about 5 GB with PyTorch), removed at the end, so that runs at
# the same time never share one; TROPICAL_GEMM_VENV names one to keep instead.
if [ -n "${TROPICAL_GEMM_VENV:-}" ]; then
    venv=$TROPICAL_GEMM_VENV
else
    venv=$(mktemp -d "${TMPDIR:-/tmp}/tropical-gemm-venv.XXXXXX")
    trap 'rm -rf "$venv"' EXIT
fi
python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install -q --no-cache-dir --upgrade pip
# The package is built in build-python/ (git-ignored) rather than a temporary folder, so that under
# .ci/run's ccache its objects are the README build's (the same sources, flags and relative paths).
if ! timeout 1800 "$py" -m pip install -q --no-cache-dir --config-settings=build-dir=build-python ./ pytest numpy \
        opt_einsum cotengra; then
    echo "python/ci.sh: installing the package with PyTorch failed; installing it without PyTorch" \
         "(the tests that need PyTorch skip)" >&2
    "$py" -m pip install -q --no-cache-dir --no-deps --config-settings=build-dir=build-python ./
    "$py" -m pip install -q --no-cache-dir pytest numpy opt_einsum
fi
"$venv/bin/pytest" -q -rs -p no:cacheprovider python/tests
