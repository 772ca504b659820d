"""The tropical einsum in the counting semiring (max-plus with multiplicities): every tensor a
(values, counts) pair with the same indices, contracted pairwise along the same plan as the other
semirings (tropical_gemm._einsum) with tropical_gemm.counting_matmul, on strided views where a
reshape allows and copies where it does not. The C++ contraction (tropical/contract.hpp) takes
scalar semirings only, so this path groups the indices itself.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._counting import counting_matmul
from ._einsum import check_operands, plan_for
from ._native import InvalidArgumentError, UnsupportedError


def _by_stride(t: Tensor, labels: list, group) -> list:
    """The indices of `group` in the order of t's strides, outermost first: the order in which a
    reshape can merge them without a copy."""
    stride = t.stride()
    return sorted(group, key=lambda l: -stride[labels.index(l)])


def _grouped(t: Tensor, labels: list, groups) -> Tensor:
    """t permuted to the indices of `groups` in turn, each group merged into one dimension (a view
    where the strides allow)."""
    order = [labels.index(l) for g in groups for l in g]
    shape = t.shape
    sizes = []
    for g in groups:  # a plain loop: torch.compile traces no generator inside math.prod
        size = 1
        for l in g:
            size *= shape[labels.index(l)]
        sizes.append(size)
    return t.permute(order).reshape(sizes)


def _counting_operands(operands) -> tuple[list[Tensor], list[Tensor]]:
    """Each operand as (values, counts): a plain tensor counts 1 per entry; a (values, counts) pair
    as given (counts converted to float64)."""
    values, counts = [], []
    for n, x in enumerate(operands):
        if isinstance(x, (tuple, list)):
            if len(x) != 2 or not all(isinstance(t, Tensor) for t in x):
                raise InvalidArgumentError(
                    f"tropical_gemm.einsum: operand {n} is a {type(x).__name__} of {len(x)} items; with "
                    f"semiring='counting' an operand is a tensor of values or a (values, counts) pair of tensors")
            v, c = x
            if c.shape != v.shape:
                raise InvalidArgumentError(
                    f"tropical_gemm.einsum: operand {n}'s counts have shape {tuple(c.shape)} but its values "
                    f"{tuple(v.shape)}: each value needs its count")
            if c.device != v.device:
                raise InvalidArgumentError(f"tropical_gemm.einsum: operand {n}'s counts are on {c.device} but its "
                                           f"values on {v.device}: move them to one device")
        elif isinstance(x, Tensor):
            v, c = x, None
        else:
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand {n} is a {type(x).__name__}, not a "
                                       f"torch.Tensor or a (values, counts) pair")
        if isinstance(v, Tensor) and v.dtype not in (torch.float32, torch.float64):
            raise UnsupportedError(
                f"tropical_gemm.einsum: operand {n} has dtype {v.dtype}; counting values are float32 or "
                f"float64 (counts are float64): convert them, e.g. with .double()")
        values.append(v)
        counts.append(torch.ones(v.shape, dtype=torch.float64, device=v.device) if c is None
                      else c.to(torch.float64))
    return values, counts


def _prepare_pair(v: Tensor, c: Tensor, labels, reduced, sizes: dict):
    labels = list(labels)
    while len(set(labels)) < len(labels):  # a repeated index: its diagonal, as a view of both
        l = next(x for x in labels if labels.count(x) > 1)
        p = labels.index(l)
        q = labels.index(l, p + 1)
        v, c = v.diagonal(0, p, q), c.diagonal(0, p, q)
        labels = [x for i, x in enumerate(labels) if i not in (p, q)] + [l]
    want = [sizes[l] for l in labels]
    if list(v.shape) != want:  # size-1 dimensions broadcast
        v, c = v.expand(want), c.expand(want)
    if reduced:
        return _reduce_pair(v, c, labels, reduced)
    return (v, c), labels


def _reduce_pair(v: Tensor, c: Tensor, labels: list, reduced):
    """(v, c) with the indices `reduced` summed by the counting semiring: one product with the one
    (0, 1), so that equal maxima add their counts, as in any other step."""
    keep = _by_stride(v, labels, [l for l in labels if l not in reduced])
    gone = _by_stride(v, labels, list(reduced))
    mv, mc = _grouped(v, labels, [keep, gone]), _grouped(c, labels, [keep, gone])
    k = mv.shape[1]
    zero = torch.zeros((k, 1), dtype=v.dtype, device=v.device)
    one = torch.ones((k, 1), dtype=torch.float64, device=v.device)
    ov, oc = counting_matmul(mv, mc, zero, one)
    shape = [v.shape[labels.index(l)] for l in keep]
    return (ov.reshape(shape), oc.reshape(shape)), keep


def _contract_pair(a, la: list, b, lb: list, step):
    (av, ac), (bv, bc) = a, b
    big, lbig = (av, la) if av.numel() >= bv.numel() else (bv, lb)
    batch = _by_stride(big, lbig, step.batch)
    contracted = _by_stride(big, lbig, step.contracted)
    left = _by_stride(av, la, step.left)
    right = _by_stride(bv, lb, step.right)
    groups_a, groups_b = [batch, left, contracted], [batch, contracted, right]
    av3, ac3 = _grouped(av, la, groups_a), _grouped(ac, la, groups_a)
    bv3, bc3 = _grouped(bv, lb, groups_b), _grouped(bc, lb, groups_b)
    if av3.shape[0] == 1:
        cv, cc = counting_matmul(av3[0], ac3[0], bv3[0], bc3[0])
    else:
        cv, cc = counting_matmul(av3, ac3, bv3, bc3)
    labels = batch + left + right
    sizes = [av.shape[la.index(l)] for l in batch + left] + [bv.shape[lb.index(l)] for l in right]
    return (cv.reshape(sizes), cc.reshape(sizes)), labels


def counting_einsum(equation: str, operands, optimize):
    values, counts = _counting_operands(operands)
    check_operands(values)
    shapes = tuple(tuple(t.shape) for t in values)
    plan = plan_for(equation, shapes, optimize)
    sizes = dict(plan.sizes)
    live = [_prepare_pair(v, c, labels, reduced, sizes)
            for v, c, labels, reduced in zip(values, counts, plan.inputs, plan.reduced)]
    for step in plan.steps:
        picked = [live[p] for p in step.positions]
        live = [x for i, x in enumerate(live) if i not in step.positions]
        if len(picked) == 1:
            (v, c), labels = picked[0]
            live.append(_reduce_pair(v, c, labels, step.contracted) if step.contracted else picked[0])
        else:
            (a, la), (b, lb) = picked
            live.append(_contract_pair(a, la, b, lb, step))
    ((v, c), labels), = live
    order = [labels.index(l) for l in plan.output]
    v, c = v.permute(order), c.permute(order)
    if not plan.steps and not any(plan.reduced):
        # No product ran (a transpose or a diagonal): the README's rules still hold for the result,
        # as a product would have applied them: a value -inf has count 0, a NaN value count NaN.
        c = torch.where(v == float("-inf"), torch.zeros((), dtype=c.dtype, device=c.device), c)
        c = torch.where(v.isnan(), torch.full((), float("nan"), dtype=c.dtype, device=c.device), c)
    return v, c
