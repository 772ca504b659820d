#!/usr/bin/env python3
"""Times the same benchmarks in two builds, alternately, and prints how each row moved.

A change that must keep speed (a redesign, a refactor) is measured against the build it replaces in
one session on one GPU: the suites of the two builds run in turns (old, new, old, new, ...), so that
drift of the machine lands on both, and each row's time is the median of its per-round medians.

    python3 bench/compare_builds.py --old build-base --new build-gpu --filter REGEX [--rounds 2]
        [--suites throughput,startup,workloads] [--json-dir DIR]

Prints a markdown table (row, old, new, new / old) and the rows that moved by more than --tolerance.
"""
import argparse
import os
import statistics
import sys

from run_benchmarks import commit, gpu_description, run_suite, short_name

# What each suite's rows are compared by: the median kernel time, or the start-up case's time.
SUITES = {"throughput": "median_us", "startup": "real_time", "workloads": "median_us"}


def times(build, suite, filter_regex, json_path):
    data = run_suite(os.path.join(build, "bench", f"{suite}_bench"), filter_regex, json_path)
    out = {}
    for b in data.get("benchmarks", []):
        # Rows without the suite's own counter (the workloads' chain/ and host/ rows) are timed by
        # Google Benchmark's manual time, real_time.
        value = b.get(SUITES[suite], b.get("real_time"))
        if not b.get("error_occurred") and value is not None:
            out[short_name(b["name"])] = float(value)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the build folder of the code being replaced")
    parser.add_argument("--new", required=True, help="the build folder of the change")
    parser.add_argument("--filter", default="", help="regex for --benchmark_filter")
    parser.add_argument("--suites", default="throughput", help="throughput, startup and/or workloads, comma-separated")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each build, taken in turns")
    parser.add_argument("--tolerance", type=float, default=0.02, help="the move beyond which a row is named")
    parser.add_argument("--json-dir", default=".", help="where the raw JSON goes")
    args = parser.parse_args()

    print(f"- GPU: {gpu_description()}\n- commit: {commit()}\n"
          f"- command: `python3 bench/compare_builds.py {' '.join(sys.argv[1:])}`\n")
    moved = []
    for suite in args.suites.split(","):
        runs = {"old": [], "new": []}
        for r in range(args.rounds):
            for side in ("old", "new"):
                json_path = os.path.join(args.json_dir, f"{suite}-{side}-{r}.json")
                runs[side].append(times(getattr(args, side), suite, args.filter, json_path))
        unit = "µs" if suite == "throughput" else "ms"
        print(f"| {suite} | old ({unit}) | new ({unit}) | new / old |\n|---|---|---|---|")
        for name in runs["old"][0]:
            old = [r[name] for r in runs["old"] if name in r]
            new = [r[name] for r in runs["new"] if name in r]
            if not old or not new:
                continue
            o, n = statistics.median(old), statistics.median(new)
            print(f"| {name} | {o:.3f} | {n:.3f} | {n / o:.3f} |")
            if abs(n / o - 1) > args.tolerance:
                moved.append(f"{name}: {n / o:.3f} (old runs {old}, new runs {new})")
        print()
        if not runs["old"][0]:
            sys.exit(f"compare_builds: the {suite} suite gave no rows for --filter {args.filter!r}: nothing compared")
    print(f"rows that moved by more than {100 * args.tolerance:.0f}%: {len(moved)}")
    for line in moved:
        print(" ", line)


if __name__ == "__main__":
    main()
