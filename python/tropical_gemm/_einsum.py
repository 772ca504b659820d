"""Tropical einsum: ``tropical_gemm.einsum("ij,jk->ik", a, b, semiring="maxplus")``.

The equation is NumPy's and torch.einsum's (letters, ``...``, ``->`` or the implicit output). The
order of pairwise contractions comes from a planner (``_einsum_plan``: opt_einsum, or cotengra
when asked for, or a path given by the caller), and becomes a program once per plan (cached):
each operand's diagonals (strided views), broadcasts (stride-0 views) and reductions, and each
pairwise step's label lists and result shape, worked out in plain Python. Running it, each step is
one call of the library's binary contraction (``tropical_contract`` / ``tropical_host_contract``
through the C ABI, ``_contract``), which classifies the labels and runs one batched product on
views of the operands; a reduction is a contraction with the semiring's one.

Without gradients, on plain tensors outside ``torch.compile``, the steps call the C ABI directly;
otherwise through the ops ``torch.ops.tropical.contract`` and ``contract_argmax``, whose gradients
(float32, float64) follow the argmax of each step through the library's backward ops, so that the
gradient of a network's optimum with respect to each input marks one optimal assignment.

In the counting semiring every tensor is a (values, counts) pair that the same program carries:
each view taken of both, each step one counting contraction (``tropical_counting_contract`` /
``tropical_host_counting_contract``, or the op ``torch.ops.tropical.counting_contract``).
"""

from __future__ import annotations


import torch
from torch import Tensor

from typing import NamedTuple

from . import _contract, _einsum_graphs, _einsum_plan
from ._checks import COUNTING_DTYPES, DTYPES, ONES, dtype_code, check_semiring_dtype, unsupported_device
from ._native import COUNTING, SEMIRING_FACTS, SEMIRINGS, InvalidArgumentError, UnsupportedError
from .functional import direct_ok, semiring_name

__all__ = ["einsum", "einsum_path", "clear_einsum_graphs"]

clear_einsum_graphs = _einsum_graphs.clear


def plan_for(equation: str, shapes, optimize) -> _einsum_plan.Plan:
    if isinstance(optimize, (list, tuple)):
        optimize = tuple(tuple(step) for step in optimize)  # hashable: plans are cached by path
    elif not isinstance(optimize, str):  # an optimizer object: planned afresh every time
        return _einsum_plan.make_plan.__wrapped__(equation, shapes, optimize)
    return _einsum_plan.make_plan(equation, shapes, optimize)


def check_operands(operands) -> None:
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
            dtype_code(t, f"tropical_gemm.einsum: operand {n}")  # raises, with the conversion to use
        if first is None:
            first = t
        elif t.dtype != first.dtype:
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand 0 is {first.dtype} but operand {n} is {t.dtype}: "
                                       f"every operand must have one dtype; convert them, e.g. with .to(torch.float32)")
        elif t.device != first.device:
            raise InvalidArgumentError(f"tropical_gemm.einsum: operand 0 is on {first.device} but operand {n} is on "
                                       f"{t.device}: every operand must be on one device; move them with .to(device)")


def _counting_pairs(operands) -> tuple[list[Tensor], list[Tensor]]:
    """Each counting operand as (values, counts): a plain tensor counts 1 per entry; a (values,
    counts) pair as given (counts converted to float64)."""
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
        if v.dtype not in COUNTING_DTYPES:
            raise UnsupportedError(
                f"tropical_gemm.einsum: operand {n} has dtype {v.dtype}; counting values are float32 or "
                f"float64 (counts are float64): convert them, e.g. with .double()")
        values.append(v)
        counts.append(torch.ones(v.shape, dtype=torch.float64, device=v.device) if c is None
                      else c.to(torch.float64))
    return values, counts


def _each(x, fn, *args):
    """fn(x, *args) for a tensor; for a counting (values, counts) pair, the pair of fn of each."""
    return (fn(x[0], *args), fn(x[1], *args)) if type(x) is tuple else fn(x, *args)


class _Program(NamedTuple):
    """A plan as the tensors' work, with every index list worked out once: per operand its
    diagonals (pairs of dimensions, in turn), the shape it broadcasts to (or None) and its
    reduction (or None); per step the slots it reads (the operands first, then each step's result
    in turn; -1: the semiring's one, for a reduction), each tensor's labels and the result's shape;
    the slot of the result and its permutation into the output's order (or None)."""

    prepare: tuple  # per operand: (diagonals, expand_to, reduction or None)
    steps: tuple  # (slot a, slot b, la, lb, lc, shape of C, shape of the one or None)
    result: int
    final: tuple | None
    # per operand, then per step: [True] once the GPU refused its strides (_contract.run), so
    # that later runs copy first instead of asking again
    refused: tuple


def _reduction(labels: tuple, gone: tuple, sizes: dict):
    """A reduction of `gone` as a contraction with the semiring's one (of gone's shape): its
    (labels, gone, kept labels, C's shape, the one's shape), and the kept labels."""
    keep = tuple(l for l in labels if l not in gone)
    return (labels, gone, keep, tuple(sizes[l] for l in keep), tuple(sizes[l] for l in gone)), keep


def _make_program(plan: _einsum_plan.Plan, shapes) -> _Program:
    sizes = dict(plan.sizes)
    prepare, live = [], []
    for labels, reduced, shape in zip(plan.inputs, plan.reduced, shapes):
        labels, shape, diagonals = list(labels), list(shape), []
        while len(set(labels)) < len(labels):  # a repeated index: its diagonal (torch puts it last)
            l = next(x for x in labels if labels.count(x) > 1)
            p = labels.index(l)
            q = labels.index(l, p + 1)
            diagonals.append((p, q))
            labels = [x for i, x in enumerate(labels) if i not in (p, q)] + [l]
            shape = [x for i, x in enumerate(shape) if i not in (p, q)] + [shape[p]]
        want = [sizes[l] for l in labels]
        labels = tuple(labels)
        reduction = None
        if reduced:
            reduction, labels = _reduction(labels, tuple(reduced), sizes)
        prepare.append((tuple(diagonals), tuple(want) if want != shape else None, reduction))
        live.append(labels)
    slots = list(range(len(live)))  # the slot of each operand still to contract, in the plan's list
    steps, next_slot = [], len(live)
    for step in plan.steps:
        picked = [(slots[p], live[p]) for p in step.positions]
        slots = [x for i, x in enumerate(slots) if i not in step.positions]
        live = [x for i, x in enumerate(live) if i not in step.positions]
        if len(picked) == 1:
            (slot, labels), = picked
            if step.contracted:
                (la, gone, keep, shape, ones), labels = _reduction(labels, step.contracted, sizes)
                steps.append((slot, -1, la, gone, keep, shape, ones))
                slot = next_slot
                next_slot += 1
        else:
            (slot_a, la), (slot_b, lb) = picked
            labels = step.batch + step.left + step.right
            steps.append((slot_a, slot_b, la, lb, labels, tuple(sizes[l] for l in labels), None))
            slot = next_slot
            next_slot += 1
        slots.append(slot)
        live.append(labels)
    (labels,), (slot,) = live, slots
    order = tuple(labels.index(l) for l in plan.output)
    return _Program(tuple(prepare), tuple(steps), slot, order if order != tuple(range(len(order))) else None,
                    tuple([False] for _ in range(len(prepare) + len(steps))))


_PROGRAMS: dict = {}  # id(plan) -> (plan, its program); holding the plan keeps its id unique


def _program_for(plan: _einsum_plan.Plan, shapes) -> _Program:
    found = _PROGRAMS.get(id(plan))
    if found is not None and found[0] is plan:
        return found[1]
    program = _make_program(plan, shapes)
    if len(_PROGRAMS) >= 512:
        _PROGRAMS.clear()
    _PROGRAMS[id(plan)] = (plan, program)
    return program


def _plan_and_program(equation: str, shapes, optimize):
    plan = plan_for(equation, shapes, optimize)
    return plan, _program_for(plan, shapes)


# torch.compile takes the plan and its program as a constant: the parser, planner and program run
# once, outside the graph. torch.compiler.assume_constant_result(fn) does exactly this, but imports
# torch._dynamo on the spot (about 3 s, which `import tropical_gemm` must not pay): all it does to
# fn is set this attribute, which test_einsum.py checks against PyTorch's own function.
_traced_plan_and_program = _plan_and_program
_traced_plan_and_program._dynamo_marked_constant = True


def _plain(operands) -> bool:
    """Whether the steps may call the C ABI directly: plain tensors, no gradient wanted, no tracing,
    no mode or transform that must see the ops (as tropical_gemm.matmul decides)."""
    return all(type(t) is Tensor for t in operands) and direct_ok(operands[0], operands[0])


def einsum(equation: str, *operands: Tensor, semiring: str = "maxplus", optimize="auto",
           cuda_graph: bool = False) -> Tensor:
    """The tropical einsum: ``(+)`` over every index the output lacks, of the ``(x)`` product of the
    operands' entries, e.g. ``einsum("ij,jk->ik", a, b)`` is ``max_j a[i,j] + b[j,k]`` in MaxPlus.

    ``equation`` follows :func:`torch.einsum` (letters, ``...``, ``->``; without ``->`` the output
    is the indices that appear once, in alphabetical order, after ``...``); an index repeated in
    one operand takes its diagonal; a size of 1 broadcasts. For networks of more than 52 indices,
    any non-ASCII character is an index too (``opt_einsum.get_symbol(n)`` makes them), or use
    the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` with ints. ``semiring`` is any of
    :func:`tropical_gemm.matmul`'s, or ``"counting"`` (below); the operands share one dtype and one
    device (CUDA or CPU): float32, float64, int32 or int64, and for ``semiring="orand"`` (OR, AND)
    bool or uint8 (nonzero is true; the result has their dtype and holds 0 and 1), e.g.
    ``einsum("ij,jk->ik", adj, adj, semiring="orand")``: the pairs joined by a path of two edges.
    ``semiring="logplus"`` (float32, float64) is the log semiring: the operands are log-factors and
    the result is ``log`` of the sum over every index the output lacks of ``exp`` of their sum, e.g.
    ``einsum("ij,jk,k->", *log_factors, semiring="logplus")`` is a tensor network's log partition
    function (a summed index one operand alone holds is a log-sum-exp over it; a size-1 dimension
    broadcast to n counts n times, adding log n, as ``torch.logsumexp`` of the explicit broadcast does).
    ``optimize`` chooses the order of pairwise contractions: an opt_einsum strategy (``"auto"``,
    ``"greedy"``, ``"optimal"``, ``"dp"``, ``"random-greedy"``, ``"auto-hq"``, ...),
    ``"cotengra"`` (when cotengra is installed), an opt_einsum or cotengra optimizer object, or a
    path such as ``[(0, 1), (0, 1)]`` in opt_einsum's form.

    Differentiable for float32 and float64: for a MaxPlus (or MinPlus) network with a scalar
    result, the gradient with respect to each operand is 1 on the entries of one optimal
    assignment and 0 elsewhere; for a LogPlus one it is each entry's marginal probability (the
    softmax weights, through each step's kept result). Traceable by ``torch.compile(fullgraph=True)``.

    ``semiring="counting"`` contracts in the counting tropical semiring (max-plus with
    multiplicities) and returns ``(values, counts)``: the network's max-plus result and, for each
    entry, how many assignments attain it (each weighted by the product of its entries' counts).
    An operand is then a float32/float64 tensor of values (a count of 1 each) or a ``(values,
    counts)`` pair (the counts converted to float64), the two forms mixed as one likes; e.g. the
    ground-state degeneracy of a spin glass is ``einsum(eq, *bond_tensors, semiring="counting")[1]``,
    and ``values, counts = einsum("ij,jk->ik", a, (b, b_counts), semiring="counting")``. The values
    come back in the operands' dtype, the counts as float64. Indices that one operand alone holds
    add the counts of equal maxima as well. Not differentiable.

    ``cuda_graph=True`` is for a network evaluated again and again with operands of the same shapes
    (new values each time), on CUDA without gradients: the first call runs the steps and captures
    them into a CUDA graph, and each later call copies the operands into the graph's inputs and
    replays it, one launch instead of a host round trip per step (a network of hundreds of small
    steps runs many times faster). The graph keeps its inputs and intermediates on the GPU until it
    is evicted (the 8 most recently used are kept) or :func:`clear_einsum_graphs` is called.
    """
    counting = semiring == COUNTING
    if counting and isinstance(equation, Tensor):
        raise InvalidArgumentError("tropical_gemm.einsum: semiring='counting' takes the equation form, "
                                   "einsum('ij,jk->ik', a, b, semiring='counting')")
    if isinstance(equation, Tensor):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _einsum_plan.sublist_equation((equation, *operands))
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple) if not counting else list):
        operands = tuple(operands[0])  # einsum(eq, [a, b]) as torch takes it
    if counting:
        values, counts = _counting_pairs(operands)
        check_operands(values)
        operands = tuple(zip(values, counts))
        first = values[0]
    else:
        s = semiring_name(semiring)
        check_operands(operands)
        # OrAnd takes booleans and nothing else does: checked here, since an einsum of one operand that
        # reduces nothing runs no product that would check it.
        check_semiring_dtype("einsum", SEMIRINGS[s], operands[0])
        first = operands[0]
    tensors = values + counts if counting else operands
    shapes = tuple(tuple(t.shape) for t in (values if counting else operands))
    compiling = torch.compiler.is_compiling()
    setup = _traced_plan_and_program if compiling else _plan_and_program
    plan, program = setup(equation, shapes, optimize)
    grad = not counting and torch.is_grad_enabled() and any(t.requires_grad for t in operands)
    direct = not grad and not compiling and _plain(tensors)
    t_code = DTYPES[first.dtype]
    if counting:
        s = s_code = one = selects = None  # the pairs' products and one are their own (step, ones)
        to_01 = False
    else:
        s_code = SEMIRINGS[s]
        # Where (+) selects a term, the gradient follows each step's argmax; LogPlus's contract keeps
        # its C for the gradient instead.
        selects = SEMIRING_FACTS[s].selects
        one = ONES[s, first.dtype]  # by which a product reduces an index
        # An OrAnd result holds 0 and 1 (as matmul's does). Where no step runs (one operand, nothing
        # reduced) it would be a view of the operand: uint8 trues other than 1 become 1.
        to_01 = s == "orand" and first.dtype == torch.uint8 and not program.steps and program.prepare[0][2] is None

    def step(a, b, la, lb, lc, shape, refused):
        if counting:
            if direct:
                return _contract.run_counting(a, b, la, lb, lc, shape, t_code, refused)
            return _contract.counting_contract(a[0], a[1], b[0], b[1], la, lb, lc)
        if direct:
            return _contract.run(a, b, la, lb, lc, shape, s_code, t_code, False, refused)
        if grad and selects and (a.requires_grad or b.requires_grad):
            return _contract.contract_argmax(a, b, la, lb, lc, s)[0]
        return _contract.contract(a, b, la, lb, lc, s)

    def ones(shape):
        if counting:  # the one (0, 1)
            return (torch.zeros(shape, dtype=first.dtype, device=first.device),
                    torch.ones(shape, dtype=torch.float64, device=first.device))
        return torch.full(shape, one, dtype=first.dtype, device=first.device)

    def execute(operands):
        values, refused = [], iter(program.refused)
        for t, (diagonals, expand_to, reduction), memo in zip(operands, program.prepare, refused):
            for p, q in diagonals:  # views
                t = _each(t, Tensor.diagonal, 0, p, q)
            if expand_to is not None:  # size-1 dimensions broadcast: a stride-0 view
                t = _each(t, Tensor.expand, expand_to)
            if reduction is not None:
                la, gone, keep, shape, ones_shape = reduction
                t = step(t, ones(ones_shape), la, gone, keep, shape, memo)
            values.append(t)
        for (slot_a, slot_b, la, lb, lc, shape, ones_shape), memo in zip(program.steps, refused):
            a = values[slot_a]
            values[slot_a] = None  # freed as soon as no step needs it
            if slot_b < 0:
                b = ones(ones_shape)
            else:
                b = values[slot_b]
                values[slot_b] = None
            values.append(step(a, b, la, lb, lc, shape, memo))
        result = values[program.result]
        if to_01:
            result = result.ne(0).to(torch.uint8)
        return result if program.final is None else _each(result, Tensor.permute, program.final)

    if counting:  # no CUDA graphs: the pairs run step by step
        v, c = execute(operands)
        if not program.steps and all(p[2] is None for p in program.prepare):
            # No product ran (a transpose or a diagonal): the README's rules still hold for the result,
            # as a product would have applied them: a value -inf has count 0, a NaN value count NaN.
            c = torch.where(v == float("-inf"), torch.zeros((), dtype=c.dtype, device=c.device), c)
            c = torch.where(v.isnan(), torch.full((), float("nan"), dtype=c.dtype, device=c.device), c)
        return v, c
    if cuda_graph:
        _einsum_graphs.check(operands, grad, direct)
        return _einsum_graphs.replay((id(program), s_code, first.dtype, first.device), program, operands, execute)
    return execute(operands)


def einsum_path(equation: str, *shapes, optimize="auto"):
    """The plan :func:`einsum` would follow for operands of these shapes (tuples, or tensors):
    its pairwise steps, each with its batch, left, right and contracted indices (as ints: ASCII
    letters by their position in A..Za..z, other characters by their code point, the dimensions
    of '...' from ``ELLIPSIS_BASE`` on; ``index_name`` in ``_einsum_plan`` names them)."""
    shapes = tuple(tuple(s.shape) if isinstance(s, Tensor) else tuple(s) for s in shapes)
    return plan_for(equation, shapes, optimize)
