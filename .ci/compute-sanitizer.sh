#!/usr/bin/env bash
# On a GPU machine: every gpu-labelled test under compute-sanitizer, once per tool, then a summary.
#   .ci/compute-sanitizer.sh [build dir] [tool...]
# Default: build-gpu (what .ci/gpu-session.sh builds), tools memcheck racecheck initcheck synccheck.
# TESTS=<regex> keeps only the matching tests; TIMEOUT=<seconds> bounds each run (default 1800).
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

# The gpu-labelled tests and their command lines, from CTest itself: one line each, name then
# command, fields separated by tabs.
mapfile -t tests < <(ctest --test-dir "$build" -L gpu ${TESTS:+-R "$TESTS"} --show-only=json-v1 | python3 -c '
import json, sys
for test in json.load(sys.stdin)["tests"]:
    print("\t".join([test["name"]] + test["command"]))')
((${#tests[@]})) || { echo "no gpu-labelled tests in $build (built? TESTS=${TESTS:-} too narrow?)" >&2; exit 2; }

# Compile every kernel for this GPU first, outside the sanitizer, so the runs below measure kernels.
if [ -x "$build/src/tools/tropical-gemm-warmup" ]; then
    "$build/src/tools/tropical-gemm-warmup" -q >"$out/warmup.log" 2>&1 ||
        echo "warm-up failed (see $out/warmup.log); the tests compile what they need themselves"
fi

status=0
summary=()
for tool in "${tools[@]}"; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    for line in "${tests[@]}"; do
        IFS=$'\t' read -r -a fields <<<"$line"
        name=${fields[0]}
        log=$out/$tool-$name.log
        # --target-processes all: tests that start other processes (the start-up benchmark) are
        # checked in those too. --error-exitcode: a report fails the run even if the test passes.
        timeout "${TIMEOUT:-1800}" "$sanitizer" --tool "$tool" "${extra[@]}" --target-processes all \
            --error-exitcode 99 "${fields[@]:1}" >"$log" 2>&1
        code=$?
        errors=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | awk '{n += $NF} END {print n + 0}')
        case $code in
            0) verdict="ok" ;;
            99) verdict="ERRORS (${errors:-?})"; status=1 ;;
            124) verdict="TIMEOUT"; status=1 ;;
            *) verdict="FAILED (exit $code)"; status=1 ;;
        esac
        summary+=("$(printf '%-10s %-34s %s' "$tool" "$name" "$verdict")")
        echo "${summary[-1]}"
    done
done
echo
echo "compute-sanitizer summary ($build, logs in $out):"
printf '%s\n' "${summary[@]}"
exit $status
