"""An independent NumPy statement of the semantics (README, "Semantics"), the oracle of the tests.

It follows the definition with whole-array operations, sharing no code with the library's C++
reference, so that agreement between the two means something.
"""

from __future__ import annotations

import numpy as np

SEMIRINGS = ("maxplus", "minplus", "maxmul", "maxmin", "minmax")
BOTTLENECK = ("maxmin", "minmax")  # (x) is min or max
DTYPES = ("float32", "float64", "int32", "int64")


def zero(semiring: str, dtype) -> object:
    dtype = np.dtype(dtype)
    if semiring == "maxmul":
        return dtype.type(0)
    low = semiring.startswith("max")  # (+) is max: the zero is the lowest value
    if dtype.kind == "f":
        return dtype.type(-np.inf if low else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if low else info.max)


def terms(a: np.ndarray, b: np.ndarray, semiring: str) -> np.ndarray:
    """t[i, k, j] = a[i, k] (x) b[k, j], in a's dtype."""
    dtype = a.dtype
    x = a[:, :, None]
    y = b[None, :, :]
    if semiring in BOTTLENECK:  # min and max of NaN are NaN; -0 is read as +0
        x, y = np.broadcast_arrays(x, y)
        if dtype.kind == "f":
            x, y = x + dtype.type(0), y + dtype.type(0)
        t = np.minimum(x, y) if semiring == "maxmin" else np.maximum(x, y)
        return t.astype(dtype)
    if dtype.kind == "f":
        x = x + dtype.type(0)  # -0 is read as +0
        y = y + dtype.type(0)
        with np.errstate(invalid="ignore", over="ignore"):
            return (x * y if semiring == "maxmul" else x + y).astype(dtype)
    x, y = x.astype(np.int64), y.astype(np.int64)  # no overflow inside the documented range
    if semiring == "maxmul":
        t = x * y
    else:
        z = zero(semiring, dtype)
        t = np.where((x == z) | (y == z), int(z), x + y)
    return t.astype(dtype)


def gemm(a: np.ndarray, b: np.ndarray, semiring: str, argmax: bool = False):
    """2-D, or 3-D batched with a batch of 1 broadcasting."""
    if a.ndim == 3:
        count = b.shape[0] if a.shape[0] == 1 else a.shape[0]  # a batch of 1 broadcasts, also against 0
        if count == 0:
            c = np.zeros((0, a.shape[1], b.shape[2]), dtype=a.dtype)
            return (c, np.zeros(c.shape, dtype=np.int32)) if argmax else c
        outs = [gemm(a[i if a.shape[0] > 1 else 0], b[i if b.shape[0] > 1 else 0], semiring, argmax) for i in range(count)]
        if argmax:
            return np.stack([o[0] for o in outs]), np.stack([o[1] for o in outs])
        return np.stack(outs)
    m, k = a.shape
    n = b.shape[1]
    z = zero(semiring, a.dtype)
    c = np.full((m, n), z, dtype=a.dtype)
    idx = np.full((m, n), -1, dtype=np.int32)
    if k > 0:
        t = terms(a, b, semiring)  # (m, k, n)
        if a.dtype.kind == "f":
            nan = np.isnan(t)
            any_nan = nan.any(axis=1)
            filled = np.where(nan, z, t)
        else:
            any_nan = np.zeros((m, n), dtype=bool)
            filled = t
        low = semiring.startswith("min")  # (+) is min
        best = filled.min(axis=1) if low else filled.max(axis=1)
        beats = best < z if low else best > z
        c = np.where(beats, best, z).astype(a.dtype)
        first = np.argmax(filled == best[:, None, :], axis=1).astype(np.int32)
        idx = np.where(beats, first, -1).astype(np.int32)
        if any_nan.any():
            c = np.where(any_nan, np.nan, c).astype(a.dtype)
            idx = np.where(any_nan, np.argmax(nan, axis=1).astype(np.int32), idx)
    return (c, idx) if argmax else c


def backward(grad_c: np.ndarray, idx: np.ndarray, a: np.ndarray, b: np.ndarray, semiring: str):
    """(grad_a, grad_b) for 2-D operands: route grad_c through the argmax (-1 skipped); MaxMul by the
    product rule; MaxMin and MinMax to the operand whose value the term took (A's on a tie or NaN)."""
    grad_a = np.zeros_like(a)
    grad_b = np.zeros_like(b)
    m, n = grad_c.shape
    for i in range(m):
        for j in range(n):
            k = idx[i, j]
            if k < 0:
                continue
            g = grad_c[i, j]
            if semiring in BOTTLENECK:
                x, y = a[i, k], b[k, j]
                a_took = np.isnan(x) or (not np.isnan(y) and (x <= y if semiring == "maxmin" else x >= y))
                if a_took:
                    grad_a[i, k] += g
                else:
                    grad_b[k, j] += g
                continue
            with np.errstate(invalid="ignore"):  # inf - inf in the sums is NaN, as in the kernels
                grad_a[i, k] += g * (b[k, j] if semiring == "maxmul" else 1)
                grad_b[k, j] += g * (a[i, k] if semiring == "maxmul" else 1)
    return grad_a, grad_b


def random_operands(rng: np.random.Generator, shape_a, shape_b, dtype: str, semiring: str, specials: bool = False):
    """Inputs inside the documented range of (dtype, semiring); with ``specials``, sprinkled with the
    semiring's zero, infinities, NaN, -0 (floats) or the integer zero."""
    dt = np.dtype(dtype)

    def one(shape):
        if dt.kind == "f":
            if semiring == "maxmul":
                x = rng.uniform(0, 4, size=shape)
            else:
                x = rng.normal(0, 10, size=shape)
            x = x.astype(dt)
            if specials and x.size:
                pick = rng.random(size=shape)
                x[pick < 0.05] = np.inf
                if semiring != "maxmul":  # MaxMul is defined on non-negative inputs
                    x[(pick >= 0.05) & (pick < 0.1)] = -np.inf
                x[(pick >= 0.1) & (pick < 0.13)] = np.nan
                x[(pick >= 0.13) & (pick < 0.18)] = -0.0
                x[(pick >= 0.18) & (pick < 0.22)] = 0.0
            return x
        if semiring == "maxmul":
            high = 46340 if dt == np.int32 else 3037000499
            x = rng.integers(0, min(high, 50) + 1, size=shape).astype(dt)
        else:
            x = rng.integers(-20, 21, size=shape).astype(dt)  # small: ties, so the smallest-k rule is exercised
        if specials and x.size:
            pick = rng.random(size=shape)
            if semiring in BOTTLENECK:  # every value is an input: the ends of the type, the zero among them
                info = np.iinfo(dt)
                x[pick < 0.1] = info.min
                x[(pick >= 0.1) & (pick < 0.2)] = info.max
            elif semiring == "maxmul":
                x[pick < 0.2] = 0
            else:
                limit = (1 << 28) if dt == np.int32 else (1 << 60)
                x[pick < 0.1] = zero(semiring, dt)
                x[(pick >= 0.1) & (pick < 0.15)] = limit
                x[(pick >= 0.15) & (pick < 0.2)] = -limit
        return x

    return one(shape_a), one(shape_b)
