"""A brute-force statement of a tropical einsum, the oracle of test_einsum*.py: a loop over every
assignment of the indices, (x) of the operands' entries, (+) into the output. It shares nothing
with the package's parser or planner (its own reading of the equation, no pairwise products), so
that agreement means something. Also the random equations and operands the tests draw.
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
    """Whether x beats y under (+) (max or min)."""
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
    integer = dtype.kind == "i"
    z = zero(semiring, dtype).item()
    labels = sorted(sizes)
    out = np.full([sizes[c] for c in output], z, dtype=object)
    best = {}
    for values in itertools.product(*(range(sizes[c]) for c in labels)):
        at = dict(zip(labels, values))
        term = None
        for t, a in zip(inputs, arrays):
            # A dimension of size 1 broadcasts: it is read at 0 whatever the index.
            entry = a[tuple(at[c] if n > 1 else 0 for c, n in zip(t, a.shape))].item()
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
    non-negative. `distinct`: float64 values all different, for gradient tests (no ties)."""
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
