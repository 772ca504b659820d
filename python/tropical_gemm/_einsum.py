"""Tropical einsum: ``tropical_gemm.einsum("ij,jk->ik", a, b, semiring="maxplus")``.

The equation is NumPy's and torch.einsum's (letters, ``...``, ``->`` or the implicit output). The
order of pairwise contractions comes from a planner (``_einsum_plan``: opt_einsum, or cotengra
when asked for, or a path given by the caller). Each operand is prepared first: its diagonals
taken where an index repeats (a strided view), its size-1 dimensions broadcast (a stride-0 view),
and the indices that it alone holds, and the output lacks, reduced with the semiring's sum. Each
pairwise contraction then runs as one batched product ``(batch, M, K) (x) (batch, K, N)`` through
:func:`tropical_gemm.matmul`: the operands are permuted (a view) with the indices of each group
in the order of their strides, so that the reshape into three dimensions is a view wherever the
strides allow, and a copy only where they do not.

Gradients (float32, float64) flow through the argmax of each product (the library's backward
ops), through the views, and through the reductions, which are products too (with the semiring's
one), so that the gradient of a network's optimum with respect to each input marks the entries
of one optimal assignment.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from . import _einsum_plan
from ._checks import DTYPES, _dtype_code, unsupported_device
from ._native import InvalidArgumentError
from .functional import matmul, semiring_name

__all__ = ["einsum", "einsum_path"]


def _plan_for(equation: str, shapes, optimize) -> _einsum_plan.Plan:
    if isinstance(optimize, (list, tuple)):
        optimize = tuple(tuple(step) for step in optimize)  # hashable: plans are cached by path
    elif not isinstance(optimize, str):  # an optimizer object: planned afresh every time
        return _einsum_plan.make_plan.__wrapped__(equation, shapes, optimize)
    return _einsum_plan.make_plan(equation, shapes, optimize)


# torch.compile takes the plan as a constant: the parser and planner run once, outside the graph.
# torch.compiler.assume_constant_result(fn) does exactly this, but imports torch._dynamo on the spot
# (about 3 s, which `import tropical_gemm` must not pay): all it does to fn is set this attribute,
# which test_einsum.py checks against PyTorch's own function.
_traced_plan = _plan_for
_traced_plan._dynamo_marked_constant = True


def _check_operands(operands) -> None:
    if not operands:
        raise InvalidArgumentError("tropical_gemm.einsum needs at least one operand after the equation")
    first = None
    for n, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand {n} is a {type(t).__name__}, not a torch.Tensor; "
                                       f"convert it with torch.as_tensor")
        if t.device.type not in ("cpu", "cuda"):
            raise unsupported_device("einsum", t)
        if t.dtype not in DTYPES:
            _dtype_code(t, f"tropical_gemm.einsum: operand {n}")  # raises, with the conversion to use
        if first is None:
            first = t
        elif t.dtype != first.dtype:
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand 0 is {first.dtype} but operand {n} is {t.dtype}: "
                                       f"every operand must have one dtype; convert them, e.g. with .to(torch.float32)")
        elif t.device != first.device:
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand 0 is on {first.device} but operand {n} is on "
                                       f"{t.device}: every operand must be on one device; move them with .to(device)")


def _one(semiring: str, dtype: torch.dtype):
    """The semiring's one (x (x) one = x), by which a product reduces an index."""
    if semiring in ("maxplus", "minplus"):
        return 0
    if semiring == "maxmul":
        return 1
    if semiring == "orand":
        return True  # true AND x = x
    top = semiring == "maxmin"  # min(x, +inf) = x; MinMax: max(x, -inf) = x
    if dtype.is_floating_point:
        return math.inf if top else -math.inf
    info = torch.iinfo(dtype)
    return info.max if top else info.min


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


def _reduce(t: Tensor, labels: list, reduced, semiring: str):
    """t with the indices `reduced` summed by the semiring: one product (M, K) (x) one(K, 1)."""
    keep = _by_stride(t, labels, [l for l in labels if l not in reduced])
    gone = _by_stride(t, labels, list(reduced))
    matrix = _grouped(t, labels, [keep, gone])
    ones = torch.full((matrix.shape[1], 1), _one(semiring, t.dtype), dtype=t.dtype, device=t.device)
    out = matmul(matrix, ones, semiring)
    return out.reshape([t.shape[labels.index(l)] for l in keep]), keep


def _prepare(t: Tensor, labels, reduced, sizes: dict, semiring: str):
    labels = list(labels)
    while len(set(labels)) < len(labels):  # a repeated index: its diagonal, as a view
        l = next(x for x in labels if labels.count(x) > 1)
        p = labels.index(l)
        q = labels.index(l, p + 1)
        t = t.diagonal(0, p, q)
        labels = [x for i, x in enumerate(labels) if i not in (p, q)] + [l]
    want = [sizes[l] for l in labels]
    if list(t.shape) != want:  # size-1 dimensions broadcast: a stride-0 view
        t = t.expand(want)
    if reduced:
        t, labels = _reduce(t, labels, reduced, semiring)
    return t, labels


def _contract(a: Tensor, la: list, b: Tensor, lb: list, step, semiring: str):
    """One pairwise contraction as one (batched) product; returns the result and its indices."""
    big, lbig = (a, la) if a.numel() >= b.numel() else (b, lb)
    batch = _by_stride(big, lbig, step.batch)  # the shared groups follow the larger operand's layout
    contracted = _by_stride(big, lbig, step.contracted)
    left = _by_stride(a, la, step.left)
    right = _by_stride(b, lb, step.right)
    a3 = _grouped(a, la, [batch, left, contracted])
    b3 = _grouped(b, lb, [batch, contracted, right])
    if a3.shape[0] == 1:
        c = matmul(a3[0], b3[0], semiring)
    else:
        c = matmul(a3, b3, semiring)
    labels = batch + left + right
    sizes = [a.shape[la.index(l)] for l in batch + left] + [b.shape[lb.index(l)] for l in right]
    return c.reshape(sizes), labels


def einsum(equation: str, *operands: Tensor, semiring: str = "maxplus", optimize="auto") -> Tensor:
    """The tropical einsum: ``(+)`` over every index the output lacks, of the ``(x)`` product of the
    operands' entries, e.g. ``einsum("ij,jk->ik", a, b)`` is ``max_j a[i,j] + b[j,k]`` in MaxPlus.

    ``equation`` follows :func:`torch.einsum` (letters, ``...``, ``->``; without ``->`` the output
    is the indices that appear once, in alphabetical order, after ``...``); an index repeated in
    one operand takes its diagonal; a size of 1 broadcasts. For networks of more than 52 indices,
    any non-ASCII character is an index too (``opt_einsum.get_symbol(n)`` makes them), or use
    the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` with ints. ``semiring`` is any of
    :func:`tropical_gemm.matmul`'s; the operands share one dtype (float32, float64, int32, int64)
    and one device (CUDA or CPU). ``optimize`` chooses the order of pairwise contractions: an
    opt_einsum strategy (``"auto"``, ``"greedy"``, ``"optimal"``, ``"dp"``, ``"random-greedy"``,
    ``"auto-hq"``, ...), ``"cotengra"`` (when cotengra is installed), an opt_einsum or cotengra
    optimizer object, or a path such as ``[(0, 1), (0, 1)]`` in opt_einsum's form.

    Differentiable for float32 and float64: for a MaxPlus (or MinPlus) network with a scalar
    result, the gradient with respect to each operand is 1 on the entries of one optimal
    assignment and 0 elsewhere. Traceable by ``torch.compile(fullgraph=True)``.
    """
    if isinstance(equation, Tensor):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _einsum_plan.sublist_equation((equation, *operands))
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):  # einsum(eq, [a, b]) as torch takes it
        operands = tuple(operands[0])
    s = semiring_name(semiring)
    _check_operands(operands)
    shapes = tuple(tuple(t.shape) for t in operands)
    plan = _traced_plan(equation, shapes, optimize) if torch.compiler.is_compiling() else _plan_for(
        equation, shapes, optimize)
    sizes = dict(plan.sizes)
    live = [_prepare(t, labels, reduced, sizes, s) for t, labels, reduced in zip(operands, plan.inputs, plan.reduced)]
    for step in plan.steps:
        picked = [live[p] for p in step.positions]
        live = [x for i, x in enumerate(live) if i not in step.positions]
        if len(picked) == 1:
            t, labels = picked[0]
            live.append(_reduce(t, labels, step.contracted, s) if step.contracted else (t, labels))
        else:
            (a, la), (b, lb) = picked
            live.append(_contract(a, la, b, lb, step, s))
    (t, labels), = live
    return t.permute([labels.index(l) for l in plan.output])


def einsum_path(equation: str, *shapes, optimize="auto"):
    """The plan :func:`einsum` would follow for operands of these shapes (tuples, or tensors):
    its pairwise steps, each with its batch, left, right and contracted indices (as ints: ASCII
    letters by their position in A..Za..z, other characters by their code point, the dimensions
    of '...' from ``ELLIPSIS_BASE`` on; ``index_name`` in ``_einsum_plan`` names them)."""
    shapes = tuple(tuple(s.shape) if isinstance(s, Tensor) else tuple(s) for s in shapes)
    return _plan_for(equation, shapes, optimize)
