#!/usr/bin/env bash
# Every C, C++ and CUDA file that git tracks is formatted as .clang-format says (clang-format 14, as
# Debian ships it). Lists the files that are not, and how to fix them, and fails if there are any.
#   bash .ci/check-format.sh          check
#   bash .ci/check-format.sh --fix    format them in place
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cuh')
if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
    printf 'not formatted as .clang-format says:\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    printf 'run: bash .ci/check-format.sh --fix\n' >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted"
