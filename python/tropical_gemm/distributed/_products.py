"""Tropical products of operands sharded over a process group: the K-split (one all_reduce), the
M-split (no communication) and, through _grid, the 2-D grid; the split chosen from the shapes; and
the helpers that cut whole operands into this rank's shards and put a sharded result back together.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from .. import ops
from .._checks import ORAND
from .._native import SEMIRING_ALIASES, SEMIRINGS, InvalidArgumentError, UnsupportedError
from ..functional import matmul as local_matmul
from . import _grid
from ._group import SPLITS, WHERE, collective_device, exchange, gather_all, grid_shape, require_group, shard_range
from ._keys import check_selects, plus_is_max, reduce_values, reduce_with_tag


def canonical_semiring(semiring) -> str:
    """The canonical name for any spelling the package accepts; an unknown one is returned as given
    and reported after the ranks have exchanged their calls, on every rank alike."""
    text = str(semiring)
    return SEMIRING_ALIASES.get(text, SEMIRING_ALIASES.get(text.lower(), text))


# --- choosing a split ---------------------------------------------------------------------------


def split_costs(m: int, k: int, n: int, world: int, grid=None) -> dict[str, float]:
    """Elements each rank holds (its A, B and C) plus elements it receives, per split, for an
    M x K by K x N product over `world` ranks cut evenly (README, "Memory per GPU")."""
    rows, cols = grid_shape(grid, world, "split_costs")
    return {
        "k": (m * k + k * n) / world + m * n + m * n,  # C whole on every rank; all_reduce moves about M*N
        "m": m * k / world + k * n + m * n / world,  # B whole on every rank; nothing moves
        "grid": (m * k + k * n + m * n) / world + m * k / rows + k * n / cols,  # panels of A and B arrive
    }


def choose_split(m: int, k: int, n: int, world: int, grid=None) -> str:
    """The split that needs the fewest elements per rank, held and received (split_costs): 'k' for a
    long K, 'm' for a tall A and a small B, 'grid' when no whole operand or result should sit on one
    rank. One rank: 'm' (a plain local product)."""
    if world == 1:
        return "m"
    costs = split_costs(m, k, n, world, grid)
    return min(SPLITS, key=lambda split: costs[split])  # ties go to the split listed first


# --- cutting whole operands, gathering results --------------------------------------------------


def shard_operands(a: Tensor, b: Tensor, split: str, group=None, grid=None) -> tuple[Tensor, Tensor]:
    """This rank's shards (views, no copy) of whole operands a (M x K) and b (K x N), cut as
    :func:`matmul` expects them for `split`: nearly equal parts, the first ones one longer."""
    group = require_group(group, "shard_operands")
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise InvalidArgumentError(
            f"{WHERE}.shard_operands takes whole operands a (M x K) and b (K x N); got a {tuple(a.shape)} "
            f"and b {tuple(b.shape)}"
        )
    m, k = a.shape
    n = b.shape[1]
    if split == "k":
        start, stop = shard_range(k, world, rank)
        return a[:, start:stop], b[start:stop]
    if split == "m":
        start, stop = shard_range(m, world, rank)
        return a[start:stop], b
    if split == "grid":
        rows, cols = grid_shape(grid, world, "shard_operands")
        p, q = divmod(rank, cols)
        (m0, m1), (ka0, ka1) = shard_range(m, rows, p), shard_range(k, cols, q)
        (kb0, kb1), (n0, n1) = shard_range(k, rows, p), shard_range(n, cols, q)
        return a[m0:m1, ka0:ka1], b[kb0:kb1, n0:n1]
    raise InvalidArgumentError(f"{WHERE}.shard_operands: unknown split {split!r}: use one of {SPLITS}")


def gather_result(c: Tensor, split: str, group=None, grid=None) -> Tensor:
    """The whole result on every rank from each rank's part of it (C, or the argmax): as it is for
    'k' (already whole), the row slabs stacked for 'm', the blocks joined for 'grid'. It holds all
    of C on every rank: for checking and for results that fit one device."""
    group = require_group(group, "gather_result")
    if split == "k":
        return c
    parts = gather_all(c, group)
    if split == "m":
        return torch.cat(parts, 0)
    if split == "grid":
        rows, cols = grid_shape(grid, len(parts), "gather_result")
        return torch.cat([torch.cat(parts[p * cols:(p + 1) * cols], 1) for p in range(rows)], 0)
    raise InvalidArgumentError(f"{WHERE}.gather_result: unknown split {split!r}: use one of {SPLITS}")


# --- the product --------------------------------------------------------------------------------


def matmul(a: Tensor, b: Tensor, semiring: str = "maxplus", *, split: str | None = None, group=None,
           grid=None, return_argmax: bool = False, panel_width: int | None = None):
    """The tropical product of operands sharded over the ranks of `group` (None: the default group).
    Every rank of the group must call it, with its own shards and the same other arguments.

    ``split`` says how the operands are cut (README, "Beyond one GPU"):

    - ``"k"``: a is this rank's columns of A (M x K_r), b the same rows of B (K_r x N), the ranks'
      slabs in rank order; returns the whole C (and argmax: the global k) on every rank.
    - ``"m"``: a is this rank's rows of A (M_r x K), b all of B; returns this rank's rows of C.
    - ``"grid"``: ranks form a grid of rows x columns (``grid``, default the most square, row-major
      by rank); rank (p, q) holds block (p, q) of A and block (p, q) of B (K cut into columns blocks
      for A and rows blocks for B) and gets block (p, q) of C. ``panel_width`` bounds the width of
      the panels of A and B received at a time (memory).
    - ``None``: a and b are whole matrices, the same on every rank; the split is chosen from their
      shapes (:func:`choose_split`), each rank computes its share, and the whole C comes back on every
      rank.

    Shards may be uneven (a rank may even hold none of K or M). Argmax, where asked for, is the
    smallest global k attaining each entry (-1 where no term beats the zero; for a NaN result the
    smallest k whose term is NaN), exactly as the single-process product gives it. Gradients (float
    types) for every split: see the README.
    """
    group = require_group(group, "matmul")
    s = canonical_semiring(semiring)
    if SEMIRINGS.get(s) == ORAND:  # before any collective: every rank refuses alike
        raise UnsupportedError(
            f"{WHERE}.matmul: semiring {s!r} is not distributed yet; run tropical_gemm.matmul on each rank's "
            f"shards and combine the boolean results with all_reduce(MAX)"
        )
    check_selects(f"{WHERE}.matmul", s)
    if split is None:
        return _whole_operands(a, b, s, group, grid, return_argmax, panel_width)
    world = dist.get_world_size(group)
    shape = grid_shape(grid, world, "matmul") if split == "grid" else (1, world)
    grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)
    shards = exchange(group, collective_device(group, a), "matmul", split, s, a, b, return_argmax or grad, shape)
    if split == "k":
        return _k_split(a, b, s, group, shards, return_argmax, grad)
    if split == "m":
        _check_m_split(shards)
        return local_matmul(a, b, s, return_argmax=return_argmax)
    if grad:
        c, k = _grid.GridProduct.apply(a, b, s, group, shards, shape, panel_width)
        return (c, k) if return_argmax else c
    return _grid.product(a, b, s, group, shards, shape, return_argmax, panel_width)


def _whole_operands(a, b, s, group, grid, return_argmax, panel_width):
    if a.dim() != 2 or b.dim() != 2:
        raise InvalidArgumentError(
            f"{WHERE}.matmul with split=None takes whole 2-D operands; got a {a.dim()}-D and b {b.dim()}-D"
        )
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        c, k = _WholeProduct.apply(a, b, s, group, grid, panel_width)
        return (c, k) if return_argmax else c
    return _whole_forward(a, b, s, group, grid, return_argmax, panel_width)


def _whole_forward(a, b, s, group, grid, return_argmax, panel_width):
    world = dist.get_world_size(group)
    split = choose_split(a.shape[0], a.shape[1], b.shape[1], world, grid)
    a_part, b_part = shard_operands(a, b, split, group, grid)
    out = matmul(a_part, b_part, s, split=split, group=group, grid=grid, return_argmax=return_argmax,
                 panel_width=panel_width)
    if return_argmax:
        return gather_result(out[0], split, group, grid), gather_result(out[1], split, group, grid)
    return gather_result(out, split, group, grid)


def _check_m_split(shards) -> None:
    for r, ((_, ka), (kb, n)) in enumerate(zip(shards.a_shapes, shards.b_shapes)):
        if (kb, n) != shards.b_shapes[0]:
            raise InvalidArgumentError(
                f"{WHERE}.matmul(split='m'): rank {r}'s b is {kb} x {n} but rank 0's is "
                f"{shards.b_shapes[0][0]} x {shards.b_shapes[0][1]}: in an M-split every rank holds all of B"
            )
        if ka != kb:
            raise InvalidArgumentError(
                f"{WHERE}.matmul(split='m'): rank {r}'s a has {ka} columns but B has {kb} rows: each rank "
                f"holds its rows of A with all K columns"
            )


def _k_offset(shards) -> int:
    """This rank's first global k, after checking that the slabs fit together."""
    m, n = shards.a_shapes[0][0], shards.b_shapes[0][1]
    for r, ((mr, ka), (kb, nr)) in enumerate(zip(shards.a_shapes, shards.b_shapes)):
        if ka != kb:
            raise InvalidArgumentError(
                f"{WHERE}.matmul(split='k'): rank {r}'s a has {ka} columns but its b has {kb} rows: each rank "
                f"holds the same slab of K in both (a[:, slab] and b[slab, :])"
            )
        if mr != m or nr != n:
            raise InvalidArgumentError(
                f"{WHERE}.matmul(split='k'): rank {r} holds a {mr} x {ka} and b {kb} x {nr}, but rank 0 has M = {m} "
                f"and N = {n}: in a K-split every rank holds all M rows of A and all N columns of B"
            )
    return sum(cols for _, cols in shards.a_shapes[:shards.rank])


def _k_split(a, b, s, group, shards, return_argmax, grad):
    offset = _k_offset(shards)
    is_max = plus_is_max(s)
    if grad:
        c, k = _KSplitProduct.apply(a, b, s, group, offset)
        return (c, k) if return_argmax else c
    if not return_argmax:
        return reduce_values(local_matmul(a, b, s), is_max, group)
    c, local_k = local_matmul(a, b, s, return_argmax=True)
    c, k = reduce_with_tag(c, _global_k(local_k, offset), is_max, group)
    return c, k.to(torch.int32)


def _global_k(local_k: Tensor, offset: int) -> Tensor:
    return torch.where(local_k >= 0, local_k.to(torch.int64) + offset, torch.full_like(local_k, -1, dtype=torch.int64))


class _KSplitProduct(torch.autograd.Function):
    """The K-split with a gradient: forward as above; backward through the global argmax, translated
    to this rank's slab, -1 where another rank owns it (so only the owner of k* contributes). grad_C
    is taken as it arrives on this rank: the gradient of a loss every rank computes from the same C,
    as in data-parallel training; nothing is communicated."""

    @staticmethod
    def forward(ctx, a, b, semiring, group, offset):
        c, local_k = local_matmul(a, b, semiring, return_argmax=True)
        c, k = reduce_with_tag(c, _global_k(local_k, offset), plus_is_max(semiring), group)
        mine = (k >= offset) & (k < offset + a.shape[1])
        ctx.save_for_backward(a, b, torch.where(mine, k - offset, torch.full_like(k, -1)).to(torch.int32))
        ctx.semiring = semiring
        k = k.to(torch.int32)
        ctx.mark_non_differentiable(k)
        return c, k

    @staticmethod
    def backward(ctx, grad_c, _grad_k):
        a, b, local_k = ctx.saved_tensors
        grad_c = grad_c.contiguous()
        grad_a = ops.gemm_backward_a(grad_c, local_k, a, b, ctx.semiring) if ctx.needs_input_grad[0] else None
        grad_b = ops.gemm_backward_b(grad_c, local_k, a, b, ctx.semiring) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None, None, None


class _WholeProduct(torch.autograd.Function):
    """split=None with a gradient. Every rank holds the whole operands and gets the whole C and its
    global argmax, so every rank routes its own grad_C through that argmax locally (the package's
    backward ops, O(M N) work beside the product's O(M N K)): nothing is communicated, and each rank's
    gradients are those one process computes for the loss this rank computes, the same on every rank
    when every rank computes the same loss (as in data-parallel training)."""

    @staticmethod
    def forward(ctx, a, b, semiring, group, grid, panel_width):
        c, k = _whole_forward(a, b, semiring, group, grid, True, panel_width)
        ctx.save_for_backward(a, b, k)
        ctx.semiring = semiring
        ctx.mark_non_differentiable(k)
        return c, k

    @staticmethod
    def backward(ctx, grad_c, _grad_k):
        a, b, k = ctx.saved_tensors
        grad_c = grad_c.contiguous()
        grad_a = ops.gemm_backward_a(grad_c, k, a, b, ctx.semiring) if ctx.needs_input_grad[0] else None
        grad_b = ops.gemm_backward_b(grad_c, k, a, b, ctx.semiring) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None, None, None, None
