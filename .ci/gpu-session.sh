#!/usr/bin/env bash
# On the GPU machine (no package registry): build against the Debian headers staged in .deps/ by
# .ci/stage-deps.sh (run where there is a registry), run every test including the gpu-labelled ones,
# then benchmarks.
#   .ci/gpu-session.sh tests                 build, then all tests
#   .ci/gpu-session.sh bench [regex]         build, then both benchmark suites (optionally filtered)
#   .ci/gpu-session.sh all [regex]           both
#   .ci/gpu-session.sh full                  the whole benchmark suite, one kernel group at a time,
#                                            after a cold warm-up of every kernel with the tool
# Logs and JSON go to $OUT (default ./gpu-out); a short summary is printed last.
set -uo pipefail
mode=${1:-all}
filter=${2:-}
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
export TROPICAL_GEMM_CACHE_DIR=${TROPICAL_GEMM_CACHE_DIR:-$(mktemp -d)/tropical-gemm}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1

cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/.deps/usr" \
    > "$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }

status=0
if [ "$mode" = tests ] || [ "$mode" = all ]; then
    ctest --test-dir build-gpu --output-on-failure -j 4 --timeout 900 > "$out/ctest.log" 2>&1 || status=1
    grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$out/ctest.log" | tail -30
fi
if [ "$mode" = full ]; then
    CUDA_CACHE_DISABLE=1 ./build-gpu/src/tools/tropical-gemm-warmup --cache-dir "$(mktemp -d)" --json > "$out/warmup.json" 2>&1
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('cold warm-up of every kernel (tool, all cores, CUDA_CACHE_DISABLE=1):', d['compiled'], 'kernels in', d['seconds'], 's')" "$out/warmup.json"
    python3 bench/run_benchmarks.py --build build-gpu --json-dir "$out" --out "$out/report.md" --by-group \
        > "$out/bench.log" 2>&1 || status=1
    cat "$out/report.md" 2>/dev/null || tail -30 "$out/bench.log"
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
    python3 bench/run_benchmarks.py --build build-gpu --json-dir "$out" --out "$out/report.md" \
        ${filter:+--filter "$filter"} > "$out/bench.log" 2>&1 || status=1
    cat "$out/report.md" 2>/dev/null || tail -30 "$out/bench.log"
fi
cat "$out/gpu.txt"
exit $status
