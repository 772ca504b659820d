"""The implementations of the ops, all through the library's public C ABI: CUDA tensors through
``tropical_gemm*``, CPU tensors through ``tropical_host_gemm*`` (the library's SIMD kernels on
``torch.get_num_threads()`` threads).

The CUDA path calls ``tropical_gemm``, ``tropical_gemm_argmax`` and ``tropical_gemm_backward_a/b``
on PyTorch's current stream of the tensors' device, with ``device_hint = index + 1``: PyTorch's
tensors and streams are the primary context's, so the library need not ask the driver about each
pointer and the stream. Outputs come from PyTorch's caching allocator; nothing synchronises.

This path is measured (python/benchmarks/host_costs.py), so it keeps Python's work per call small:
each descriptor and the options are one precompiled ``struct.pack`` each (``_abi``; the bytes go to
C without a copy), and the C functions are called without ctypes argtypes (``_native.undeclared``), whose
conversions cost more than the rest of the call. (Packing everything into one per-thread buffer
with one ``pack_into``, or keeping the packed options per stream, measured no faster.)
"""

from __future__ import annotations

import ctypes

import torch
from torch import Tensor

from . import _native
from ._abi import describe_matrix, device_options, host_options, pack_matrix
from ._checks import (COMBINING, ORAND, check_argmax, check_backtrack, check_backward, check_pack, check_packed_product,
                      check_product_shapes)
from ._native import GRADIENT_READS, PACK_A, PACK_B, ROW_MAJOR

# --- implementations --------------------------------------------------------------------------

# See _native.undeclared for what these must be passed: semiring and dtype as Python ints,
# descriptors as bytes or None, the batch count as a c_int64.
_gemm_c = _native.undeclared("tropical_gemm")
_gemm_argmax_c = _native.undeclared("tropical_gemm_argmax")
_backward_a_c = _native.undeclared("tropical_gemm_backward_a")
_backward_b_c = _native.undeclared("tropical_gemm_backward_b")
_host_gemm_c = _native.undeclared("tropical_host_gemm")
_host_gemm_argmax_c = _native.undeclared("tropical_host_gemm_argmax")
_host_backward_a_c = _native.undeclared("tropical_host_gemm_backward_a")
_host_backward_b_c = _native.undeclared("tropical_host_gemm_backward_b")
_int64 = ctypes.c_int64
_ONE = _int64(1)  # the batch count of every 2-D call, made once


def _launch(op: str, fn, head: tuple, c: Tensor, argmax, m: int, n: int, batch, options: bytes):
    """fn(*head, dc, batch, options), or with argmax fn(*head, dc, dm, batch, options), where dc and dm
    describe C and argmax (m x n, row-major, products m * n apart): the products' common tail. Raises
    the library's error; returns C, or (C, argmax)."""
    dc = pack_matrix(c.data_ptr(), m, n, n, ROW_MAJOR, m * n)
    if argmax is None:
        status = fn(*head, dc, batch, options)
    else:
        status = fn(*head, dc, pack_matrix(argmax.data_ptr(), m, n, n, ROW_MAJOR, m * n), batch, options)
    if status:
        raise _native.library_error(status, f"tropical.{op}: ")
    return c if argmax is None else (c, argmax)


def _product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool, with_argmax: bool, cuda: bool):
    s, t, sa, sb = check_product_shapes(op, a, b, semiring, batched)
    if with_argmax and s in COMBINING:  # LogPlus: no term attains a result alone
        check_argmax(f"tropical.{op}", s)
    if cuda and s == ORAND and _prepack(sa, sb):
        return _prepacked_cuda(op, a, b, batched, with_argmax)
    device = a.device
    dtype = a.dtype
    # torch.empty(*sizes) parses faster than torch.empty(tuple).
    if batched:
        count = sb[0] if sa[0] == 1 else sa[0]  # a batch of 1 broadcasts, also against 0
        m, n = sa[1], sb[2]
        c = torch.empty(count, m, n, dtype=dtype, device=device)
        argmax = torch.empty(count, m, n, dtype=torch.int32, device=device) if with_argmax else None
        if count == 0:  # an empty batch: nothing to compute, and the empty operand may have no memory
            return (c, argmax) if with_argmax else c
    else:
        count = 1
        m, n = sa[0], sb[1]
        c = torch.empty(m, n, dtype=dtype, device=device)
        argmax = torch.empty(m, n, dtype=torch.int32, device=device) if with_argmax else None
    # The same descriptors on both devices: strided operands go as they are, others as a copy.
    da, a_ = describe_matrix(a, batched)
    db, b_ = describe_matrix(b, batched)
    batch = _ONE if count == 1 else _int64(count)
    if cuda:
        fn = _gemm_argmax_c if with_argmax else _gemm_c
        return _launch(op, fn, (s, t, da, db), c, argmax, m, n, batch, device_options(device))
    fn = _host_gemm_argmax_c if with_argmax else _host_gemm_c
    return _launch(op, fn, (s, t, da, db), c, argmax, m, n, batch, host_options())


def product_cpu(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool, with_argmax: bool):
    return _product(op, a, b, semiring, batched, with_argmax, False)


def product_cuda(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool, with_argmax: bool):
    return _product(op, a, b, semiring, batched, with_argmax, True)


def _backward(op: str, which: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str, cuda: bool):
    s, t = check_backward(op, grad_c, argmax, a, b, semiring)
    device = grad_c.device
    batched = grad_c.dim() == 3
    count = grad_c.shape[0] if batched else 1
    target = a if which == "a" else b
    rows, cols = target.shape[-2], target.shape[-1]
    if count == 0:  # no products, no contributions
        return torch.zeros(target.shape, dtype=a.dtype, device=device)
    # The kernels cannot sum a batch into one matrix (outputs may not overlap): a broadcast operand
    # gets the gradient of every product, summed afterwards.
    grad = torch.empty((count, rows, cols) if batched else (rows, cols), dtype=a.dtype, device=device)
    dgc, grad_c_ = describe_matrix(grad_c, batched)
    dam, argmax_ = describe_matrix(argmax, batched)
    # `argmax` is the forward's C for a semiring whose gradient reads it (LogPlus: check_backward).
    # The operands the semiring's gradient reads (MaxMul the other one, MaxMin, MinMax and LogPlus
    # both); NULL for one it does not read.
    reads_a, reads_b = GRADIENT_READS[s, which]
    da, a_ = describe_matrix(a, batched) if reads_a else (None, None)
    db, b_ = describe_matrix(b, batched) if reads_b else (None, None)
    dg = pack_matrix(grad.data_ptr(), rows, cols, cols, ROW_MAJOR, rows * cols)
    if cuda:
        fn, options = (_backward_a_c if which == "a" else _backward_b_c), device_options(device)
    else:
        fn, options = (_host_backward_a_c if which == "a" else _host_backward_b_c), host_options()
    status = fn(s, t, dgc, dam, da, db, dg, _ONE if count == 1 else _int64(count), options)
    if status:
        raise _native.library_error(status, f"tropical.{op}: ")
    if batched and target.shape[0] != count:
        grad = grad.sum(0, keepdim=True)
    return grad


def backward_cpu(op: str, which: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> Tensor:
    return _backward(op, which, grad_c, argmax, a, b, semiring, False)


def backward_cuda(op: str, which: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> Tensor:
    return _backward(op, which, grad_c, argmax, a, b, semiring, True)


# --- OrAnd on packed operands -------------------------------------------------------------------
# Words are int32 tensors (PyTorch has little uint32 support; the bits are the same). pack_bits pads
# the words' rows to a multiple of 4 words and returns a view without the padding: every row then
# starts 16-byte aligned, so the kernels stage whole operands with 128-bit loads.

_gemm_packed_c = _native.undeclared("tropical_gemm_packed")
_gemm_packed_argmax_c = _native.undeclared("tropical_gemm_packed_argmax")
_host_gemm_packed_c = _native.undeclared("tropical_host_gemm_packed")
_host_gemm_packed_argmax_c = _native.undeclared("tropical_host_gemm_packed_argmax")

# CUDA products of bytes at least this large (M x N x K, with M and N at least _PREPACK_SIDE) pack their
# operands first (two kernels, into buffers from PyTorch's allocator) and run the packed kernel: the
# byte kernels pack each operand again for every tile of the other, which costs about as many
# instructions as the product's own (bench/NOTES.md), while packing once reads each byte once.
_PREPACK_TERMS = 1 << 32
_PREPACK_SIDE = 256


def _prepack(sa, sb) -> bool:
    m, k, n = sa[-2], sa[-1], sb[-1]
    return m >= _PREPACK_SIDE and n >= _PREPACK_SIDE and m * n * k >= _PREPACK_TERMS


def words_for(x: Tensor, d: int) -> Tensor:
    """The (uninitialised) words pack_bits writes for x packed along dim d (-1 or -2): x's shape with
    that dimension in words of 32, each row padded to a multiple of 4 words (a view without it)."""
    shape = list(x.shape)
    shape[d] = (shape[d] + 31) // 32
    inner = shape[-1]
    padded = shape[:-1] + [(inner + 3) // 4 * 4]
    return torch.empty(padded, dtype=torch.int32, device=x.device)[..., :inner]


def _word_matrix(w: Tensor, batched: bool) -> bytes:
    """The descriptor of a words tensor that words_for made (row-major, rows padded), for writing."""
    rows, cols = w.shape[-2], w.shape[-1]
    ld = w.stride(-2) if rows > 1 else max(cols, 1)
    return pack_matrix(w.data_ptr(), rows, cols, ld, ROW_MAJOR, w.stride(0) if batched else 0)


def _pack(op: str, x: Tensor, dim: int, cuda: bool) -> Tensor:
    d = check_pack(op, x, dim)
    batched = x.dim() == 3
    words = words_for(x, d)
    if x.numel() == 0 or words.numel() == 0:
        return words
    dx, x_ = describe_matrix(x, batched)
    dw = _word_matrix(words, batched)
    count = x.shape[0] if batched else 1
    as_ = PACK_A if d == -1 else PACK_B
    fn, options = ((_native.lib.tropical_pack_bits, device_options(x.device)) if cuda else
                   (_native.lib.tropical_host_pack_bits, host_options()))
    status = fn(dx, as_, dw, count, options)
    if status:
        raise _native.library_error(status, f"tropical.{op}: ")
    return words


def pack_cpu(op: str, x: Tensor, dim: int) -> Tensor:
    return _pack(op, x, dim, False)


def pack_cuda(op: str, x: Tensor, dim: int) -> Tensor:
    return _pack(op, x, dim, True)


def _packed_product(op: str, a: Tensor, b: Tensor, k: int, with_argmax: bool, cuda: bool, out_dtype=torch.bool):
    count, m, n, _ = check_packed_product(op, a, b, k)
    batched = a.dim() == 3
    device = a.device
    shape = (count, m, n) if batched else (m, n)
    c = torch.empty(shape, dtype=out_dtype, device=device)
    argmax = torch.empty(shape, dtype=torch.int32, device=device) if with_argmax else None
    if count == 0 or m == 0 or n == 0:
        return (c, argmax) if with_argmax else c
    da, a_ = describe_matrix(a, batched)
    db, b_ = describe_matrix(b, batched)
    batch = _ONE if count == 1 else _int64(count)
    head = (ORAND, da, db, _int64(k))
    if cuda:
        fn = _gemm_packed_argmax_c if with_argmax else _gemm_packed_c
        return _launch(op, fn, head, c, argmax, m, n, batch, device_options(device))
    fn = _host_gemm_packed_argmax_c if with_argmax else _host_gemm_packed_c
    return _launch(op, fn, head, c, argmax, m, n, batch, host_options())


def packed_product_cpu(op: str, a: Tensor, b: Tensor, k: int, with_argmax: bool):
    return _packed_product(op, a, b, k, with_argmax, False)


def packed_product_cuda(op: str, a: Tensor, b: Tensor, k: int, with_argmax: bool):
    return _packed_product(op, a, b, k, with_argmax, True)


def _prepacked_cuda(op: str, a: Tensor, b: Tensor, batched: bool, with_argmax: bool):
    """A large OrAnd product of bytes: both operands packed into words first (PyTorch's allocator),
    then the packed kernel; C has a's dtype (bool or uint8)."""
    k = a.shape[-1]
    pa, pb = _pack(op, a, -1, True), _pack(op, b, -2, True)
    return _packed_product(op, pa, pb, k, with_argmax, True, out_dtype=a.dtype)


# --- the walk back through a chain's argmax tables ------------------------------------------------


def _backtrack(op: str, back: Tensor, last: Tensor, cuda: bool) -> Tensor:
    """The paths (B x (T + 1), int32) that the library walks back through back's T tables (B x S each,
    any layout describe_matrix describes, T apart) from last's B final states."""
    steps, rows, _ = check_backtrack(op, back, last)
    path = torch.empty(rows, steps + 1, dtype=torch.int32, device=back.device)
    if rows == 0:  # no paths to walk: no call, and no CUDA stream to ask for
        return path
    db, back_ = describe_matrix(back, True)
    dl, last_ = describe_matrix(last.reshape(rows, 1), False)
    dp = pack_matrix(path.data_ptr(), rows, steps + 1, steps + 1, ROW_MAJOR, 0)
    fn, options = ((_native.lib.tropical_backtrack, device_options(back.device)) if cuda else
                   (_native.lib.tropical_host_backtrack, host_options()))
    status = fn(db, steps, dl, dp, options)
    if status:
        raise _native.library_error(status, f"tropical.{op}: ")
    return path


def backtrack_cpu(op: str, back: Tensor, last: Tensor) -> Tensor:
    return _backtrack(op, back, last, False)


def backtrack_cuda(op: str, back: Tensor, last: Tensor) -> Tensor:
    return _backtrack(op, back, last, True)
