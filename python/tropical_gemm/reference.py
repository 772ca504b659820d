"""The library's CPU reference on NumPy arrays, without PyTorch: the semantics of every path
(README, "Semantics") written plainly, for tests and small problems. The PyTorch ops on CPU tensors
run the library's SIMD kernels instead, which give the same results bit for bit.

Any NumPy array of a supported type works as it is given: either byte order, any strides (negative,
zero, or not a multiple of the item size, as views of records give) and misaligned data. The
reference reads native, aligned elements at whole-element strides, so an operand that is not
that is copied first; results are always native-endian and C-contiguous."""

from __future__ import annotations

from . import _native
from ._native import DTYPE_CODES, SEMIRING_ALIASES, VIEW, InvalidArgumentError, UnsupportedError


def _np():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover
        raise ImportError("tropical_gemm.reference works on NumPy arrays: pip install numpy") from e
    return numpy


def _semiring(semiring: str) -> int:
    name = SEMIRING_ALIASES.get(str(semiring).lower())
    if name is None:
        raise InvalidArgumentError(f"unknown semiring {semiring!r}: use {_native.semiring_list()}")
    return _native.SEMIRINGS[name]


def _readable(np, x):
    """x as the reference can read it: native byte order (a big-endian array on a little-endian
    machine would otherwise be read as garbage), aligned, and with every stride a whole number of
    elements (a tgh_view counts strides in elements). A copy only where x is not that already."""
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if not x.flags.aligned or any(s % x.itemsize for s in x.strides):
        x = np.ascontiguousarray(x)
    return x


def _view(x, batched: bool) -> bytes:
    """A tgh_view of x (2-D, or 3-D with the batch first); x must be _readable. Strides may be
    negative or 0: the reference indexes from the first element (x.ctypes.data) with signed ones."""
    item = x.itemsize
    st = [s // item for s in x.strides]
    batch_stride = (st[0] if x.shape[0] > 1 else 0) if batched else 0
    return VIEW.pack(x.ctypes.data, x.shape[-2], x.shape[-1], st[-2], st[-1], batch_stride)


def gemm(a, b, semiring: str = "maxplus", *, return_argmax: bool = False):
    """``C = a (x) b`` for 2-D arrays, or batched for 3-D ones (a batch of 1 broadcasts); with
    ``return_argmax`` also the int32 argmax. Takes arrays of any byte order and strides (see the
    module's notes); returns native-endian, C-contiguous arrays."""
    np = _np()
    a, b = np.asarray(a), np.asarray(b)
    t = DTYPE_CODES.get(a.dtype.name)
    if t is None:
        taken = [n for n in _native.ELEMENT_TYPES if any(n in f.dtypes for f in _native.SEMIRING_FACTS.values())]
        raise UnsupportedError(
            f"dtype {a.dtype} is not supported: use one of {', '.join(taken)} (each semiring takes some of them, "
            f"as the README's semantics table says)"
        )
    if a.dtype.name != b.dtype.name:
        raise InvalidArgumentError(f"a is {a.dtype} but b is {b.dtype}: convert one, e.g. b.astype(a.dtype)")
    a, b = _readable(np, a), _readable(np, b)
    if a.ndim != b.ndim or a.ndim not in (2, 3):
        raise InvalidArgumentError(f"a and b must both be 2-D or both 3-D; they are {a.ndim}-D and {b.ndim}-D")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(f"a is {a.shape} and b is {b.shape}: a's columns must equal b's rows")
    batched = a.ndim == 3
    if batched and a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise InvalidArgumentError(f"batch sizes {a.shape[0]} and {b.shape[0]} differ and neither is 1")
    count = (b.shape[0] if a.shape[0] == 1 else a.shape[0]) if batched else 1  # a batch of 1 broadcasts
    shape = (count, a.shape[1], b.shape[2]) if batched else (a.shape[0], b.shape[1])
    c = np.empty(shape, dtype=a.dtype)
    argmax = np.empty(shape, dtype=np.int32) if return_argmax else None
    status = _native.lib.tgh_cpu_gemm(
        _semiring(semiring), t, _view(a, batched), _view(b, batched), _view(c, batched),
        _view(argmax, batched) if return_argmax else None, count,
    )
    if status:
        raise _native.library_error(status)
    return (c, argmax) if return_argmax else c
