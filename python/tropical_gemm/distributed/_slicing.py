"""Contractions too large for one device, sliced over the ranks along one (+)-summed index.

A tropical contraction (+)-sums over its inner indices. Cut one of them into slices, one per rank:
each rank contracts its slice with any contraction function, and (+) across ranks (one all_reduce,
as in the K-split) gives the result. The intermediates of each rank are those of a contraction whose
sliced index is shorter: this is how a network whose largest intermediate fits no device is spread.

The contraction is a callable, so that this works with any local contraction: a chain of
tropical_gemm.matmul, a hand-written einsum, or tropical_gemm.einsum (``einsum`` below, which imports
it when called: the einsum module and its planner load only for those who use them).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
import torch.distributed as dist
from torch import Tensor

from .._native import SEMIRINGS, InvalidArgumentError
from ._group import WHERE, collective_device, require_group, shard_range
from ._keys import check_selects, plus_is_max, reduce_values, reduce_with_tag
from ._products import canonical_semiring


def sliced_contract(contract: Callable[..., Tensor], operands: Sequence[Tensor], dims: Sequence[int | None],
                    semiring: str = "maxplus", group=None) -> Tensor:
    """(+) over the ranks of `contract(*pieces)`, where `pieces` are the `operands` cut along one
    summed index: operand i along its dimension `dims[i]` (None: it lacks the index, and goes whole).
    The index must be summed by `contract` (absent from its output). Every rank of `group` calls it
    with the same whole operands; rank r takes slice r (nearly equal slices, the first ones longer).
    Returns the whole result on every rank.

    Differentiable where `contract` is: the gradient reaches only the rank whose slice attains each
    entry of the result (the smallest rank on a tie, as the smallest index wins in the library's
    argmax), through `contract`'s own backward.
    """
    group = require_group(group, "sliced_contract")
    s = canonical_semiring(semiring)
    check_selects(f"{WHERE}.sliced_contract", s)
    operands, dims = list(operands), list(dims)
    if len(operands) != len(dims) or not operands:
        raise InvalidArgumentError(
            f"{WHERE}.sliced_contract: give one entry of dims per operand ({len(operands)} operands, {len(dims)} "
            f"dims): the dimension of the sliced index in it, or None where it has no such index"
        )
    sizes = {op.shape[d] for op, d in zip(operands, dims) if d is not None}
    if len(sizes) != 1:
        raise InvalidArgumentError(
            f"{WHERE}.sliced_contract: the sliced dimensions must have one length, found "
            f"{sorted(sizes) if sizes else 'none (every entry of dims is None)'}"
        )
    if s not in SEMIRINGS:
        raise InvalidArgumentError(
            f"{WHERE}.sliced_contract: unknown semiring {semiring!r}: use one of {sorted(SEMIRINGS)}"
        )
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    start, stop = shard_range(sizes.pop(), world, rank)
    pieces = [op if d is None else op.narrow(d, start, stop - start) for op, d in zip(operands, dims)]
    local = contract(*pieces)
    collective_device(group, local)  # a clear error for CPU results on a GPU-only backend
    if torch.is_grad_enabled() and local.requires_grad:
        return _OwnedReduce.apply(local, s, group)
    return reduce_values(local, plus_is_max(s), group)


class _OwnedReduce(torch.autograd.Function):
    """(+) across ranks; its backward passes the gradient only where this rank's value won."""

    @staticmethod
    def forward(ctx, local, semiring, group):
        rank = dist.get_rank(group)
        tag = torch.full(local.shape, rank, dtype=torch.int64, device=local.device)
        value, owner = reduce_with_tag(local, tag, plus_is_max(semiring), group)
        ctx.save_for_backward(owner == rank)
        return value

    @staticmethod
    def backward(ctx, grad):
        (mine,) = ctx.saved_tensors
        return grad * mine, None, None


def einsum(equation: str, *operands: Tensor, semiring: str = "maxplus", sliced_index: str, group=None) -> Tensor:
    """``tropical_gemm.einsum(equation, *operands, semiring=...)`` sliced over the ranks along the
    summed index letter `sliced_index` (see sliced_contract)."""
    contract = _package_einsum()
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    if not arrow:
        raise InvalidArgumentError(f"{WHERE}.einsum: write the output explicitly ('ij,jk->ik'), got {equation!r}")
    terms = inputs.split(",")
    if len(sliced_index) != 1 or sliced_index in output or not any(sliced_index in t for t in terms):
        raise InvalidArgumentError(
            f"{WHERE}.einsum: sliced_index must be one letter summed over in {equation!r} (in an input, not in "
            f"the output), got {sliced_index!r}"
        )
    if len(terms) != len(operands) or any("." in t or t.count(sliced_index) > 1 for t in terms):
        raise InvalidArgumentError(
            f"{WHERE}.einsum: {equation!r} needs {len(terms)} operands without '...' or repeats of the sliced "
            f"index; got {len(operands)} operands"
        )
    dims = [t.index(sliced_index) if sliced_index in t else None for t in terms]
    return sliced_contract(lambda *pieces: contract(equation, *pieces, semiring=semiring), operands, dims,
                           semiring, group)


def _package_einsum():
    """tropical_gemm.einsum, imported on first use (opt_einsum and the planner with it)."""
    from .._einsum import einsum

    return einsum
