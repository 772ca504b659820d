"""All-pairs shortest paths by min-plus squaring, with the distance matrix split over every rank.

D starts as the edge weights (0 on the diagonal, +inf where there is no edge); after s squarings
D = D (x) D holds the shortest paths of at most 2^s edges, so ceil(log2(n - 1)) squarings (fewer
when D stops changing) give every shortest path. With the default 2-D split each rank holds one
block of D on a grid of ranks and never the whole matrix: the graph may be larger than one device.

    torchrun --nproc_per_node 2 examples/distributed_apsp.py --backend gloo --nodes 300 --check
    torchrun --nproc_per_node 2 examples/distributed_apsp.py --nodes 40000          # NCCL, 2 GPUs

The graph is random but reproducible: the weight of edge (i, j) is a hash of (i, j, seed), so each
rank makes its own block without ever holding the others. --check gathers D and compares it with
one process's result (SciPy's Floyd-Warshall where SciPy is installed, else min-plus squaring in one
process); use it on sizes that fit one device.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import torch
import torch.distributed as dist

import tropical_gemm as tg
import tropical_gemm.distributed as td
from tropical_gemm.distributed._group import default_grid, shard_range

_PRIME = 2147483647  # 2^31 - 1: the hash's arithmetic stays below 2^47, exact in int64


def edge_weights(rows: range, cols: range, n: int, density: float, seed: int, device, dtype) -> torch.Tensor:
    """The block rows x cols of the graph's weight matrix: integer weights 1..100 on a `density`
    fraction of the pairs, 0 on the diagonal, +inf elsewhere. A pure function of (i, j, seed)."""
    i = torch.arange(rows.start, rows.stop, device=device, dtype=torch.int64)[:, None]
    j = torch.arange(cols.start, cols.stop, device=device, dtype=torch.int64)[None, :]
    x = (i * n + j + seed * 7919) % _PRIME + 1
    for _ in range(3):  # multiplicative steps mixed by shifts: neighbours get unrelated values
        x = (x * 48271) % _PRIME
        x = x ^ (x >> 11)
    edge = (x % 10007) < density * 10007
    w = torch.where(edge, (1 + (x >> 8) % 100).to(dtype), torch.full_like(x, float("inf"), dtype=dtype))
    return torch.where(i == j, torch.zeros((), dtype=dtype, device=device), w)


def weight_block(rows: range, cols: range, n: int, density: float, seed: int, device, dtype,
                 chunk_elements: int = 1 << 26) -> torch.Tensor:
    """edge_weights a few rows at a time: its int64 temporaries stay small beside a block that fills
    most of a device."""
    block = torch.empty(len(rows), len(cols), dtype=dtype, device=device)
    step = max(1, chunk_elements // max(1, len(cols)))
    for start in range(0, len(rows), step):
        part = range(rows.start + start, min(rows.stop, rows.start + start + step))
        block[start:start + len(part)] = edge_weights(part, cols, n, density, seed, device, dtype)
    return block


def my_block(split: str, n: int, rank: int, world: int, grid) -> tuple[range, range]:
    """The rows and columns of D this rank holds: a block of the grid, a slab of rows ('m'), or all ('k')."""
    if split == "grid":
        rows, cols = grid
        p, q = divmod(rank, cols)
        return range(*shard_range(n, rows, p)), range(*shard_range(n, cols, q))
    if split == "m":
        return range(*shard_range(n, world, rank)), range(n)
    return range(n), range(n)


def square(d: torch.Tensor, split: str, grid, panel_width) -> torch.Tensor:
    """One distributed squaring D (x) D, D in this rank's layout."""
    if split == "grid":  # block (p, q) of D is both A's and B's block (p, q): the same row and column cuts
        return td.matmul(d, d, "minplus", split="grid", grid=grid, panel_width=panel_width)
    if split == "m":  # this rank's rows of D times all of D, gathered for the step
        return td.matmul(d, td.gather_result(d, "m"), "minplus", split="m")
    rank, world = dist.get_rank(), dist.get_world_size()
    start, stop = shard_range(d.shape[0], world, rank)  # D whole on every rank: this rank's slab of K
    return td.matmul(d[:, start:stop], d[start:stop], "minplus", split="k")


def synchronize(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def distributed_apsp(n: int, density: float, seed: int, split: str, device, dtype, panel_width=None,
                     max_squarings=None):
    """(this rank's block of the distances, its (rows, cols), seconds per squaring). max_squarings
    stops early (for timing a few squarings of a large graph)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    grid = default_grid(world)
    rows, cols = my_block(split, n, rank, world, grid)
    d = weight_block(rows, cols, n, density, seed, device, dtype)
    times = []
    squarings = max(1, math.ceil(math.log2(max(n - 1, 1))))
    for _ in range(min(squarings, max_squarings or squarings)):
        synchronize(device)
        start = time.perf_counter()
        new = square(d, split, grid, panel_width)
        synchronize(device)
        times.append(time.perf_counter() - start)
        changed = torch.tensor([float(not torch.equal(new, d))], device=device)
        dist.all_reduce(changed, op=dist.ReduceOp.MAX)  # stop together, when no rank's block changed
        d = new
        if not changed.item():
            break
    return d, (rows, cols), times


def single_process_apsp(w: torch.Tensor) -> torch.Tensor:
    """The same distances in one process: on a GPU by squaring there (SciPy's Floyd-Warshall is O(n^3)
    on one core: minutes at 8192 nodes); on the CPU by SciPy's Floyd-Warshall where installed, else
    by squaring."""
    if not w.is_cuda:
        try:
            from scipy.sparse.csgraph import shortest_path
        except ImportError:
            shortest_path = None
        if shortest_path is not None:
            dense = w.double().cpu().numpy()
            dense[dense == float("inf")] = 0  # SciPy's dense input: 0 is "no edge" off the diagonal
            return torch.from_numpy(shortest_path(dense, method="FW", directed=True)).to(w.dtype)
    d = w
    for _ in range(max(1, math.ceil(math.log2(max(w.shape[0] - 1, 1))))):
        d = tg.matmul(d, d, "minplus")
    return d


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="nccl" if torch.cuda.is_available() else "gloo")
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--density", type=float, default=0.01, help="fraction of the pairs that are edges")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=("grid", "k", "m"), default="grid")
    parser.add_argument("--panel-width", type=int, default=None, help="columns of A's panels at a time (grid)")
    parser.add_argument("--check", action="store_true", help="compare with one process (sizes that fit one device)")
    args = parser.parse_args()

    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    d, (rows, cols), times = distributed_apsp(args.nodes, args.density, args.seed, args.split, device,
                                              torch.float32, args.panel_width)
    if rank == 0:
        print(f"{args.nodes} nodes on {world} ranks ({args.backend}, split {args.split}): {len(times)} squarings, "
              f"{1e3 * sum(times) / len(times):.1f} ms each on average")
    if args.check:
        whole = td.gather_result(d, args.split, grid=default_grid(world))
        if rank == 0:
            w = weight_block(range(args.nodes), range(args.nodes), args.nodes, args.density, args.seed, device,
                             torch.float32)
            want = single_process_apsp(w).to(device)
            if not torch.equal(whole, want):
                bad = (whole != want).sum().item()
                raise SystemExit(f"MISMATCH: {bad} distances differ from the single-process result")
            reachable = torch.isfinite(whole).float().mean().item()
            print(f"distances match the single-process result ({args.nodes} nodes, {reachable:.0%} of pairs reachable)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
