"""Host time per pairwise step of tropical_gemm.einsum, on CPU tensors (where the kernels' own time is
small for these networks, so that what is left is the per-step overhead that bench_einsum.py's GPU
rows are made of).

    python3 python/benchmarks/einsum_step_cost.py                      # spin glass L = 12, 20; MIS 60, 100
    python3 python/benchmarks/einsum_step_cost.py --spin-glass 8 --mis 20 --threads 1

For each network: the forward without gradients and the forward + backward, per call and per
pairwise step; and, as floors, one bare step (the C ABI call on 2 x 2 operands, through
_contract.run) and the plan and program lookup of one call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

import tropical_gemm as tg
from tropical_gemm import _einsum

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_einsum import equation_of, mis_network, spin_glass_network  # noqa: E402
from host_timing import per_call  # noqa: E402


def median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spin-glass", type=int, nargs="*", default=[12, 20], metavar="L")
    parser.add_argument("--mis", type=int, nargs="*", default=[60, 100], metavar="VERTICES")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (the host kernels use it)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dtype = torch.float32

    print(f"# CPU, {args.threads} thread(s), float32, greedy path; median of {args.repeat}")
    try:  # absent before the einsum drove the C ABI's contraction: run on an older build, for comparison
        from tropical_gemm import _contract

        a, b = torch.randn(2, 2), torch.randn(2, 2)
        bare = per_call(lambda: _contract.run(a, b, (0, 1), (1, 2), (0, 2), (2, 2), 0, 0, False), calls=5000)
        print(f"# one bare step (C ABI call, 2x2 operands): {bare:.2f} us")
    except ImportError:
        pass
    setup = getattr(_einsum, "_plan_and_program", getattr(_einsum, "_plan_for", None))
    print("| network | steps | fwd | fwd per step | fwd+bwd | fwd+bwd per step | plan lookup |")
    print("|---|---|---|---|---|---|---|")
    cases = [(f"spin glass L={n}", spin_glass_network, n) for n in args.spin_glass]
    cases += [(f"MIS n={n}", mis_network, n) for n in args.mis]
    for title, build, n in cases:
        tensors, labels = build(n, 0, torch.device("cpu"), dtype)
        equation = equation_of(labels)
        shapes = tuple(tuple(t.shape) for t in tensors)
        steps = len(tg.einsum_path(equation, *shapes, optimize="greedy").steps)

        def forward():
            with torch.no_grad():
                return tg.einsum(equation, *tensors, optimize="greedy")

        def forward_backward():
            leaves = [t.detach().requires_grad_() for t in tensors]
            tg.einsum(equation, *leaves, optimize="greedy").backward()

        fwd = median_time(forward, args.repeat)
        bwd = median_time(forward_backward, args.repeat)
        lookup = per_call(lambda: setup(equation, shapes, "greedy"), calls=200, loops=5)
        print(f"| {title} | {steps} | {fwd * 1e3:.2f} ms | {fwd / steps * 1e6:.1f} us | {bwd * 1e3:.2f} ms | "
              f"{bwd / steps * 1e6:.1f} us | {lookup:.0f} us |", flush=True)


if __name__ == "__main__":
    main()
