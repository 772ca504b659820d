"""The maximum independent set of a random 3-regular graph, as a MaxPlus tensor network.

    python examples/max_independent_set.py --vertices 100        # on the GPU if there is one
    python examples/max_independent_set.py --vertices 16         # small: checked by brute force

Each vertex v has an index s_v (0: out of the set, 1: in it) and a vector w_v = [0, 1]: in MaxPlus
(max, +) it adds 1 for a vertex in the set. Each edge (u, v) has a 2 x 2 matrix that is 0 except
-inf (MaxPlus's zero) at s_u = s_v = 1: no edge may join two vertices of the set. The tropical
einsum of them all, over every index, is max over assignments of (set size, or -inf if not
independent): the size of the largest independent set.

Its gradient with respect to w_v is 1 at the s_v of one optimal set (the backward pass follows the
argmax of each pairwise product), so the set is read off the gradient, then checked: independent,
of the size found, and (for 20 vertices or fewer) as large as any, by trying every subset.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import torch

import tropical_gemm as tg


def random_regular_graph(degree: int, vertices: int, rng) -> list[tuple[int, int]]:
    """A random simple `degree`-regular graph: stubs paired at random, drawn again until no loop
    or double edge appears (the configuration model)."""
    if vertices * degree % 2:
        raise SystemExit(f"a {degree}-regular graph needs an even number of vertices, not {vertices}")
    while True:
        stubs = rng.permutation(np.repeat(np.arange(vertices), degree))
        edges = {tuple(sorted(map(int, pair))) for pair in stubs.reshape(-1, 2)}
        if len(edges) == vertices * degree // 2 and all(u != v for u, v in edges):
            return sorted(edges)


def largest_set_by_brute_force(vertices: int, edges) -> int:
    """The size of a maximum independent set, by trying every subset (vertices <= 20)."""
    subsets = np.arange(1 << vertices, dtype=np.int64)
    independent = np.ones(subsets.shape, dtype=bool)
    for u, v in edges:
        independent &= ((subsets >> u) & (subsets >> v) & 1) == 0
    sizes = np.array([bin(x).count("1") for x in range(1 << vertices)])
    return int(sizes[independent].max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vertices", type=int, default=60, help="vertices of the graph (even; default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--optimize", default="auto", help="einsum's planner: auto, greedy, random-greedy, cotengra, ...")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    n = args.vertices
    edges = random_regular_graph(3, n, rng)
    device, dtype = torch.device(args.device), torch.float32

    weights = [torch.tensor([0.0, 1.0], dtype=dtype, device=device, requires_grad=True) for _ in range(n)]
    forbid = torch.tensor([[0.0, 0.0], [0.0, -float("inf")]], dtype=dtype, device=device)
    # The sublist form names the indices by int: vertex v's index is v. No index is kept: a scalar.
    network = [x for v, w in enumerate(weights) for x in (w, [v])]
    network += [x for u, v in edges for x in (forbid, [u, v])]

    start = time.perf_counter()
    size = tg.einsum(*network, [], semiring="maxplus", optimize=args.optimize)
    size.backward()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    chosen = [v for v, w in enumerate(weights) if w.grad[1] == 1]
    print(f"3-regular graph, {n} vertices, {len(edges)} edges, seed {args.seed}, on {device}")
    print(f"maximum independent set: {size.item():.0f} vertices ({seconds * 1e3:.1f} ms, forward and backward)")
    print(f"one such set, from the gradient: {chosen}")

    assert all(w.grad.sum().item() == 1 for w in weights), "each vertex's gradient marks exactly one state"
    assert not any(u in chosen and v in chosen for u, v in edges), "the set read off the gradient is independent"
    assert len(chosen) == size.item(), "the set read off the gradient has the size found"
    print("checked: the set is independent and as large as the result")
    if n <= 20:
        best = largest_set_by_brute_force(n, edges)
        assert best == size.item(), f"brute force finds {best}"
        print(f"checked by brute force over all {1 << n} subsets: {best}")


if __name__ == "__main__":
    main()
