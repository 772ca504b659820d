"""tropical_gemm.einsum against torch-semiring-einsum's max-plus einsum, on the same contractions.

    python3 python/benchmarks/bench_einsum.py                         # spin glass L = 12, 16, 20; MIS 60, 100
    python3 python/benchmarks/bench_einsum.py --spin-glass 6 --mis 20 --device cpu   # a quick look

The networks are those of examples/spin_glass.py (in MaxPlus: the maximum of sum J s_i s_j, minus the
ground-state energy) and examples/max_independent_set.py. torch-semiring-einsum evaluates one
equation by looping over blocks of all its indices, so a whole network is out of its reach: both
libraries follow the same path, one pairwise contraction after another, from tropical_gemm's plan
(opt_einsum's, --optimize). Its max-plus einsum is log_viterbi_einsum_forward (max-plus, with the
argmax); tropical_gemm is timed without gradients (forward; on CUDA also with cuda_graph=True, the
steps replayed from a CUDA graph captured by the first call) and with them (forward and the
backward pass that reads the configuration). Times are the median of --repeat runs after one warm-up (which
also compiles tropical_gemm's kernels); peak memory is torch.cuda.max_memory_allocated over one run,
beyond what the network's inputs hold (CUDA only).

torch-semiring-einsum is optional (pip install torch-semiring-einsum; on a GPU machine without a
registry, install its wheel): without it the script says so and times tropical_gemm alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import string
import sys
import time

import numpy as np
import opt_einsum
import torch

import tropical_gemm as tg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from max_independent_set import random_regular_graph  # noqa: E402
from spin_glass import SPIN, lattice_bonds  # noqa: E402

try:
    import torch_semiring_einsum as tse
except ImportError:
    tse = None


def spin_glass_network(size: int, seed: int, device, dtype):
    rng = np.random.default_rng(seed)
    bonds = lattice_bonds(size)
    couplings = rng.choice([-1.0, 1.0], size=len(bonds))
    pair = np.outer(SPIN, SPIN)
    sites = [torch.zeros(2, dtype=dtype, device=device) for _ in range(size * size)]
    tensors = sites + [torch.tensor(j * pair, dtype=dtype, device=device) for j in couplings]
    labels = [[i] for i in range(size * size)] + [list(b) for b in bonds]
    return tensors, labels


def mis_network(vertices: int, seed: int, device, dtype):
    edges = random_regular_graph(3, vertices, np.random.default_rng(seed))
    weight = torch.tensor([0.0, 1.0], dtype=dtype, device=device)
    forbid = torch.tensor([[0.0, 0.0], [0.0, -float("inf")]], dtype=dtype, device=device)
    tensors = [weight.clone() for _ in range(vertices)] + [forbid.clone() for _ in edges]
    labels = [[v] for v in range(vertices)] + [list(e) for e in edges]
    return tensors, labels


def equation_of(labels) -> str:
    """The network's equation, one character per index (opt_einsum's symbols), to a scalar."""
    return ",".join("".join(opt_einsum.get_symbol(l) for l in term) for term in labels) + "->"


def run_semiring_einsum(tensors, plan):
    """The plan's pairwise steps, each by torch-semiring-einsum's max-plus einsum."""
    live = [(t, list(l)) for t, l in zip(tensors, plan.inputs)]
    for step in plan.steps:
        picked = [live[p] for p in step.positions]
        live = [x for i, x in enumerate(live) if i not in step.positions]
        out = list(step.batch + step.left + step.right)
        names = {l: string.ascii_letters[n] for n, l in enumerate(dict.fromkeys(sum((p[1] for p in picked), [])))}
        spec = ",".join("".join(names[l] for l in p[1]) for p in picked) + "->" + "".join(names[l] for l in out)
        value, _ = tse.log_viterbi_einsum_forward(tse.compile_equation(spec), *(p[0] for p in picked))
        live.append((value, out))
    return live[0][0]


def measure(fn, device, repeat: int):
    """(median seconds, peak bytes beyond the memory in use before, the last result)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    result = fn()  # warm-up: kernels compiled, caches filled
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        sync()
        times.append(time.perf_counter() - start)
    peak = None
    if device.type == "cuda":
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        sync()
        peak = torch.cuda.max_memory_allocated(device) - base
    return statistics.median(times), peak, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spin-glass", type=int, nargs="*", default=[12, 16, 20], metavar="L")
    parser.add_argument("--mis", type=int, nargs="*", default=[60, 100], metavar="VERTICES")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--optimize", default="greedy", help="the planner both follow (default greedy)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"# tropical_gemm.einsum vs torch-semiring-einsum, max-plus, {args.dtype} on {name}, "
          f"path: {args.optimize}, median of {args.repeat}")
    if tse is None:
        print("# torch-semiring-einsum is not installed (pip install torch-semiring-einsum): tropical_gemm alone")
    print("| network | result | tropical_gemm fwd | fwd, cuda_graph=True | fwd+bwd | peak MiB | semiring-einsum fwd "
          "| peak MiB | speed-up (fwd) | speed-up (graph) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = [(f"spin glass L={n}", spin_glass_network, n) for n in args.spin_glass]
    cases += [(f"MIS n={n}", mis_network, n) for n in args.mis]
    mib = lambda b: "n/a" if b is None else f"{b / 2**20:.1f}"  # noqa: E731
    for title, build, n in cases:
        tensors, labels = build(n, args.seed, device, dtype)
        equation = equation_of(labels)
        shapes = [tuple(t.shape) for t in tensors]
        plan = tg.einsum_path(equation, *shapes, optimize=args.optimize)

        def forward():
            with torch.no_grad():
                return tg.einsum(equation, *tensors, optimize=args.optimize)

        def forward_backward():
            leaves = [t.detach().requires_grad_() for t in tensors]
            value = tg.einsum(equation, *leaves, optimize=args.optimize)
            value.backward()
            return value

        def forward_graph():
            with torch.no_grad():
                return tg.einsum(equation, *tensors, optimize=args.optimize, cuda_graph=True)

        t_fwd, peak_fwd, value = measure(forward, device, args.repeat)
        t_graph = None
        if device.type == "cuda":
            t_graph, _, replayed = measure(forward_graph, device, args.repeat)
            assert replayed.item() == value.item(), (replayed.item(), value.item())
        t_bwd, _, _ = measure(forward_backward, device, args.repeat)
        graph = "-" if t_graph is None else f"{t_graph * 1e3:.2f} ms"
        row = f"| {title} | {value.item():g} | {t_fwd * 1e3:.2f} ms | {graph} | {t_bwd * 1e3:.2f} ms | {mib(peak_fwd)} |"
        if tse is not None:
            try:
                t_tse, peak_tse, other = measure(lambda: run_semiring_einsum(tensors, plan), device, args.repeat)
                agree = "" if other.item() == value.item() else f" (gives {other.item():g}!)"
                by_graph = "-" if t_graph is None else f"{t_tse / t_graph:.1f}x"
                row += f" {t_tse * 1e3:.2f} ms{agree} | {mib(peak_tse)} | {t_tse / t_fwd:.1f}x | {by_graph} |"
            except RuntimeError as e:  # out of memory, most likely
                row += f" failed: {str(e).splitlines()[0][:60]} | | | |"
        else:
            row += " - | - | - | - |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
