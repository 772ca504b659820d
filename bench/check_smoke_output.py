#!/usr/bin/env python3
"""Runs a benchmark program for a smoke test and checks what it reports, not only its exit status.

    python3 bench/check_smoke_output.py [--skip-code 77] --row 'REGEX=counter,counter' ... \
        -- PROGRAM --benchmark_filter=... [other arguments]

First the program lists the benchmarks its arguments select (--benchmark_list_tests, which needs
no GPU): there must be some, and each --row's REGEX must match one of them, so that a renamed row or
a filter that no longer selects anything fails here instead of passing with nothing run.

Then it runs them, writing JSON to a file of its own (--benchmark_out), and this checks, for every
row: no error_occurred (a benchmark that called SkipWithError: no GPU, a probe that failed) nor
skipped; iterations above zero; real and CPU times finite and above zero; every counter finite.
Each --row's REGEX (matched from the start of a row's name) must match at least one row, and
those rows must carry each counter named after its '=', finite and above zero. Every listed
benchmark must have produced a row.

A program that exits with --skip-code (the GPU suites, where no GPU is usable: bench/support/
gpu_timer.hpp's run_or_skip) must have said why on a "Skipped: <reason>" line; the checks of the
list above still apply, the line is passed on, and this exits with the same code, which CTest
reports as a skipped test. Any other non-zero exit status fails.

Exits 0 when every check passes, 1 with one line per failed check otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import re
import subprocess
import sys
import tempfile


def parse_rows(specs: list[str]) -> list[tuple[re.Pattern[str], list[str]]]:
    rows = []
    for spec in specs:
        pattern, _, counters = spec.partition("=")
        rows.append((re.compile(pattern), [c for c in counters.split(",") if c]))
    return rows


def finite_positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def listed_benchmarks(program: list[str]) -> list[str]:
    listing = subprocess.run(program + ["--benchmark_list_tests=true"], capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        sys.exit(f"check-smoke: listing the benchmarks failed (exit {listing.returncode}):\n{listing.stderr}")
    return [line.strip() for line in listing.stdout.splitlines() if line.strip()]


def check_rows(report: dict, rows: list[tuple[re.Pattern[str], list[str]]], listed: list[str]) -> list[str]:
    problems = []
    benchmarks = report.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        return ["the JSON output has no benchmark rows"]
    names = []
    for row in benchmarks:
        name = row.get("name", "?")
        names.append(name)
        if row.get("error_occurred"):
            problems.append(f"{name}: error_occurred: {row.get('error_message', '(no message)')}")
            continue
        if row.get("skipped"):
            problems.append(f"{name}: skipped: {row.get('skip_message', '(no message)')}")
            continue
        if not finite_positive(row.get("iterations")):
            problems.append(f"{name}: iterations {row.get('iterations')!r}, expected a count above zero")
        for time in ("real_time", "cpu_time"):
            if not finite_positive(row.get(time)):
                problems.append(f"{name}: {time} {row.get(time)!r}, expected finite and above zero")
    # Every numeric field that is not Google Benchmark's own is a counter: finite, whatever its sign.
    own = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
           "iterations", "real_time", "cpu_time"}
    for row in benchmarks:
        for key, value in row.items():
            if key not in own and isinstance(value, float) and not math.isfinite(value):
                problems.append(f"{row.get('name', '?')}: counter {key} is {value}")
    for pattern, counters in rows:
        matching = [row for row in benchmarks if pattern.match(row.get("name", ""))]
        if not matching:
            problems.append(f"no row matches {pattern.pattern!r} (rows: {', '.join(names)})")
        for row in matching:
            for counter in counters:
                if counter not in row:
                    problems.append(f"{row['name']}: no counter {counter}")
                elif not finite_positive(row[counter]):
                    problems.append(f"{row['name']}: counter {counter} is {row[counter]!r}, expected above zero")
    for name in listed:
        if name not in names:
            problems.append(f"{name} was listed but produced no row")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-code", type=int, default=None, help="the exit status that means skipped")
    parser.add_argument("--row", action="append", default=[], help="REGEX=counter,counter: rows and their counters")
    parser.add_argument("program", nargs="+", help="the benchmark program and its arguments (after --)")
    args = parser.parse_args()
    rows = parse_rows(args.row)

    listed = listed_benchmarks(args.program)
    problems = [] if listed else ["the arguments select no benchmark (--benchmark_list_tests lists none)"]
    for pattern, _ in rows:
        if not any(pattern.match(name) for name in listed):
            problems.append(f"no listed benchmark matches {pattern.pattern!r} (listed: {', '.join(listed)})")

    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch) / "report.json"
        run = subprocess.run(args.program + [f"--benchmark_out={out}", "--benchmark_out_format=json"],
                             stderr=subprocess.PIPE, text=True, check=False)
        sys.stderr.write(run.stderr)
        if args.skip_code is not None and run.returncode == args.skip_code:
            reasons = [line for line in run.stderr.splitlines() if re.match(r"Skipped: \S", line)]
            if not reasons:
                problems.append(f"exit {run.returncode} (skipped) without a 'Skipped: <reason>' line on stderr")
            if problems:
                print("\n".join(f"check-smoke: {p}" for p in problems), file=sys.stderr)
                return 1
            print(f"check-smoke: {len(listed)} benchmarks listed; the run skipped: {reasons[0]}")
            return args.skip_code
        if run.returncode != 0:
            problems.append(f"the program exited with status {run.returncode}")
        elif not out.exists():
            problems.append(f"the program wrote no JSON to {out}")
        else:
            try:
                problems += check_rows(json.loads(out.read_text()), rows, listed)
            except json.JSONDecodeError as e:
                problems.append(f"its JSON output does not parse: {e}")
    if problems:
        print("\n".join(f"check-smoke: {p}" for p in problems), file=sys.stderr)
        return 1
    print(f"check-smoke: {len(listed)} benchmarks ran, every row and counter checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
