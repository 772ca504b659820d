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
from ._counting import counting_matmul
from ._native import COUNTING, InvalidArgumentError, UnsupportedError
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


# --- the counting semiring: every tensor a (values, counts) pair with the same indices -------------


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


def _counting_einsum(equation: str, operands, optimize):
    values, counts = _counting_operands(operands)
    _check_operands(values)
    shapes = tuple(tuple(t.shape) for t in values)
    plan = _plan_for(equation, shapes, optimize)
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
    return v.permute(order), c.permute(order)


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

    ``semiring="counting"`` contracts in the counting tropical semiring (max-plus with
    multiplicities) and returns ``(values, counts)``: the network's max-plus result and, for each
    entry, how many assignments attain it (each weighted by the product of its entries' counts).
    An operand is then a float32/float64 tensor of values (a count of 1 each) or a ``(values,
    counts)`` pair; e.g. the ground-state degeneracy of a spin glass is ``einsum(eq, *bond_tensors,
    semiring="counting")[1]``. Indices that one operand alone holds add the counts of equal maxima
    as well. Not differentiable.
    """
    if semiring == COUNTING:
        if isinstance(equation, Tensor):
            raise InvalidArgumentError("tropical_gemm.einsum: semiring='counting' takes the equation form, "
                                       "einsum('ij,jk->ik', a, b, semiring='counting')")
        if len(operands) == 1 and isinstance(operands[0], list):  # einsum(eq, [a, b]) as torch takes it
            operands = tuple(operands[0])
        return _counting_einsum(equation, operands, optimize)
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
