"""One rank of test_distributed.py's process groups: runs every check of tropical_gemm.distributed
against the single-process product on the same operands, and writes {check: None or traceback}.

    python distributed_worker.py RANK WORLD INIT_FILE OUT_JSON [gloo|nccl]

Every rank builds the same whole operands from the same seed, computes the single-process result
with tropical_gemm.matmul, and compares its own part of the distributed result with the matching
part of it, exactly (tropical products are exact: the same terms, compared the same way).
Checks are listed by name (CHECKS) so that the test can report each one on its own, while the
process group is started once per world size.
"""

from __future__ import annotations

import datetime
import itertools
import json
import sys
import time
import traceback

import numpy as np
import torch
import torch.distributed as dist

import tropical_gemm as tg
import tropical_gemm.distributed as td
import tropical_reference as ref

SPLITS = ("k", "m", "grid")
DEVICE = torch.device("cpu")  # the nccl run moves everything to this rank's GPU


def grids(world):
    return [(r, world // r) for r in range(1, world + 1) if world % r == 0]


def operands(dtype, semiring, m, k, n, seed, specials=True):
    rng = np.random.default_rng(seed)
    a, b = ref.random_operands(rng, (m, k), (k, n), dtype, semiring, specials)
    return torch.from_numpy(a).to(DEVICE), torch.from_numpy(b).to(DEVICE)


# A failed comparison is noted, not raised, and the check carries on: every rank then makes the same
# collective calls whatever its results, so one rank's failure cannot leave the others waiting in a
# collective it skipped (gloo aborts the process on such a mismatch). The check fails at its end.
FAILURES: list = []


def expect(condition: bool, what: str) -> None:
    if not condition:
        FAILURES.append(what)


def close(got, want, what, exact=False):
    try:
        if exact:
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
        else:
            torch.testing.assert_close(got, want)
    except AssertionError as e:
        FAILURES.append(f"{what}: {e}")


def same(got, want, what):
    close(got, want, what, exact=True)


def expected_part(whole, split, rank, world, grid):
    """The part of a whole result that `split` leaves on `rank` (as shard_operands cuts)."""
    m, n = whole.shape
    if split == "k":
        return whole
    if split == "m":
        return whole[td._group.shard_range(m, world, rank)[0]:td._group.shard_range(m, world, rank)[1]]
    rows, cols = grid or td._group.default_grid(world)
    p, q = divmod(rank, cols)
    (m0, m1), (n0, n1) = td._group.shard_range(m, rows, p), td._group.shard_range(n, cols, q)
    return whole[m0:m1, n0:n1]


def compare_split(a, b, semiring, split, grid=None, panel_width=None, what="", gather=False):
    rank, world = dist.get_rank(), dist.get_world_size()
    want_c, want_k = tg.matmul(a, b, semiring, return_argmax=True)
    a_part, b_part = td.shard_operands(a, b, split, grid=grid)
    c = td.matmul(a_part, b_part, semiring, split=split, grid=grid, panel_width=panel_width)
    c2, k = td.matmul(a_part, b_part, semiring, split=split, grid=grid, panel_width=panel_width, return_argmax=True)
    label = f"{what} split={split} grid={grid} panel={panel_width} {tuple(a.shape)}x{tuple(b.shape)}"
    same(c, expected_part(want_c, split, rank, world, grid), label + " C")
    same(c2, expected_part(want_c, split, rank, world, grid), label + " C (argmax call)")
    same(k, expected_part(want_k, split, rank, world, grid), label + " argmax")
    expect(k.dtype == torch.int32, f"{label}: argmax is {k.dtype}")
    if gather:  # put back together, the parts are the whole product
        same(td.gather_result(c, split, grid=grid), want_c, label + " gathered C")
        same(td.gather_result(k, split, grid=grid), want_k, label + " gathered argmax")


def thorough() -> bool:
    """Two ranks try every variant; four (5 ms a collective on CI's two cores, against 1 ms) try the
    variants that only more ranks reach: a rank with nothing, square grids, more owners of panels."""
    return dist.get_world_size() <= 2


def shapes_for(world):
    """Uneven shapes, and shapes that leave some ranks with nothing (K or M shorter than the group)."""
    shapes = [(2 * world + 1, 3 * world + 2, world + 3), (world - 1, world - 1, 2), (3, 0, 2), (1, 1, 1)]
    return shapes if thorough() else shapes[:2]


def check_product(split, semiring, dtype):
    world = dist.get_world_size()
    for index, (m, k, n) in enumerate(shapes_for(world)):
        a, b = operands(dtype, semiring, m, k, n, seed=index)
        if split != "grid":
            compare_split(a, b, semiring, split, gather=index == 0)
            continue
        # Every grid shape on the first shape (two ranks: the first two shapes), with panels of one
        # column (many segments, owned by different grid lines); the default grid on the others.
        every_grid = index == 0 or (index == 1 and thorough())
        for grid in grids(world) if every_grid else [None]:
            compare_split(a, b, semiring, split, grid, gather=index == 0 and grid == td._group.default_grid(world))
            if index == 0 and (thorough() or grid == td._group.default_grid(world)):
                compare_split(a, b, semiring, split, grid, panel_width=1)


def check_whole_operands(semiring, dtype):
    """Whole operands: the split chosen from the shapes (each split in turn), the whole result back."""
    world = dist.get_world_size()
    # K-split, M-split, and (4 ranks) the grid, by split_costs.
    for m, k, n in [(3, 40 * world, 2), (40 * world, 3, 2), (2 * world, 2 * world, 8 * world)]:
        a, b = operands(dtype, semiring, m, k, n, seed=m)
        want_c, want_k = tg.matmul(a, b, semiring, return_argmax=True)
        what = f"split=None ({td.choose_split(m, k, n, world)}) {m}x{k}x{n}"
        same(td.matmul(a, b, semiring), want_c, what)
        c, k_ = td.matmul(a, b, semiring, return_argmax=True)
        same(c, want_c, what + ", argmax call")
        same(k_, want_k, what + " argmax")


def check_ties(dtype, semiring):
    """Ties across rank boundaries: the smallest global k must win, whichever rank holds it."""
    rank, world = dist.get_rank(), dist.get_world_size()
    k_total = 3 * world + 1
    second = td._group.shard_range(k_total, world, 1)[0]  # rank 1's first k
    torch_dtype = getattr(torch, dtype)
    low = 0 if semiring == "maxmul" else -3
    # Every term equal from rank 1's first k on, worse before it: the argmax is rank 1's first k.
    a = torch.ones(4, k_total, dtype=torch_dtype, device=DEVICE)
    b = torch.ones(k_total, 3, dtype=torch_dtype, device=DEVICE)
    worse = low if semiring.startswith("max") else 5
    a[:, :second] = worse
    b[:second] = worse
    for split, grid in [("k", None)] + [("grid", g) for g in (grids(world) if thorough() else [None])]:
        compare_split(a, b, semiring, split, grid, what="plateau")
        compare_split(a, b, semiring, split, grid, panel_width=1, what="plateau")
    _, k = td.matmul(*td.shard_operands(a, b, "k"), semiring, split="k", return_argmax=True)
    expect(bool((k == second).all()), f"plateau argmax {k.unique().tolist()}, want {second}")
    # Many ties: values from a tiny range.
    g = torch.Generator().manual_seed(7)
    a = torch.randint(0, 3, (5, k_total), generator=g).to(torch_dtype).to(DEVICE)
    b = torch.randint(0, 3, (k_total, 4), generator=g).to(torch_dtype).to(DEVICE)
    for split, grid in [("k", None), ("m", None)] + [("grid", gr) for gr in (grids(world) if thorough() else [None])]:
        compare_split(a, b, semiring, split, grid, what="small range")
    if torch_dtype.is_floating_point:
        # NaN in rank 0's last k and in rank 1's first: the result is NaN, its argmax the smaller k.
        a = torch.ones(2, k_total, dtype=torch_dtype, device=DEVICE)
        b = torch.ones(k_total, 2, dtype=torch_dtype, device=DEVICE)
        a[:, second - 1] = float("nan")
        a[0, second] = float("nan")
        compare_split(a, b, semiring, "k", what="nan")
        _, k = td.matmul(*td.shard_operands(a, b, "k"), semiring, split="k", return_argmax=True)
        expect(bool((k == second - 1).all()), f"nan argmax {k.tolist()}, want {second - 1}")


def check_gradients(split, semiring, dtype):
    """Gradients of this rank's shards equal the matching parts of the single-process gradients;
    with split=None (whole operands), the whole gradients on every rank."""
    rank, world = dist.get_rank(), dist.get_world_size()
    torch_dtype = getattr(torch, dtype)
    shapes = [(5, 2 * world + 1, 3), (world + 1, world - 1, 2), (1, 3, 1)]
    for m, k, n in shapes if thorough() or split == "grid" else shapes[:2]:
        a, b = operands(dtype, semiring, m, k, n, seed=m * 10 + k, specials=False)
        a.requires_grad_()
        b.requires_grad_()
        grad_c = torch.randn(m, n, generator=torch.Generator().manual_seed(3), dtype=torch_dtype).to(DEVICE)
        want_a, want_b = torch.autograd.grad(tg.matmul(a, b, semiring), (a, b), grad_c)
        label = f"split={split} {m}x{k}x{n}"
        if split is None:
            got_a, got_b = torch.autograd.grad(td.matmul(a, b, semiring), (a, b), grad_c)
            close(got_a, want_a, f"{label} grad a")
            close(got_b, want_b, f"{label} grad b")
            continue
        variants = [(None, None)]
        if split == "grid":  # every grid, and narrow panels: several segments per owner
            variants = [(g, w) for g in grids(world) for w in (None, 1)] if thorough() else [(None, None), (None, 1)]
        for grid, width in variants:
            a_part, b_part = (x.detach().requires_grad_()
                              for x in td.shard_operands(a.detach(), b.detach(), split, grid=grid))
            c = td.matmul(a_part, b_part, semiring, split=split, grid=grid, panel_width=width)
            got_a, got_b = torch.autograd.grad(c, (a_part, b_part), expected_part(grad_c, split, rank, world, grid))
            what = f"{label} grid={grid} panel={width}"
            if split == "m":
                start, stop = td._group.shard_range(m, world, rank)
                close(got_a, want_a[start:stop], f"{what} grad a")
                # Each rank's gradient of the shared b is its rows' part: summed over ranks, the whole one.
                total = got_b.clone()
                dist.all_reduce(total)
                close(total, want_b, f"{what} grad b summed over ranks")
            else:  # each rank's gradient is its own block of the whole one
                part_a, part_b = td.shard_operands(want_a, want_b, split, grid=grid)
                close(got_a, part_a, f"{what} grad a")
                close(got_b, part_b, f"{what} grad b")


def expect_error(kind, words, fn):
    try:
        fn()
    except kind as e:
        expect(words in str(e), f"message {str(e)!r} lacks {words!r}")
        return
    FAILURES.append(f"no {kind.__name__} raised (expected one mentioning {words!r})")


def check_errors():
    """Bad calls raise the same clear error on every rank, and leave the group usable."""
    rank, world = dist.get_rank(), dist.get_world_size()
    a, b = operands("float32", "maxplus", 4, 2 * world, 3, seed=1)
    a_part, b_part = td.shard_operands(a, b, "k")
    # Rank 1 holds one row fewer of A.
    mine = a_part[:-1] if rank == 1 else a_part
    expect_error(tg.InvalidArgumentError, "rank 1", lambda: td.matmul(mine, b_part, split="k"))
    # Rank 1 asks for another semiring.
    expect_error(tg.InvalidArgumentError, "semiring",
                 lambda: td.matmul(a_part, b_part, "minplus" if rank == 1 else "maxplus", split="k"))
    expect_error(tg.InvalidArgumentError, "unknown semiring", lambda: td.matmul(a_part, b_part, "plusmax", split="k"))
    expect_error(tg.InvalidArgumentError, "unknown split", lambda: td.matmul(a_part, b_part, split="diagonal"))
    expect_error(tg.InvalidArgumentError, "dtype", lambda: td.matmul(a_part, b_part.double(), split="k"))
    expect_error(tg.UnsupportedError, "complex64",
                 lambda: td.matmul(a_part.to(torch.complex64), b_part.to(torch.complex64), split="grid"))
    # A slab of a whose K differs from b's.
    expect_error(tg.InvalidArgumentError, "columns", lambda: td.matmul(a_part[:, :1], b_part, split="k"))
    # M-split with different Bs.
    expect_error(tg.InvalidArgumentError, "all of B", lambda: td.matmul(a, b[:, :2] if rank == 0 else b, split="m"))
    expect_error(tg.InvalidArgumentError, "grid", lambda: td.matmul(a_part, b_part, split="grid", grid=(world, 2)))
    if world >= 2:
        ga, gb = td.shard_operands(a, b, "grid", grid=(1, world))
        expect_error(tg.InvalidArgumentError, "grid row",
                     lambda: td.matmul(ga[:-1] if rank == 0 else ga, gb, split="grid", grid=(1, world)))
    expect_error(tg.InvalidArgumentError, "2-D", lambda: td.matmul(a_part[None], b_part, split="k"))
    # The group still works.
    same(td.matmul(a_part, b_part, split="k"), tg.matmul(a, b), "after the errors")


def check_sliced_contract(semiring):
    """A chain x (i x j) . y (j x k) . z (k x l), sliced over j, then over k, against the unsliced one."""
    def chain(x, y, z):
        return tg.matmul(tg.matmul(x, y, semiring), z, semiring)

    world = dist.get_world_size()
    for dtype in ref.DTYPES:
        x, y = operands(dtype, semiring, 3, 2 * world + 1, 4, seed=11)
        _, z = operands(dtype, semiring, 1, 4, 2, seed=12)
        want = chain(x, y, z)
        same(td.sliced_contract(chain, [x, y, z], [1, 0, None], semiring), want, f"{dtype} sliced over j")
        same(td.sliced_contract(chain, [x, y, z], [None, 1, 0], semiring), want, f"{dtype} sliced over k")
    # Gradients: only the rank whose slice wins passes them on; summed over ranks, the whole ones.
    x, y = operands("float64", semiring, 3, 2 * world + 1, 4, seed=13, specials=False)
    _, z = operands("float64", semiring, 1, 4, 2, seed=14, specials=False)
    leaves = [t.requires_grad_() for t in (x, y, z)]
    grad_out = torch.randn(3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).to(DEVICE)
    want = torch.autograd.grad(chain(*leaves), leaves, grad_out)
    got = torch.autograd.grad(td.sliced_contract(chain, leaves, [1, 0, None], semiring), leaves, grad_out)
    for g, w in zip(got, want):
        total = g.clone()
        dist.all_reduce(total)
        close(total, w, "sliced gradient summed over ranks")
    # The einsum: sliced over the ranks, it agrees with tropical_gemm.einsum on one process.
    x, y = operands("float32", semiring, 3, 2 * world + 1, 4, seed=15)
    same(td.einsum("ij,jk->ik", x, y, semiring=semiring, sliced_index="j"),
         tg.einsum("ij,jk->ik", x, y, semiring=semiring), "einsum")


def checks() -> dict:
    """Every check by name, in the order the ranks run them."""
    table = {}
    for split, semiring, dtype in itertools.product(SPLITS, ref.SEMIRINGS, ref.DTYPES):
        table[f"product-{split}-{semiring}-{dtype}"] = (check_product, split, semiring, dtype)
    for semiring, dtype in zip(ref.SEMIRINGS, itertools.cycle(ref.DTYPES)):
        table[f"whole-operands-{semiring}-{dtype}"] = (check_whole_operands, semiring, dtype)
    for dtype, semiring in itertools.product(ref.DTYPES, ref.SEMIRINGS):
        table[f"ties-{dtype}-{semiring}"] = (check_ties, dtype, semiring)
    for split, semiring, dtype in itertools.product((*SPLITS, None), ref.SEMIRINGS, ("float32", "float64")):
        table[f"gradients-{split or 'whole'}-{semiring}-{dtype}"] = (check_gradients, split, semiring, dtype)
    table["errors"] = (check_errors,)
    for semiring in ref.SEMIRINGS:
        table[f"sliced-contract-{semiring}"] = (check_sliced_contract, semiring)
    return table


CHECK_NAMES = list(checks())


def main() -> None:
    global DEVICE
    rank, world, init_file, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    backend = sys.argv[5] if len(sys.argv) > 5 else "gloo"
    torch.set_num_threads(1)  # several ranks share CI's two cores
    if backend == "nccl":
        torch.cuda.set_device(rank)
        DEVICE = torch.device("cuda", rank)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    results, seconds = {}, {}
    for name, (fn, *args) in checks().items():
        start = time.perf_counter()
        FAILURES.clear()
        try:
            fn(*args)
            if FAILURES:
                raise AssertionError("\n".join(FAILURES))
            results[name] = None
        except Exception:  # noqa: BLE001 -- reported per check by the test
            results[name] = traceback.format_exc()
        seconds[name] = time.perf_counter() - start
    with open(out, "w") as f:
        json.dump({"results": results, "seconds": seconds}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
