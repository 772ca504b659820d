"""tropical_gemm.distributed on several GPUs against one: prints a markdown table.

1. A K-split float32 MaxPlus product M x K x N, K grown until one GPU takes >= --min-seconds
   (200 ms) for it: that one GPU's time for the whole product, then every rank's slab at once
   (one all_reduce of C). Target: a speedup >= 1.8 on 2 GPUs.
2. All-pairs shortest paths (examples/distributed_apsp.py, the 2-D grid split): the time per min-plus
   squaring at a size one GPU holds (--apsp-nodes), on one GPU and on all, and at the largest size
   all the GPUs hold together (from their free memory; a few squarings only).

On a machine with 2 GPUs (NCCL):

    torchrun --standalone --nproc_per_node 2 python/benchmarks/distributed_bench.py

A smoke test on CPUs (gloo, small sizes; the numbers mean nothing):

    torchrun --standalone --nproc_per_node 2 python/benchmarks/distributed_bench.py --backend gloo --quick

Times are medians of --repeats runs, each the slowest rank's (CUDA synchronised on every rank).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import time

import torch
import torch.distributed as dist

import tropical_gemm as tg
import tropical_gemm.distributed as td
from tropical_gemm.distributed._group import default_grid, shard_range

_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "distributed_apsp.py")


def load_example():
    spec = importlib.util.spec_from_file_location("distributed_apsp", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synchronize(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device, repeats: int, group_wide: bool = True) -> float:
    """Median seconds of fn() over `repeats` runs after one warm-up; with group_wide, each run is the
    slowest rank's (every rank must call it)."""
    fn()
    samples = []
    for _ in range(repeats):
        if group_wide:
            dist.barrier()
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
        if group_wide:
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        samples.append(elapsed.item())
    return statistics.median(samples)


def free_bytes(device) -> int:
    if device.type == "cuda":
        torch.cuda.empty_cache()  # what the caching allocator keeps counts as used
        return torch.cuda.mem_get_info(device)[0]
    return 8 << 30  # CPU smoke test: a nominal 8 GiB


def on_rank0(device, fn):
    """fn() on rank 0 alone (one device); its result sent to every rank."""
    out = torch.zeros(1, dtype=torch.float64, device=device)
    if dist.get_rank() == 0:
        out[0] = fn()
    dist.broadcast(out, src=0)
    return out.item()


def k_split_case(args, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    m = n = args.mn
    gen = torch.Generator(device=device).manual_seed(rank)

    def whole_time(k: int) -> float:
        a = torch.rand(m, k, device=device, generator=gen)
        b = torch.rand(k, n, device=device, generator=gen)
        return timed(lambda: tg.matmul(a, b, "maxplus"), device, args.repeats, group_wide=False)

    # Grow K until one GPU needs min_seconds, A and B within 40% of its free memory; rank 0 decides.
    k = args.k_start
    while True:
        t1 = on_rank0(device, lambda: whole_time(k))
        next_fits = (m + n) * 2 * k * 4 <= 0.4 * free_bytes(device) if dist.get_rank() == 0 else False
        grow = on_rank0(device, lambda: float(t1 < args.min_seconds and next_fits))
        if not grow:
            break
        k *= 2
    start, stop = shard_range(k, world, rank)
    a = torch.rand(m, stop - start, device=device, generator=gen)
    b = torch.rand(stop - start, n, device=device, generator=gen)
    tp = timed(lambda: td.matmul(a, b, "maxplus", split="k"), device, args.repeats)
    return f"K-split f32 MaxPlus {m} x {k} x {n}", t1, tp


def after_first(times: list[float]) -> float:
    """The median squaring, leaving out the first (it may load or compile kernels) where there are more."""
    return statistics.median(times[1:] if len(times) > 1 else times)


def apsp_cases(args, device, example):
    world = dist.get_world_size()
    nodes = args.apsp_nodes

    def one_gpu() -> float:
        w = example.weight_block(range(nodes), range(nodes), nodes, args.density, 0, device, torch.float32)
        return timed(lambda: tg.matmul(w, w, "minplus"), device, args.repeats, group_wide=False)

    t1 = on_rank0(device, one_gpu)
    _, _, times = example.distributed_apsp(nodes, args.density, 0, "grid", device, torch.float32,
                                           args.panel_width, max_squarings=args.repeats + 1)
    rows = [(f"APSP min-plus squaring, {nodes} nodes (grid {default_grid(world)})", t1, after_first(times))]
    # The largest graph: per rank D's block, the new block, one product's block, two panels of A and B
    # (README, "Memory per GPU"), within 80% of the smallest free memory.
    free = torch.tensor([free_bytes(device)], dtype=torch.int64, device=device)
    dist.all_reduce(free, op=dist.ReduceOp.MIN)
    pr, pc = default_grid(world)
    budget = 0.8 * free.item() / 4
    largest = 1024
    while True:
        n = largest + 1024
        panels = 2 * args.panel_width * (math.ceil(n / pr) + math.ceil(n / pc))
        if 3 * math.ceil(n / pr) * math.ceil(n / pc) + panels > budget or n > args.apsp_max_nodes:
            break
        largest = n
    _, _, times = example.distributed_apsp(largest, args.density, 0, "grid", device, torch.float32,
                                           args.panel_width, max_squarings=args.largest_squarings)
    rows.append((f"APSP min-plus squaring, {largest} nodes (largest for {world} devices)", None, after_first(times)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="nccl" if torch.cuda.is_available() else "gloo")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of the script")
    parser.add_argument("--mn", type=int, default=4096, help="M = N of the K-split product")
    parser.add_argument("--k-start", type=int, default=16384)
    parser.add_argument("--min-seconds", type=float, default=0.2, help="one GPU's time for the K-split product")
    parser.add_argument("--apsp-nodes", type=int, default=16384, help="a graph one GPU holds")
    parser.add_argument("--apsp-max-nodes", type=int, default=1 << 20)
    parser.add_argument("--density", type=float, default=0.001)
    parser.add_argument("--panel-width", type=int, default=4096)
    parser.add_argument("--largest-squarings", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.mn, args.k_start, args.min_seconds = 64, 256, 0.0
        args.apsp_nodes, args.apsp_max_nodes, args.panel_width, args.largest_squarings = 128, 2048, 64, 1

    dist.init_process_group(args.backend)
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    world = dist.get_world_size()
    rows = [k_split_case(args, device), *apsp_cases(args, device, load_example())]
    if dist.get_rank() == 0:
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
        print(f"\n{world} x {name}, backend {args.backend}, torch {torch.__version__}\n")
        print(f"| case | 1 device | {world} devices | speedup |")
        print("|---|---|---|---|")
        for label, t1, tp in rows:
            one = f"{t1 * 1e3:.1f} ms" if t1 is not None else "does not fit"
            speedup = f"{t1 / tp:.2f}x" if t1 is not None else "-"
            print(f"| {label} | {one} | {tp * 1e3:.1f} ms | {speedup} |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
