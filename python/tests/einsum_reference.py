"""A brute-force statement of a tropical einsum, the oracle of test_einsum*.py: a loop over every
assignment of the indices, (x) of the operands' entries, (+) into the output. It shares nothing
with the package's parser or planner (its own reading of the equation, no pairwise products), so
that agreement means something. Every semiring of tropical_reference, OrAnd (bool and uint8,
nonzero is true) and, in brute_counting_einsum, the counting semiring's (value, count) pairs.
Also the random equations and operands the tests draw.
"""

from __future__ import annotations

import itertools
import math
import string

import numpy as np

from tropical_reference import zero


def _nan_min(x, y):
    return math.nan if math.isnan(x) or math.isnan(y) else min(x, y)


def _nan_max(x, y):
    return math.nan if math.isnan(x) or math.isnan(y) else max(x, y)


def times(semiring: str, x, y, z, integer: bool):
    """x (x) y; z is the semiring's zero (absorbing, exactly, for integers)."""
    if semiring == "orand":
        return bool(x) and bool(y)
    if semiring == "maxmin":
        return min(x, y) if integer else _nan_min(x, y)
    if semiring == "minmax":
        return max(x, y) if integer else _nan_max(x, y)
    if semiring == "maxmul":
        return x * y
    if integer and (x == z or y == z):
        return z
    return x + y


def better(semiring: str, x, y) -> bool:
    """Whether x beats y under (+) (max, min, or OR: true beats false)."""
    if semiring == "orand":
        return bool(x) and not bool(y)
    return x > y if semiring in ("maxplus", "maxmul", "maxmin") else x < y


def read_equation(equation: str, ndims):
    """Each operand's letters and the output's, with '...' replaced by fresh letters (right-aligned)."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    fresh = [c for c in string.ascii_letters if c not in equation]
    rank = max((nd - (len(t) - 3) for t, nd in zip(terms, ndims) if "..." in t), default=0)
    dots = "".join(fresh[:rank])
    inputs = []
    for t, nd in zip(terms, ndims):
        if "..." in t:
            extra = nd - (len(t) - 3)
            t = t.replace("...", dots[rank - extra:])
        inputs.append(t)
    if arrow:
        output = rhs.replace("...", dots)
    else:
        letters = "".join(inputs)
        output = dots + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in dots))
    return inputs, output


def brute_einsum(equation: str, arrays, semiring: str):
    """(result, best): the einsum of the NumPy `arrays`, and for each output position the first
    assignment (a dict index -> value) attaining it (None where no term beats the zero)."""
    inputs, output = read_equation(equation, [a.ndim for a in arrays])
    sizes = {}
    for term, a in zip(inputs, arrays):
        for c, n in zip(term, a.shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    dtype = arrays[0].dtype
    integer = dtype.kind in "iub"  # no NaN
    z = False if semiring == "orand" else zero(semiring, dtype).item()
    labels = sorted(sizes)
    out = np.full([sizes[c] for c in output], z, dtype=object)
    best = {}
    for values in itertools.product(*(range(sizes[c]) for c in labels)):
        at = dict(zip(labels, values))
        term = None
        for t, a in zip(inputs, arrays):
            # A dimension of size 1 broadcasts: it is read at 0 whatever the index.
            entry = a[tuple(at[c] if n > 1 else 0 for c, n in zip(t, a.shape))].item()
            if semiring == "orand":
                entry = entry != 0  # a uint8 true may be any of 1..255; the result holds 0 and 1
            term = entry if term is None else times(semiring, term, entry, z, integer)
        pos = tuple(at[c] for c in output)
        current = out[pos]
        if not integer and (math.isnan(term) or math.isnan(current)):
            out[pos] = math.nan
        elif better(semiring, term, current):
            out[pos] = term
            best[pos] = at
    return out.astype(dtype), best


def expected_gradients(equation: str, arrays, semiring: str, grad_out=None):
    """The gradient of sum(einsum * grad_out) with respect to each operand, by the library's rule
    applied to each output entry's optimal assignment (values must be distinct and free of ties):
    MaxPlus and MinPlus give 1 to each entry the assignment reads; MaxMul the product of the other
    entries; MaxMin and MinMax 1 to the one entry whose value the result took."""
    out, best = brute_einsum(equation, arrays, semiring)
    inputs, output = read_equation(equation, [a.ndim for a in arrays])
    grads = [np.zeros(a.shape, dtype=np.float64) for a in arrays]
    for pos, at in best.items():
        g = 1.0 if grad_out is None else float(grad_out[pos])
        where = [tuple(at[c] if n > 1 else 0 for c, n in zip(t, a.shape)) for t, a in zip(inputs, arrays)]
        entries = [float(a[w]) for a, w in zip(arrays, where)]
        for n, w in enumerate(where):
            if semiring in ("maxplus", "minplus"):
                grads[n][w] += g
            elif semiring == "maxmul":
                grads[n][w] += g * math.prod(e for m, e in enumerate(entries) if m != n)
            elif entries[n] == out[pos]:
                grads[n][w] += g
    return grads


# --- random equations ---------------------------------------------------------------------------


def random_equation(rng, max_operands=5, max_assignments=1500):
    """(equation, shapes): 1-5 operands over a few indices of sizes 1-3, with batch indices (kept
    and shared), repeated indices (diagonals), '...' in some, size-1 dimensions that broadcast, an
    explicit or implicit output."""
    while True:
        n = int(rng.integers(1, max_operands + 1))
        pool = list("abcdefg")[: int(rng.integers(2, 7))]
        sizes = {c: int(rng.choice([1, 2, 3], p=[0.15, 0.45, 0.4])) for c in pool}
        use_dots = rng.random() < 0.3
        dots_shape = tuple(int(rng.integers(1, 3)) for _ in range(int(rng.integers(1, 3)))) if use_dots else ()
        terms, shapes = [], []
        for _ in range(n):
            k = int(rng.choice([0, 1, 2, 3], p=[0.1, 0.3, 0.35, 0.25]))
            term = list(rng.choice(pool, size=k, replace=True)) if k else []
            if k and rng.random() < 0.3:  # a repeated index: a diagonal
                term.append(term[0])
            shape = [sizes[c] for c in term]
            for d, c in enumerate(term):  # a size-1 dimension broadcasts against the index's size
                if sizes[c] > 1 and term.count(c) == 1 and rng.random() < 0.1:
                    shape[d] = 1
            text = "".join(term)
            if use_dots and rng.random() < 0.7:
                keep = int(rng.integers(0, len(dots_shape) + 1))
                tail = list(dots_shape[len(dots_shape) - keep:])
                if tail and rng.random() < 0.3:
                    tail[0] = 1
                at = int(rng.integers(0, len(term) + 1))
                text = text[:at] + "..." + text[at:]
                shape = shape[:at] + tail + shape[at:]
            terms.append(text)
            shapes.append(tuple(shape))
        used = sorted(set("".join(t.replace("...", "") for t in terms)))
        if rng.random() < 0.25:
            equation = ",".join(terms)  # implicit output
        else:
            out = [c for c in used if rng.random() < 0.4]
            rng.shuffle(out)
            out = "".join(out)
            if any("..." in t for t in terms) and rng.random() < 0.8:
                out = "..." + out if rng.random() < 0.5 else out + "..."
            equation = ",".join(terms) + "->" + out
        total = math.prod(sizes[c] for c in used) * math.prod(dots_shape)
        if total <= max_assignments:
            return equation, shapes


def random_arrays(rng, shapes, dtype: str, semiring: str, distinct: bool = False):
    """Operands for `shapes`: small integers (no overflow in 5 factors) or floats; MaxMul's are
    non-negative. `distinct`: float64 values all different, for gradient tests (no ties). OrAnd's
    are booleans (dtype bool or uint8, whose trues are any of 1..255), each operand of its own
    density between 0.2 and 0.9, so that results hold both values."""
    if semiring == "orand":
        arrays = []
        for s in shapes:
            true = np.asarray(rng.random(s) < rng.uniform(0.2, 0.9)).reshape(s)
            if np.dtype(dtype) == np.uint8:
                true = np.where(true, rng.integers(1, 256, s), 0).astype(np.uint8).reshape(s)
            arrays.append(true.astype(dtype))
        return arrays
    count = sum(math.prod(s) for s in shapes)
    if distinct:
        values = rng.permutation(count).astype(np.float64) + rng.random(count) * 0.5
        # MaxMul: in [0.5, 1.5], so that products of five stay well apart; else centred on 0.
        values = 0.5 + values / count if semiring == "maxmul" else values - count / 2
    elif np.dtype(dtype).kind == "i":
        values = rng.integers(0, 6, count) if semiring == "maxmul" else rng.integers(-20, 21, count)
    else:
        values = rng.random(count) * 3 if semiring == "maxmul" else rng.standard_normal(count) * 4
    arrays, at = [], 0
    for s in shapes:
        size = math.prod(s)
        arrays.append(np.asarray(values[at:at + size]).astype(dtype).reshape(s))
        at += size
    return arrays


# --- the counting semiring ------------------------------------------------------------------------


def _counted(value: float, count: float) -> tuple[float, float]:
    """A pair as the counting semiring's rules read it: a value -inf is the zero (count 0), a NaN
    value has count NaN."""
    if math.isnan(value):
        return math.nan, math.nan
    if value == -math.inf:
        return value, 0.0
    return value, count


def _counting_plus(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
    """(+): the larger value with its count; equal values add their counts; NaN wins."""
    if math.isnan(x[0]) or math.isnan(y[0]):
        return math.nan, math.nan
    if x[0] != y[0]:
        return x if x[0] > y[0] else y
    return x[0], x[1] + y[1]


def brute_counting_einsum(equation: str, pairs, dtype: str = "float64"):
    """(values, counts), float64 arrays: the counting einsum of `pairs` ((values, counts) NumPy
    arrays of one shape each) by a loop over every assignment: each term's value is the sum of
    its entries' values (rounded to `dtype`), its count the product of their counts; (+) keeps
    the largest value and adds the counts of the terms that attain it. '...', diagonals and
    size-1 broadcasting as in brute_einsum."""
    inputs, output = read_equation(equation, [v.ndim for v, _ in pairs])
    sizes = {}
    for term, (v, _) in zip(inputs, pairs):
        for c, n in zip(term, v.shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    labels = sorted(sizes)
    acc = {pos: (-math.inf, 0.0) for pos in itertools.product(*(range(sizes[c]) for c in output))}
    for values in itertools.product(*(range(sizes[c]) for c in labels)):
        at = dict(zip(labels, values))
        value, count = 0.0, 1.0
        for t, (v, c) in zip(inputs, pairs):
            where = tuple(at[l] if n > 1 else 0 for l, n in zip(t, v.shape))
            x, k = _counted(float(v[where]), float(c[where]))
            value, count = value + x, count * k
        value = float(np.asarray(value, dtype=dtype))
        pos = tuple(at[c] for c in output)
        acc[pos] = _counting_plus(acc[pos], _counted(value, count))
    out_values = np.empty([sizes[c] for c in output])
    out_counts = np.empty(out_values.shape)
    for pos, (v, c) in acc.items():
        out_values[pos], out_counts[pos] = _counted(v, c)
    return out_values, out_counts


def random_counting_pairs(rng, shapes, dtype: str, specials: bool = False):
    """(values, counts) per shape: small integer values (-2..2, so that terms tie and their counts
    add), counts 0..3 (float64); with `specials`, some values -inf and a few NaN. No +inf: an
    einsum contracts in steps, and -inf + +inf = NaN is not distributive (README, "Counting")."""
    pairs = []
    for s in shapes:
        values = rng.integers(-2, 3, s).astype(np.float64)
        if specials:
            r = rng.random(s)
            values = np.where(r < 0.1, -np.inf, np.where(r < 0.11, np.nan, values))
        counts = rng.integers(0, 4, s).astype(np.float64)
        pairs.append((np.asarray(values, dtype=dtype).reshape(s), np.asarray(counts).reshape(s)))
    return pairs
