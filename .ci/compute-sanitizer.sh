#!/usr/bin/env bash
# On a GPU machine: every gpu-labelled test under compute-sanitizer, once per tool, then a summary.
#   .ci/compute-sanitizer.sh [build dir] [tool...]
# Default: build-gpu (what .ci/gpu-session.sh builds), tools memcheck racecheck initcheck synccheck,
# the tools side by side (JOBS=1 runs them one after another).
# TESTS=<regex> keeps only the matching tests, EXCLUDE=<regex> drops some (default: the start-up
# benchmark, which times fresh processes); TIMEOUT=<seconds> bounds each run (default 1800).
# Under the sanitizer every memory access of every thread is checked, so a few test cases are left to
# the plain run (SKIP_CASES, a GoogleTest negative filter): the products of more than 2^31 elements or
# 8 million rows, 70,000-product batches, the range-end sweeps over 1000^3 products, and the fault
# tests that fill the device's memory, start a busy process or make an allocation fail on purpose
# (which memcheck reports as an API error). The same kernels run on smaller shapes here. The load
# test makes TROPICAL_LOAD_CALLS calls per thread (default here 10), under every tool but racecheck
# (RACECHECK_EXCLUDE): racecheck serialises the 16 threads' launches and 160 calls did not finish in
# 200 s on the H200; racecheck looks for shared-memory hazards inside a block, and the same kernels
# are racechecked through the correctness suites.
# Logs go to $OUT (default ./sanitizer-out). Exits 1 if any run reports an error or fails.
set -uo pipefail
build=${1:-build-gpu}
shift || true
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)
out=${OUT:-$PWD/sanitizer-out}
mkdir -p "$out"
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
[ -x "$sanitizer" ] || { echo "compute-sanitizer not found (looked in PATH and $sanitizer)" >&2; exit 2; }
# One private cache for every run: kernels are compiled once, not once per tool.
export TROPICAL_GEMM_CACHE_DIR=${TROPICAL_GEMM_CACHE_DIR:-$(mktemp -d)/tropical-gemm}
export GTEST_FILTER=${SKIP_CASES:--HugeOutputGpu.*:*RowsBeyondTheGridLimit*:*MoreThan65535Products*:*InLargeProducts*:GpuFaults.AllocationBeyondFreeMemory*:GpuFaults.FullDeviceMemory:GpuFaults.BusyDevice*}
export TROPICAL_LOAD_CALLS=${TROPICAL_LOAD_CALLS:-10}
exclude=${EXCLUDE-startup_bench}

# The gpu-labelled tests and their command lines, from CTest itself: one line each, name then
# command, fields separated by tabs.
mapfile -t tests < <(ctest --test-dir "$build" -L gpu ${TESTS:+-R "$TESTS"} ${exclude:+-E "$exclude"} --show-only=json-v1 | python3 -c '
import json, sys
for test in json.load(sys.stdin)["tests"]:
    print("\t".join([test["name"]] + test["command"]))')
((${#tests[@]})) || { echo "no gpu-labelled tests in $build (built? TESTS=${TESTS:-} too narrow?)" >&2; exit 2; }

# Compile every kernel for this GPU first, outside the sanitizer, so the runs below measure kernels.
if [ -x "$build/src/tools/tropical-gemm-warmup" ]; then
    "$build/src/tools/tropical-gemm-warmup" -q >"$out/warmup.log" 2>&1 ||
        echo "warm-up failed (see $out/warmup.log); the tests compile what they need themselves"
fi

# One tool over every test; one summary line per test in $out/<tool>.summary.
run_tool() {
    local tool=$1 extra=() status=0
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    : >"$out/$tool.summary"
    for line in "${tests[@]}"; do
        IFS=$'\t' read -r -a fields <<<"$line"
        local name=${fields[0]}
        if [ "$tool" = racecheck ] && [[ "$name" =~ ^(${RACECHECK_EXCLUDE-load_gpu_test})$ ]]; then
            printf '%-10s %-26s %s\n' "$tool" "$name" "not run (RACECHECK_EXCLUDE)" | tee -a "$out/$tool.summary"
            continue
        fi
        local log=$out/$tool-$name.log
        # --target-processes all: tests that start other processes are checked in those too.
        # --error-exitcode: a report fails the run even if the test passes.
        timeout "${TIMEOUT:-1800}" "$sanitizer" --tool "$tool" "${extra[@]}" --target-processes all \
            --error-exitcode 99 "${fields[@]:1}" >"$log" 2>&1
        local code=$?
        local errors
        errors=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | awk '{n += $NF} END {print n + 0}')
        local verdict
        case $code in
            0) verdict="ok ($(grep -Eo '[0-9]+ tests? from [0-9]+ test suites? ran' "$log" | tail -1))" ;;
            99) verdict="ERRORS (${errors:-?})"; status=1 ;;
            124) verdict="TIMEOUT"; status=1 ;;
            *) verdict="FAILED (exit $code)"; status=1 ;;
        esac
        printf '%-10s %-26s %s\n' "$tool" "$name" "$verdict" | tee -a "$out/$tool.summary"
    done
    return $status
}

status=0
pids=()
for tool in "${tools[@]}"; do
    if [ "${JOBS:-4}" -gt 1 ]; then
        run_tool "$tool" & pids+=($!)
    else
        run_tool "$tool" || status=1
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
echo
echo "compute-sanitizer summary ($build, logs in $out):"
for tool in "${tools[@]}"; do cat "$out/$tool.summary"; done
exit $status
