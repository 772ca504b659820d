#!/usr/bin/env bash
# The Python package on a GPU machine without a package registry (PyTorch, pytest, numpy,
# scikit-build-core and ninja preinstalled; the Debian headers staged in .deps/ by
# .ci/stage-deps.sh): install from this checkout, run every test (the gpu ones included),
# and the benchmark against broadcasting. Logs go to $OUT (default ./gpu-out); summaries last.
#   bash python/run-gpu-tests.sh [pytest arguments; default python/tests]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export TROPICAL_GEMM_CACHE_DIR=${TROPICAL_GEMM_CACHE_DIR:-$(mktemp -d)/tropical-gemm}
python=${PYTHON:-python3}
status=0

if [ -z "${TROPICAL_GEMM_SKIP_INSTALL:-}" ]; then  # set it to test what is installed already
    CMAKE_PREFIX_PATH="$PWD/.deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" \
        "$python" -m pip install --no-build-isolation --no-deps -v ./ > "$out/pip-install.log" 2>&1 \
        || { tail -40 "$out/pip-install.log"; exit 1; }
fi
"$python" python/benchmarks/bench_vs_broadcast.py > "$out/bench.log" 2>&1 || status=1
"$python" -m pytest -p no:cacheprovider -q -s -rs --durations=8 "${@:-python/tests}" > "$out/pytest.log" 2>&1 || status=1

grep -E "warm-up:|64\^3 f32:" "$out/pytest.log"
grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest.log" | tail -25
cat "$out/bench.log"
exit $status
