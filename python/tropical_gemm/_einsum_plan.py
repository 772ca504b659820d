"""The plan of a tropical einsum, in plain Python (no tensors): the equation parsed, the order of
pairwise contractions from a path planner, and each contraction classified into batch, left,
right and contracted indices.

Indices are ints: an ASCII letter is its position in ``A..Za..z`` (0..51, which is also the order
of the implicit output, as NumPy and torch.einsum sort it); any non-ASCII character (as opt_einsum
allows, for networks of more than 52 indices) is its code point; the dimensions that ``...``
stands for get ``ELLIPSIS_BASE``, ``ELLIPSIS_BASE + 1``, ... from the left. A plan is made of
tuples of ints and strings only, so that ``torch.compile`` can take it as a constant (``einsum``
asks for it through ``torch.compiler.assume_constant_result``): the planner never runs inside a
traced graph.
"""

from __future__ import annotations

import functools
import string
from typing import NamedTuple

from ._native import InvalidArgumentError, UnsupportedError

LETTERS = string.ascii_uppercase + string.ascii_lowercase
ELLIPSIS_BASE = 0x110000  # the first index of the dimensions that "..." stands for: above every code point
SURROGATES = range(0xD800, 0xE000)  # no characters: never an index


def _error(equation: str, what: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"tropical_gemm.einsum({equation!r}): {what}")


# --- the equation -------------------------------------------------------------------------------


def _terms(equation: str, term: str, where: str) -> tuple[list[int], bool]:
    """The letters of one term as indices, with -1 where its "..." stands; whether it has one."""
    if term.count("...") > 1:
        raise _error(equation, f"{where} has '...' more than once; it may stand in a term once at most")
    labels: list[int] = []
    rest = term.replace("...", "\0")
    for ch in rest:
        if ch == "\0":
            labels.append(-1)
        elif ch in LETTERS:
            labels.append(LETTERS.index(ch))
        elif ord(ch) > 127:
            labels.append(ord(ch))
        elif ch == ".":
            raise _error(equation, f"{where} has a '.' that is not part of '...'")
        else:
            raise _error(equation, f"{where} has {ch!r}; indices are the letters a-z and A-Z, or non-ASCII "
                                   f"characters (and '...')")
    return labels, -1 in labels


def parse(equation: str, ndims: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The indices of each operand and of the output, with "..." expanded for operands of `ndims`
    dimensions (right-aligned, as NumPy broadcasts them)."""
    if not isinstance(equation, str):
        raise InvalidArgumentError(f"tropical_gemm.einsum: the equation must be a str, not {type(equation).__name__}")
    spec = equation.replace(" ", "")
    if spec.count("->") > 1:
        raise _error(equation, "'->' appears more than once; write 'inputs->output'")
    lhs, arrow, rhs = spec.partition("->")
    if not arrow and ">" in spec or "-" in lhs:
        raise _error(equation, "a stray '-' or '>': the output follows '->'")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise _error(equation, f"the equation has {len(terms)} operand term(s) but {len(ndims)} operand(s) were given")
    inputs, ellipsis_rank = [], 0
    for n, (term, ndim) in enumerate(zip(terms, ndims)):
        labels, has_ellipsis = _terms(equation, term, f"operand {n} ('{term}')")
        letters = len(labels) - has_ellipsis
        if letters > ndim or (not has_ellipsis and letters != ndim):
            raise _error(equation, f"operand {n} has {ndim} dimension(s) but its term '{term}' names {letters}"
                         + ("" if has_ellipsis else "; add '...' for the others, or fix the term"))
        ellipsis_rank = max(ellipsis_rank, ndim - letters if has_ellipsis else 0)
        inputs.append((labels, ndim - letters))
    expanded = []
    for labels, extra in inputs:
        dots = tuple(range(ELLIPSIS_BASE + ellipsis_rank - extra, ELLIPSIS_BASE + ellipsis_rank))
        at = labels.index(-1) if -1 in labels else len(labels)
        expanded.append(tuple(labels[:at]) + dots + tuple(labels[at + 1:]))
    dots = tuple(range(ELLIPSIS_BASE, ELLIPSIS_BASE + ellipsis_rank))
    if arrow:
        out_labels, has_ellipsis = _terms(equation, rhs, f"the output ('{rhs}')")
        at = out_labels.index(-1) if has_ellipsis else len(out_labels)
        output = tuple(out_labels[:at]) + (dots if has_ellipsis else ()) + tuple(out_labels[at + 1:])
        seen = {l for term in expanded for l in term}
        for l in output:
            if output.count(l) > 1:
                raise _error(equation, f"the output names '{index_name(l)}' twice; an output index appears once")
            if l not in seen:
                raise _error(equation, f"the output index '{index_name(l)}' appears in no operand")
    else:  # implicit: "..." first, then the letters that appear once, in alphabetical order
        counts: dict[int, int] = {}
        for term in expanded:
            for l in term:
                counts[l] = counts.get(l, 0) + 1
        output = dots + tuple(sorted(l for l, c in counts.items() if c == 1 and l < ELLIPSIS_BASE))
    return tuple(expanded), output


def index_name(label: int) -> str:
    """An index as the equation wrote it: its character, or '...'[d] for a dimension of the ellipsis."""
    if label < len(LETTERS):
        return LETTERS[label]
    return chr(label) if label < ELLIPSIS_BASE else f"...[{label - ELLIPSIS_BASE}]"


def sublist_equation(arguments) -> tuple[str, tuple]:
    """The equation and operands of einsum's sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]) (as
    NumPy and torch.einsum take it): ints as indices (0..51 are the letters A..Za..z, larger ones
    other characters), Ellipsis as '...'."""
    arguments = list(arguments)
    output = arguments.pop() if len(arguments) % 2 else None  # an odd count: the last is the output's
    operands, terms = arguments[0::2], arguments[1::2]
    if any(not isinstance(x, (list, tuple)) for x in terms + ([] if output is None else [output])):
        raise InvalidArgumentError("tropical_gemm.einsum: the sublist form alternates operands and their index lists "
                                   "(einsum(a, [0, 1], b, [1, 2], [0, 2])); an index list is missing")

    def symbol(x) -> str:
        if x is Ellipsis:
            return "..."
        if not isinstance(x, int) or x < 0:
            raise InvalidArgumentError(f"tropical_gemm.einsum: sublist index {x!r} is not a non-negative int (or ...)")
        if x < len(LETTERS):
            return LETTERS[x]
        code = 0x100 + x - len(LETTERS)
        code += len(SURROGATES) if code >= SURROGATES.start else 0
        if code >= ELLIPSIS_BASE:
            raise InvalidArgumentError(f"tropical_gemm.einsum: sublist index {x} is too large")
        return chr(code)

    def term(sub) -> str:
        return "".join(symbol(x) for x in sub)

    equation = ",".join(term(t) for t in terms) + ("" if output is None else "->" + term(output))
    return equation, tuple(operands)


def sizes_of(equation: str, inputs, shapes) -> dict[int, int]:
    """The size of every index; a size of 1 broadcasts (as torch.einsum allows), any other
    mismatch is an error that names the index and the operands."""
    sizes: dict[int, int] = {}
    first: dict[int, int] = {}
    for n, (labels, shape) in enumerate(zip(inputs, shapes)):
        for label, size in zip(labels, shape):
            known = sizes.get(label)
            if known is None or known == 1:
                sizes[label] = size
                first.setdefault(label, n)
                if known == 1:
                    first[label] = n
            elif size != known and size != 1:
                raise _error(equation, f"index '{index_name(label)}' has size {known} in operand {first[label]} "
                             f"but {size} in operand {n}; sizes of one index must match (or be 1, which broadcasts)")
    return sizes


# --- the path -----------------------------------------------------------------------------------




def _optimizer(optimize):
    """What opt_einsum.contract_path takes for `optimize`: its own strategies by name, a path, or
    a cotengra optimizer for "cotengra" (or one the caller made)."""
    if optimize == "cotengra":
        try:
            import cotengra
        except ImportError:
            raise UnsupportedError("tropical_gemm.einsum(optimize='cotengra') needs cotengra, which is not installed: "
                                   "pip install cotengra (or use optimize='auto', 'greedy', 'random-greedy', ...)") from None
        return cotengra.HyperOptimizer(max_repeats=32, progbar=False)
    return optimize


def contraction_path(equation: str, inputs, output, sizes, optimize) -> list[tuple[int, ...]]:
    """The order of contractions, in opt_einsum's form: each step names positions in the list of
    operands still to contract; they leave it and their result goes to its end."""
    n = len(inputs)
    if isinstance(optimize, (list, tuple)):
        return _checked_path(equation, [tuple(step) for step in optimize], n)
    if n == 1:
        return [(0,)]
    if n == 2:
        return [(0, 1)]
    try:
        import opt_einsum
    except ImportError:
        raise UnsupportedError("tropical_gemm.einsum needs opt_einsum to order the contractions of 3 or more "
                               "operands: pip install opt_einsum (or pass a path as optimize=[(0, 1), ...])") from None
    # opt_einsum's own symbols, one per index (it reads no '...').
    symbol = {l: opt_einsum.get_symbol(n) for n, l in enumerate(sorted(sizes))}
    spec = ",".join("".join(symbol[l] for l in t) for t in inputs) + "->" + "".join(symbol[l] for l in output)
    shapes = [tuple(sizes[l] for l in t) for t in inputs]
    try:
        path, _ = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize=_optimizer(optimize))
    except (KeyError, TypeError, ValueError) as e:
        raise _error(equation, f"the planner refused optimize={optimize!r}: {e}; use 'auto', 'greedy', 'optimal', "
                     f"'dp', 'random-greedy', 'cotengra', a path, or an opt_einsum/cotengra optimizer") from None
    return [tuple(step) for step in path]


def _checked_path(equation: str, path, n: int) -> list[tuple[int, ...]]:
    remaining = n
    for step in path:
        if not step or any(not isinstance(p, int) or p < 0 or p >= remaining for p in step) or len(set(step)) != len(step):
            raise _error(equation, f"the path step {step} must name distinct positions among the {remaining} "
                         f"operands left at that point (0..{remaining - 1})")
        remaining -= len(step) - 1
    if remaining != 1:
        raise _error(equation, f"the path {path} leaves {remaining} operands; it must contract all {n} into one")
    return path


# --- the plan -----------------------------------------------------------------------------------


class Step(NamedTuple):
    """One contraction of the operands at `positions` of the list of operands left (they leave it,
    the result goes to its end). Two operands: A's indices are batch + left + contracted, B's
    batch + contracted + right (each in any order), the result's batch + left + right. One operand
    (a path may name one alone): it keeps `left` and reduces `contracted` with the semiring's sum."""

    positions: tuple[int, ...]
    batch: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    contracted: tuple[int, ...]


class Plan(NamedTuple):
    inputs: tuple[tuple[int, ...], ...]  # each operand's indices ("..." expanded)
    output: tuple[int, ...]
    sizes: tuple[tuple[int, int], ...]  # (index, size): sizes after broadcasting
    reduced: tuple[tuple[int, ...], ...]  # per operand, the indices it alone holds and the output lacks
    steps: tuple[Step, ...]  # in order; after them one operand is left


def _pairwise(path: list[tuple[int, ...]], n: int) -> list[tuple[int, ...]]:
    """The path with each step of three or more operands written as pairwise steps, in its order."""
    out = []
    for step in path:
        if len(step) <= 2:
            out.append(step)
            n -= len(step) - 1
            continue
        first, *others = step
        pending = list(others[1:])
        a, b = first, others[0]
        while True:
            out.append((a, b))
            n -= 1
            # The positions still named by this step, once a and b have left the list.
            pending = [p - (p > a) - (p > b) for p in pending]
            if not pending:
                break
            a, b = pending.pop(0), n - 1  # the next operand with the running result (at the end)
    return out


def _distinct(labels: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(labels))


def _check_diagonals(equation: str, inputs, shapes) -> None:
    for n, (labels, shape) in enumerate(zip(inputs, shapes)):
        for l in set(labels):
            dims = [shape[d] for d, x in enumerate(labels) if x == l]
            if len(set(dims)) > 1:
                raise _error(equation, f"operand {n} repeats index '{index_name(l)}' over dimensions of sizes {dims}; "
                             f"a repeated index takes a diagonal, so those sizes must be equal")


@functools.lru_cache(maxsize=512)
def make_plan(equation: str, shapes: tuple[tuple[int, ...], ...], optimize) -> Plan:
    """The plan for operands of `shapes`; `optimize` is a strategy's name or a path (a tuple of
    tuples, so that plans are cached by it)."""
    inputs, output = parse(equation, tuple(len(s) for s in shapes))
    _check_diagonals(equation, inputs, shapes)
    sizes = sizes_of(equation, inputs, shapes)
    # Each operand as the planner sees it: its diagonals taken (each index once) and the indices it
    # alone holds, which the output lacks, reduced first.
    counts: dict[int, int] = {}
    for t in inputs:
        for l in set(t):
            counts[l] = counts.get(l, 0) + 1
    reduced = tuple(tuple(l for l in _distinct(t) if counts[l] == 1 and l not in output) for t in inputs)
    live = [tuple(l for l in _distinct(t) if l not in r) for t, r in zip(inputs, reduced)]
    path = _pairwise(contraction_path(equation, live, output, sizes, optimize), len(live))
    steps = []
    for step in path:
        rest = [t for i, t in enumerate(live) if i not in step]
        keep = set(output).union(*rest)
        if len(step) == 1:
            (a,) = [live[p] for p in step]
            kept = tuple(l for l in a if l in keep)
            steps.append(Step(step, (), kept, (), tuple(l for l in a if l not in keep)))
            live = rest + [kept]
            continue
        a, b = live[step[0]], live[step[1]]
        batch = tuple(l for l in a if l in b and l in keep)
        left = tuple(l for l in a if l not in b and l in keep)
        right = tuple(l for l in b if l not in a and l in keep)
        contracted = tuple(l for l in a if l in b and l not in keep)
        # An index that one of them alone holds is needed later: it was either reduced when its
        # operand was prepared, or it lives on in another operand or the output.
        assert all(l in keep for l in a + b if l not in contracted), "einsum plan: an index would be lost"
        steps.append(Step(step, batch, left, right, contracted))
        live = rest + [batch + left + right]
    return Plan(tuple(inputs), output, tuple(sorted(sizes.items())), reduced, tuple(steps))
