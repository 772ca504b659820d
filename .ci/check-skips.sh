#!/usr/bin/env bash
# On a machine without a GPU, every gpu-labelled CTest test (the GPU test programs and the GPU
# benchmarks' smoke tests) must be reported by CTest as Skipped, with its reason, and none counted as
# passed (issue 18: "100% tests passed" where nothing ran). .ci/run calls this after the README's
# test command.
#
#   bash .ci/check-skips.sh BUILD_DIR              runs `ctest --test-dir BUILD_DIR -L gpu` (each
#                                                  program exits at once without a GPU) and checks
#                                                  its output
#   bash .ci/check-skips.sh BUILD_DIR CTEST_LOG    checks a saved ctest output instead (e.g. a CI
#                                                  log), reasons included where BUILD_DIR's
#                                                  Testing/Temporary/LastTest.log holds them
#
# Checked: every test that `ctest -N -L gpu` lists is shown as "***Skipped" and listed "(Skipped)"
# under "The following tests did not run", none as "Passed", and (from LastTest.log) each one's
# output says why: the "Skipped: needs a CUDA GPU: ..." line of tests/support/gpu_main.cpp and
# bench/support/gpu_timer.hpp, or else a line that names the GPU (examples/c_api_min_plus.c's "no
# usable CUDA GPU here (...)"). Where a GPU is visible (nvidia-smi lists one), the GPU tests run for
# real, so there is nothing to check: it says so and succeeds.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 BUILD_DIR [CTEST_LOG]" >&2
    exit 2
fi
build=$1
log=${2:-}

fail() {
    echo "check-skips: FAILED: $*" >&2
    exit 1
}

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "check-skips: a GPU is visible here (nvidia-smi -L); the GPU tests run for real, nothing to check"
    exit 0
fi

scratch=$(mktemp -d)
last=$build/Testing/Temporary/LastTest.log
# Even `ctest -N` rewrites LastTest.log: the README command's record is kept aside and put back at
# the end, and is the one read for the reasons where a saved output is checked.
[[ -f $last ]] && cp "$last" "$scratch/LastTest.log.before"
restore() {
    [[ -f $scratch/LastTest.log.before ]] && cp "$scratch/LastTest.log.before" "$last"
    rm -rf "$scratch"
}
trap restore EXIT

# The gpu-labelled tests, by name ("  Test #12: gemm_gpu_test").
mapfile -t gpu_tests < <(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\) *$/\1/p')
[[ ${#gpu_tests[@]} -gt 0 ]] || fail "ctest --test-dir $build -N -L gpu lists no test: is $build a configured build?"
if [[ -z $log ]]; then
    log=$scratch/ctest.log
    echo "check-skips: ctest --test-dir $build -L gpu (${#gpu_tests[@]} tests, each should skip at once)"
    # Its exit status is not used: what it printed is checked below.
    ctest --test-dir "$build" -L gpu --output-on-failure >"$log" 2>&1 || true
    cat "$log"
    [[ -f $last ]] && cp "$last" "$scratch/LastTest.log.checked"
else
    [[ -f $scratch/LastTest.log.before ]] && cp "$scratch/LastTest.log.before" "$scratch/LastTest.log.checked"
fi
[[ -r $log ]] || fail "cannot read the ctest output $log"

# The summary's list of tests that did not run ("	  12 - gemm_gpu_test (Skipped)").
sed -n '/^The following tests did not run:/,/^$/p' "$log" >"$scratch/not-run"
grep -Eq '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" ||
    fail "no ctest summary line ('N% tests passed, ...') in $log"

problems=0
for name in "${gpu_tests[@]}"; do
    pattern=$(printf '%s' "$name" | sed 's/[][\.*^$/]/\\&/g')
    if grep -Eq "Test +#[0-9]+: ${pattern} \.*[ *]*Passed" "$log"; then
        echo "check-skips: $name is counted as passed; without a GPU it must be reported as Skipped" >&2
        problems=$((problems + 1))
    elif ! grep -Eq "Test +#[0-9]+: ${pattern} \.*\*\*\*Skipped" "$log"; then
        echo "check-skips: $name is not reported as '***Skipped' in $log" >&2
        problems=$((problems + 1))
    elif ! grep -Eq "^[[:space:]]*[0-9]+ - ${pattern} \(Skipped\)$" "$scratch/not-run"; then
        echo "check-skips: $name is missing from the summary's 'The following tests did not run' list" >&2
        problems=$((problems + 1))
    fi
done
[[ $problems -eq 0 ]] || fail "$problems of ${#gpu_tests[@]} gpu-labelled tests not reported as Skipped"

# Why each one skipped: the "Skipped: ..." line of its output in LastTest.log, which records every
# test's output (and calls a skipped test "Test Passed.", so it cannot replace the console's summary).
record=$scratch/LastTest.log.checked
if [[ -r $record ]]; then
    missing=0
    for name in "${gpu_tests[@]}"; do
        reason=$(awk -v name="$name" '
            $0 ~ "^[0-9]+/[0-9]+ Testing: " { inside = ($3 == name); output = 0; next }
            inside && /^Output:$/ { output = 1; next }
            output && /^<end of output>$/ { if (gpu != "") print gpu; exit }
            output && /^Skipped: / { sub(/^Skipped: /, ""); print; exit }
            output && gpu == "" && /GPU/ { gpu = $0 }' "$record")
        if [[ -z $reason ]]; then
            echo "check-skips: $name skipped without saying why: no 'Skipped: <reason>' line, nor one that" \
                 "names the GPU, in its output (LastTest.log)" >&2
            missing=$((missing + 1))
        else
            printf 'check-skips: %-28s Skipped: %s\n' "$name" "$reason"
        fi
    done
    [[ $missing -eq 0 ]] || fail "$missing gpu-labelled tests skipped without saying why"
else
    echo "check-skips: no $last: the reasons are not checked" >&2
fi
echo "check-skips: all ${#gpu_tests[@]} gpu-labelled tests reported by ctest as Skipped, none as passed"
