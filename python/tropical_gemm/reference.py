"""The library's CPU reference on NumPy arrays, without PyTorch: the semantics of every path
(README, "Semantics"), for tests and small problems. The PyTorch ops run the same code for CPU
tensors."""

from __future__ import annotations

from . import _native
from ._native import SEMIRING_ALIASES, VIEW, InvalidArgumentError, UnsupportedError

_DTYPES = {"float32": 0, "float64": 1, "int32": 2, "int64": 3}


def _np():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover
        raise ImportError("tropical_gemm.reference works on NumPy arrays: pip install numpy") from e
    return numpy


def _semiring(semiring: str) -> int:
    name = SEMIRING_ALIASES.get(str(semiring).lower())
    if name is None:
        raise InvalidArgumentError(f"unknown semiring {semiring!r}: use 'maxplus', 'minplus' or 'maxmul'")
    return _native.SEMIRINGS[name]


def _view(x, batched: bool) -> bytes:
    item = x.itemsize
    st = [s // item for s in x.strides]
    batch_stride = (st[0] if x.shape[0] > 1 else 0) if batched else 0
    return VIEW.pack(x.ctypes.data, x.shape[-2], x.shape[-1], st[-2], st[-1], batch_stride)


def gemm(a, b, semiring: str = "maxplus", *, return_argmax: bool = False):
    """``C = a (x) b`` for 2-D arrays, or batched for 3-D ones (a batch of 1 broadcasts); with
    ``return_argmax`` also the int32 argmax."""
    np = _np()
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise InvalidArgumentError(f"a is {a.dtype} but b is {b.dtype}: convert one, e.g. b.astype(a.dtype)")
    t = _DTYPES.get(a.dtype.name)
    if t is None:
        raise UnsupportedError(f"dtype {a.dtype} is not supported: use float32, float64, int32 or int64")
    if a.ndim != b.ndim or a.ndim not in (2, 3):
        raise InvalidArgumentError(f"a and b must both be 2-D or both 3-D; they are {a.ndim}-D and {b.ndim}-D")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(f"a is {a.shape} and b is {b.shape}: a's columns must equal b's rows")
    batched = a.ndim == 3
    if batched and a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise InvalidArgumentError(f"batch sizes {a.shape[0]} and {b.shape[0]} differ and neither is 1")
    count = max(a.shape[0], b.shape[0]) if batched else 1
    shape = (count, a.shape[1], b.shape[2]) if batched else (a.shape[0], b.shape[1])
    c = np.empty(shape, dtype=a.dtype)
    argmax = np.empty(shape, dtype=np.int32) if return_argmax else None
    status = _native.host.tgh_cpu_gemm(
        _semiring(semiring), t, _view(a, batched), _view(b, batched), _view(c, batched),
        _view(argmax, batched) if return_argmax else None, count,
    )
    if status:
        raise _native.host_error(status)
    return (c, argmax) if return_argmax else c
