#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) in build-fuzz/ and runs each
# for a fixed time from its seed corpus. A crash, a sanitizer report or a broken invariant fails:
# the input is left in build-fuzz/crashes/; copy it to tests/fuzz/regressions/<target>/ with the
# fix, and fuzz_regression_test replays it from then on.
#   .ci/fuzz.sh [seconds per target, default 60] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(cache_entry request)

cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTROPICAL_GEMM_FUZZ=ON \
      -DBUILD_SHARED_LIBS=OFF -DTROPICAL_GEMM_BUILD_TESTS=OFF -DTROPICAL_GEMM_BUILD_BENCHMARKS=OFF \
      -DTROPICAL_GEMM_BUILD_EXAMPLES=OFF -DTROPICAL_GEMM_BUILD_TOOLS=OFF >/dev/null
cmake --build build-fuzz

status=0
mkdir -p build-fuzz/crashes
for target in "${targets[@]}"; do
    # New inputs go to a scratch corpus (the first folder); the seeds in the repository are read only.
    work=build-fuzz/corpus/$target
    mkdir -p "$work"
    log=build-fuzz/fuzz_$target.log
    # intercept_tls_get_addr=0: as for the ASan tests in .ci/run, the sanitizer runtime (up to LLVM 16)
    # can misread a TLS block and crash LeakSanitizer's tracer with no leak found.
    if ASAN_OPTIONS=intercept_tls_get_addr=0 build-fuzz/tests/fuzz/fuzz_"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=build-fuzz/crashes/"$target"- "$work" tests/fuzz/corpus/"$target" \
        >"$log" 2>&1; then
        runs=$(grep -o 'number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
        echo "fuzz $target: $runs runs in $seconds s, no crash"
    else
        status=1
        echo "fuzz $target: FAILED; the end of its log ($log):"
        tail -40 "$log"
        ls build-fuzz/crashes/"$target"-* 2>/dev/null || true
    fi
done
exit $status
