#!/usr/bin/env python3
"""Runs the benchmark suite and writes a dated markdown report in the format of bench/RESULTS.md.

    python3 bench/run_benchmarks.py --build build [--filter REGEX] [--out report.md] [--json-dir DIR]

It runs build/bench/throughput_bench, build/bench/startup_bench and build/bench/workloads_bench
with Google Benchmark's JSON output, then prints one table per suite with the GPU, driver, commit,
date and the command line. `--suites workloads` runs only the workloads of issue 14 (batched and
single products with argmax, the Viterbi chain eager and from a CUDA graph, tiny batched products
as bandwidth, the host cost of one call), with the issue's targets beside them.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys


SKIP_EXIT_CODE = 77  # TROPICAL_SKIP_EXIT_CODE of the CMake project: a suite that found no usable GPU


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def gpu_description():
    try:
        out = run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm", "--format=csv,noheader"])
        return out.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        return "unknown GPU (nvidia-smi not available)"


def commit():
    try:
        sha = run(["git", "rev-parse", "--short=12", "HEAD"]).strip()
        dirty = run(["git", "status", "--porcelain", "--untracked-files=no"]).strip()
        return sha + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_suite(binary, filter_regex, json_path):
    cmd = [binary, f"--benchmark_out={json_path}", "--benchmark_out_format=json"]
    if filter_regex:
        cmd.append(f"--benchmark_filter={filter_regex}")
    print("running:", " ".join(cmd), file=sys.stderr, flush=True)
    if os.path.exists(json_path):
        os.remove(json_path)
    result = subprocess.run(cmd, check=False, stdout=sys.stderr)
    if result.returncode == 0 and (not os.path.exists(json_path) or os.path.getsize(json_path) == 0):
        return {"benchmarks": []}  # the filter matched nothing
    if result.returncode == SKIP_EXIT_CODE:
        return {"benchmarks": [{"name": os.path.basename(binary), "error_occurred": True,
                                "error_message": "skipped: no usable CUDA GPU (its log says why)"}]}
    try:
        with open(json_path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        # A suite that died leaves no (or half a) JSON file: say so in the report, run the rest.
        return {"benchmarks": [{"name": f"{os.path.basename(binary)} (exit code {result.returncode})",
                                "error_occurred": True, "error_message": "the suite crashed; see its log"}]}


def short_name(name):
    return name.split("/iterations:")[0].replace("/manual_time", "")


def fmt(value, digits=2):
    return "" if value is None else f"{value:.{digits}f}"


def throughput_table(data):
    rows = ["| benchmark | median time | Tops | of limit | GB/s | of HBM | one launch |",
            "|---|---|---|---|---|---|---|"]
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            rows.append(f"| {short_name(b['name'])} | error: {b.get('error_message', '').splitlines()[0][:80] if b.get('error_message') else ''} | | | | | |")
            continue
        median_us = b.get("median_us")
        time = f"{median_us / 1000:.3f} ms" if median_us and median_us >= 1000 else f"{fmt(median_us, 1)} µs"
        of_limit = b.get("of_limit")
        of_hbm = b.get("of_hbm")
        # OrAnd's rows count terms (one LOP3 is 32 of them), not operations.
        rate = fmt(b.get("Tops")) if "Tterms" not in b else f"{fmt(b['Tterms'])} T terms/s"
        rows.append(
            f"| {short_name(b['name'])} | {time} | {rate} | "
            f"{'' if of_limit is None else f'{100 * of_limit:.0f}%'} | {fmt(b.get('GBps'), 0)} | "
            f"{'' if of_hbm is None else f'{100 * of_hbm:.0f}%'} | "
            f"{'' if b.get('one_launch_us') is None else fmt(b['one_launch_us'], 1) + ' µs'} |"
        )
    return "\n".join(rows)


def startup_table(data):
    rows = ["| case | time (ms) | context (ms) | whole process (ms) | kernel (µs) | overhead (µs) | enqueue (µs) |",
            "|---|---|---|---|---|---|---|"]
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            rows.append(f"| {short_name(b['name'])} | error: {b.get('error_message', '').splitlines()[0][:80] if b.get('error_message') else ''} | | | | | |")
            continue
        scale = {"ms": 1, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b.get("time_unit", "ms")]
        rows.append(
            f"| {short_name(b['name'])} | {b['real_time'] * scale:.3f} | {fmt(b.get('context_ms'))} | "
            f"{fmt(b.get('process_ms'))} | {fmt(b.get('kernel_us'))} | {fmt(b.get('overhead_us'))} | {fmt(b.get('call_us'))} |"
        )
    return "\n".join(rows)


# The targets of issue 14, beside the rows they apply to.
WORKLOAD_TARGETS = {
    "chain/viterbi/f32/B64xS256": "graph ≤ 8 µs/step",
    "host/gemm_call/f32/maxplus/64/device_hint": "≤ 3 µs",
    "host/gemm_call/f32/maxplus/64/no_hint": "≤ 3 µs",
}


def workloads_table(data):
    rows = ["| benchmark | median | Tops | of limit | argmax / plain | GB/s | of HBM | eager µs/step | "
            "graph µs/step | kernel µs | walk back µs | host µs/call | target |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in data.get("benchmarks", []):
        name = short_name(b["name"])
        if b.get("error_occurred"):
            message = b.get("error_message", "").splitlines()[0][:80] if b.get("error_message") else ""
            rows.append(f"| {name} | error: {message} |" + " |" * 11)
            continue
        median_us = b.get("median_us")
        time = "" if median_us is None else (f"{median_us / 1000:.3f} ms" if median_us >= 1000 else f"{median_us:.1f} µs")
        of_limit, of_hbm = b.get("of_limit"), b.get("of_hbm")
        cells = [name, time, fmt(b.get("Tops")), "" if of_limit is None else f"{100 * of_limit:.0f}%",
                 fmt(b.get("argmax_over_plain")), fmt(b.get("GBps"), 0),
                 "" if of_hbm is None else f"{100 * of_hbm:.0f}%", fmt(b.get("eager_us_per_step")),
                 fmt(b.get("graph_us_per_step")), fmt(b.get("kernel_us")), fmt(b.get("walk_back_us")),
                 fmt(b.get("host_us_per_call")),
                 WORKLOAD_TARGETS.get(name, "")]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="the CMake build folder")
    parser.add_argument("--filter", default="", help="regex passed to --benchmark_filter of every suite run")
    parser.add_argument("--suites", default="throughput,startup,workloads",
                        help="which suites to run (comma-separated: throughput, startup, workloads)")
    parser.add_argument("--out", help="write the markdown here (default: stdout)")
    parser.add_argument("--json-dir", default=".", help="where the raw JSON goes")
    parser.add_argument("--by-group", action="store_true",
                        help="run the throughput suite one kernel group at a time, rewriting the report "
                             "after each, so that a run cut short still leaves its finished groups")
    args = parser.parse_args()

    today = datetime.date.today().isoformat()
    header = [
        f"### Run of {today}",
        "",
        f"- GPU: {gpu_description()}",
        f"- commit: {commit()}",
        f"- command: `python3 bench/run_benchmarks.py {' '.join(sys.argv[1:])}`",
        "",
    ]
    sections = []
    suites = args.suites.split(",")

    def write(extra):
        text = "\n".join(header + sections + extra)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        return text

    if "throughput" in suites:
        binary = os.path.join(args.build, "bench", "throughput_bench")
        json_path = os.path.join(args.json_dir, "throughput.json")
        if args.by_group:
            found = []
            for group in ("gemm/", "argmax/", "batched/", "backward_", "layouts/", "latency/"):
                regex = f"^{group}" + (f".*({args.filter})" if args.filter else "")
                found += run_suite(binary, regex, json_path).get("benchmarks", [])
                write(["#### Throughput", "", throughput_table({"benchmarks": found}), ""])
            data = {"benchmarks": found}
        else:
            data = run_suite(binary, args.filter, json_path)
        sections += ["#### Throughput", "", throughput_table(data), ""]
        write([])
    if "startup" in suites:
        data = run_suite(os.path.join(args.build, "bench", "startup_bench"), args.filter,
                         os.path.join(args.json_dir, "startup.json"))
        sections += ["#### Start-up (fresh processes; time excludes context creation)", "", startup_table(data), ""]
    if "workloads" in suites:
        data = run_suite(os.path.join(args.build, "bench", "workloads_bench"), args.filter,
                         os.path.join(args.json_dir, "workloads.json"))
        sections += ["#### Workloads (f32 MaxPlus; the chain is 512 dependent steps with argmax)", "",
                     workloads_table(data), ""]
    print(write([]))


if __name__ == "__main__":
    main()
