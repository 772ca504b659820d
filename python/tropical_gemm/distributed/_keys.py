"""Tropical (+) across ranks with torch.distributed's MAX reduction, exactly.

Values are not reduced as they are: MAX over floats in gloo and NCCL does not propagate NaN (it
keeps whichever operand the comparison favours), -0 and +0 would compare equal and their order would
depend on the ranks' order, and MIN-semirings would need a second code path. Instead each value is
mapped to an integer *key* of its own width whose integer order is the semiring's preference:
larger means "(+) keeps this one", NaN above everything (the library's rule: a NaN term makes the
result NaN). Then one all_reduce(MAX) of the keys is (+) across ranks, for every semiring and type,
and the inverse map gives the value back bit for bit.

With a tag (the global k of an argmax, or a rank), the smallest tag among the ranks whose value
wins must come back too:
- 32-bit types: one all_reduce(MAX) of 64-bit words (key << 32) | (2^32 - 1 - tag): equal keys are
  decided by the low half, where a smaller tag is a larger number; tag -1 ("no term beat the zero")
  is 0 there, below every real tag.
- 64-bit types: two reductions: MAX of the keys, then MIN of the tags of the ranks whose key is the
  winner (the others, and tag -1, offer a sentinel above every tag).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from .._native import SEMIRING_FACTS, UnsupportedError

_INT_OF = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # by the element's size, for its bits
_LOW32 = 0xFFFFFFFF
_NO_TAG = torch.iinfo(torch.int64).max  # the two-step path's "this rank offers no tag"


def plus_is_max(semiring: str) -> bool:
    """Whether the semiring's (+) keeps the larger value (maxplus, maxmul, maxmin) or the smaller
    (minplus, minmax), as the library's semiring table says."""
    return SEMIRING_FACTS[semiring].prefers_larger


def check_selects(where: str, semiring: str) -> None:
    """The reduction across ranks keeps one rank's value, which is (+) only where (+) selects one term
    (the table's `selects`): a (+) that combines every term (LogPlus's log-sum-exp) is refused, before
    any collective, on every rank alike. (An unknown name passes: the exchange reports it.)"""
    facts = SEMIRING_FACTS.get(semiring)
    if facts is not None and not facts.selects:
        raise UnsupportedError(
            f"{where}: semiring {semiring!r} is not distributed: its (+) combines every term (log-sum-exp), and the "
            f"ranks' reduction keeps one rank's value (an all_reduce(MAX) of order keys); contract on one device, or "
            f"combine the ranks' partial results yourself, e.g. torch.logsumexp(torch.stack(gathered), 0) over an "
            f"all_gather"
        )


def order_key(value: Tensor, is_max: bool) -> Tensor:
    """The integer key of each value: key(x) > key(y) exactly where (+) prefers x to y; NaN has the
    largest key of all; equal values (-0 and +0 included) have equal keys."""
    int_type = _INT_OF[value.element_size()]
    top = torch.iinfo(int_type).max
    if value.is_floating_point():
        bits = (value + 0.0).view(int_type)  # + 0.0 turns -0 into +0 and changes nothing else
        # IEEE bits read as a signed integer are in value order for positive floats and reversed for
        # negative ones; flipping all but the sign bit of negatives puts every float in value order.
        key = bits ^ ((bits >> (bits.element_size() * 8 - 1)) & top)
    else:
        key = value
    if not is_max:
        key = ~key  # bitwise not reverses the order of two's-complement integers, without overflow
    if value.is_floating_point():
        key = torch.where(torch.isnan(value), torch.full_like(key, top), key)
    return key


def value_of_key(key: Tensor, dtype: torch.dtype, is_max: bool) -> Tensor:
    """The inverse of order_key (a NaN key gives a NaN)."""
    top = torch.iinfo(key.dtype).max
    nan = key == top if dtype.is_floating_point else None
    if not is_max:
        key = ~key
    if not dtype.is_floating_point:
        return key
    bits = key ^ ((key >> (key.element_size() * 8 - 1)) & top)  # the flip is its own inverse
    value = bits.view(dtype)
    return torch.where(nan, torch.full_like(value, float("nan")), value)


def reduce_values(value: Tensor, is_max: bool, group) -> Tensor:
    """(+) of `value` over the group's ranks, on every rank."""
    key = order_key(value, is_max).contiguous()
    if key.data_ptr() == value.data_ptr():  # integers under max are their own keys: reduce a copy
        key = key.clone()
    if key.numel() == 0:  # the same shape on every rank (checked), so every rank skips alike
        return value_of_key(key, value.dtype, is_max)
    dist.all_reduce(key, op=dist.ReduceOp.MAX, group=group)
    return value_of_key(key, value.dtype, is_max)


def reduce_with_tag(value: Tensor, tag: Tensor, is_max: bool, group) -> tuple[Tensor, Tensor]:
    """(+) of `value` over the ranks, and the smallest tag (>= 0; -1 for none) among the ranks whose
    value is the result, on every rank. Returns (value, tag as int64)."""
    key = order_key(value, is_max)
    tag = tag.to(torch.int64)
    if key.numel() == 0:  # the same shape on every rank (checked), so every rank skips alike
        return value.clone(), tag
    if key.dtype == torch.int32:
        low = torch.where(tag >= 0, _LOW32 - tag, torch.zeros_like(tag))
        word = ((key.to(torch.int64) << 32) | low).contiguous()
        dist.all_reduce(word, op=dist.ReduceOp.MAX, group=group)
        best_key = (word >> 32).to(torch.int32)
        low = word & _LOW32
        best_tag = torch.where(low == 0, torch.full_like(low, -1), _LOW32 - low)
    else:
        best_key = key.clone().contiguous()
        dist.all_reduce(best_key, op=dist.ReduceOp.MAX, group=group)
        offer = torch.where((key == best_key) & (tag >= 0), tag, torch.full_like(tag, _NO_TAG)).contiguous()
        dist.all_reduce(offer, op=dist.ReduceOp.MIN, group=group)
        best_tag = torch.where(offer == _NO_TAG, torch.full_like(offer, -1), offer)
    return value_of_key(best_key, value.dtype, is_max), best_tag


def combine_in_order(best: Tensor, best_tag: Tensor | None, new: Tensor, new_tag: Tensor | None, is_max: bool):
    """(+) of two local partial results where every k of `new` comes after every k of `best`: `new`
    wins only where (+) strictly prefers it (ties keep the earlier, smaller k; a NaN, once there, stays).
    Without tags, the plain max or min (which propagate NaN). Written into `best` and `best_tag`
    (a block of C held once, not twice), which are returned."""
    if best_tag is None:
        return (torch.maximum if is_max else torch.minimum)(best, new, out=best), None
    take = order_key(new, is_max) > order_key(best, is_max)
    return torch.where(take, new, best, out=best), torch.where(take, new_tag, best_tag, out=best_tag)
