"""Latency of the package as a user meets it (issue 14), next to the floors it cannot beat:

- one 64 x 64 x 64 float32 ``tropical_gemm.matmul`` followed by ``torch.cuda.synchronize()``,
  median per call (target: 15 µs), beside ``torch.mm`` + synchronize and a bare CuPy launch of a
  trivial kernel + synchronize (the floor of any Python launch; skipped where CuPy is not installed);
- a fresh process that has already imported torch and made its CUDA context, to its first finished
  product from a warm kernel cache, ``import tropical_gemm`` included (target: 5 ms), measured
  inside the process, median of several processes; split into the import and the first product.

    python3 python/benchmarks/call_latency.py [--calls N] [--processes P]

Prints a markdown table. Exits with status 77 (the project's "skipped") where PyTorch sees no CUDA
device. The cache of the fresh processes is a temporary folder filled by a first process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

from host_timing import per_call

SKIPPED = 77

# Run in each fresh process: torch imported and its context made before the clock starts.
FRESH_PROCESS = textwrap.dedent("""
    import json, time, torch
    a = torch.rand(64, 64, device="cuda")
    b = torch.rand(64, 64, device="cuda")
    torch.cuda.synchronize()
    start = time.perf_counter()
    import tropical_gemm
    imported = time.perf_counter()
    tropical_gemm.matmul(a, b)
    torch.cuda.synchronize()
    done = time.perf_counter()
    print(json.dumps({"import_s": imported - start, "first_product_s": done - imported, "total_s": done - start}))
""")


def cupy_floor(calls: int):
    """A trivial kernel launched by CuPy and waited for, per call in µs; None without CuPy."""
    try:
        import cupy
    except ImportError:
        return None
    kernel = cupy.RawKernel(r'extern "C" __global__ void touch(int* x) { x[0] = 1; }', "touch")
    x = cupy.zeros(1, dtype=cupy.int32)
    stream = cupy.cuda.get_current_stream()

    def launch():
        kernel((1,), (1,), (x,))
        stream.synchronize()

    return per_call(launch, calls)


def fresh_processes(count: int) -> list[dict]:
    """The first product of `count` fresh processes over a cache warmed by one process before them."""
    with tempfile.TemporaryDirectory(prefix="tropical-latency-") as cache:
        env = dict(os.environ, TROPICAL_GEMM_CACHE_DIR=cache)
        runs = []
        for i in range(count + 1):
            r = subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0:
                raise SystemExit(f"the fresh process failed:\n{r.stdout}{r.stderr}")
            if i:  # the first one filled the cache
                runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
        return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed loop (7 loops)")
    parser.add_argument("--processes", type=int, default=7, help="fresh processes timed")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("call_latency: no CUDA device (torch.cuda.is_available() is False): nothing to measure", file=sys.stderr)
        sys.exit(SKIPPED)
    import tropical_gemm

    a = torch.rand(64, 64, device="cuda")
    b = torch.rand(64, 64, device="cuda")
    sync = torch.cuda.synchronize

    def tropical():
        tropical_gemm.matmul(a, b)
        sync()

    def mm():
        torch.mm(a, b)
        sync()

    rows = [("tropical_gemm.matmul 64³ f32 + torch.cuda.synchronize()", f"{per_call(tropical, args.calls):.1f} µs",
             "≤ 15 µs"),
            ("torch.mm 64³ f32 + torch.cuda.synchronize() (PyTorch's own op)", f"{per_call(mm, args.calls):.1f} µs",
             "")]
    floor = cupy_floor(args.calls)
    rows.append(("CuPy: a trivial kernel + synchronize (the floor of a Python launch)",
                 "CuPy not importable: skipped" if floor is None else f"{floor:.1f} µs", ""))
    runs = fresh_processes(args.processes)
    median_ms = lambda key: statistics.median(r[key] for r in runs) * 1e3  # noqa: E731
    rows += [(f"fresh process with torch and a context: import tropical_gemm + first 64³ product, warm cache "
              f"(median of {len(runs)})", f"{median_ms('total_s'):.2f} ms", "≤ 5 ms"),
             ("  of which import tropical_gemm", f"{median_ms('import_s'):.2f} ms", ""),
             ("  of which the first product (loads its kernel from the cache) + synchronize",
              f"{median_ms('first_product_s'):.2f} ms", "")]

    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}\n")
    print("| measurement | time | target |\n|---|---|---|")
    for name, value, target in rows:
        print(f"| {name} | {value} | {target} |")


if __name__ == "__main__":
    main()
