"""The binary contraction ops ``torch.ops.tropical.contract`` and ``contract_argmax``: one call of the
C ABI's ``tropical_contract`` (CUDA) or ``tropical_host_contract`` (CPU), or their ``_argmax`` forms,
per call. They are the engine of every pairwise step of :func:`tropical_gemm.einsum`.

``contract(a, b, la, lb, lc, semiring)`` is ``C[lc] = (+) over the labels of a and b that lc lacks
of a[la] (x) b[lb]`` (labels are ints, one per dimension, each at most once per tensor: take
diagonals first). A label of a (or b) alone must be in lc (reduce it first). C is dense in lc's
order. ``contract_argmax`` also returns the int32 argmax of each element of C: the flat index over
the contracted labels in the order la lists them (tropical/contract.hpp), -1 where no term beats
the zero; the gradients follow it through the library's batched backward ops.
``counting_contract(a_values, a_counts, b_values, b_counts, la, lb, lc)`` is the same in the
counting semiring (``tropical_counting_contract`` / ``tropical_host_counting_contract``): each
operand a (values, counts) pair of one shape, values float32 or float64, counts float64; it returns
C's ``(values, counts)``. Not differentiable (as ``counting_gemm``).

Where the GPU contraction refuses (strides that admit no batched-matrix view), the CUDA
implementation copies a and b (each part of a pair) into (batch, left, contracted) and (batch, contracted, right) order
with torch and calls it again (into a (batch, left, right) C, permuted back, where lc's order puts
the batch inside C's matrices): a copy from PyTorch's caching allocator, where the library itself
allocates nothing (which keeps it capturable in CUDA graphs with no workspace to size). The host
path copies in buffers of its own.

The descriptors (4 ``tropical_tensor``, 6 for counting, and their sizes, strides and labels) are packed with one
``struct.pack_into`` into a buffer of the calling thread (the C call releases the GIL, so threads
may not share one), and the C functions are called without ctypes argtypes (_native.undeclared).
"""

from __future__ import annotations

import ctypes
import struct
import threading

import torch
from torch import Tensor

from . import _autograd, _native, _registry, ops
from ._abi import device_options, host_options
from ._checks import check_argmax, check_counting_pair, check_devices, check_semiring_dtype, dtype_code, semiring_code
from ._native import READS_RESULT, InvalidArgumentError, UnsupportedError

_contract_c = _native.undeclared("tropical_contract")
_contract_argmax_c = _native.undeclared("tropical_contract_argmax")
_host_contract_c = _native.undeclared("tropical_host_contract")
_host_contract_argmax_c = _native.undeclared("tropical_host_contract_argmax")
_counting_contract_c = _native.undeclared("tropical_counting_contract")
_host_counting_contract_c = _native.undeclared("tropical_host_counting_contract")

_DESCRIPTOR = struct.Struct("=Qi4xQQQ")  # tropical_tensor {data; int32 rank; sizes; strides; labels}
_MAX_RANK = 32  # tropical::max_tensor_rank
_BUFFER_BYTES = 6 * _DESCRIPTOR.size + 6 * _MAX_RANK * 20
assert _DESCRIPTOR.size == 40


class _Scratch(threading.local):
    """The calling thread's descriptor buffer, and the layouts packed into it by ranks."""

    def __init__(self):
        self.buffer = ctypes.create_string_buffer(_BUFFER_BYTES)
        base = ctypes.addressof(self.buffer)
        self.base = base
        self.descriptors = tuple(ctypes.c_void_p(base + n * _DESCRIPTOR.size) for n in range(6))
        self.layouts: dict = {}

    def layout(self, ranks: tuple[int, ...]):
        """(Struct, per tensor (rank, sizes address, strides address, labels address)) for tensors
        of these ranks: the descriptors first, then each tensor's arrays."""
        found = self.layouts.get(ranks)
        if found is not None:
            return found
        head = "=" + "Qi4xQQQ" * len(ranks)
        tail, constants, at = "", [], len(ranks) * _DESCRIPTOR.size
        for r in ranks:
            pad = (-4 * r) % 8
            tail += f"{r}q{r}q{r}i{pad}x"
            constants.append((r, self.base + at, self.base + at + 8 * r, self.base + at + 16 * r))
            at += 20 * r + pad
        found = (struct.Struct(head + tail), tuple(constants))
        self.layouts[ranks] = found
        return found


_scratch = _Scratch()


def _call(fn, s: int, t: int, a: Tensor, la, b: Tensor, lb, c: Tensor, lc, m, options) -> int:
    """Packs the descriptors of a, b, c (and the argmax m, or None) and calls fn once."""
    sc = _scratch
    if m is None:
        st, (ka, kb, kc) = sc.layout((len(la), len(lb), len(lc)))
        st.pack_into(sc.buffer, 0, a.data_ptr(), *ka, b.data_ptr(), *kb, c.data_ptr(), *kc,
                     *a.shape, *a.stride(), *la, *b.shape, *b.stride(), *lb, *c.shape, *c.stride(), *lc)
        d = sc.descriptors
        return fn(s, t, d[0], d[1], d[2], options)
    st, (ka, kb, kc, km) = sc.layout((len(la), len(lb), len(lc), len(lc)))
    st.pack_into(sc.buffer, 0, a.data_ptr(), *ka, b.data_ptr(), *kb, c.data_ptr(), *kc, m.data_ptr(), *km,
                 *a.shape, *a.stride(), *la, *b.shape, *b.stride(), *lb, *c.shape, *c.stride(), *lc,
                 *m.shape, *m.stride(), *lc)
    d = sc.descriptors
    return fn(s, t, d[0], d[1], d[2], d[3], options)


def _call_counting(fn, t: int, a, la, b, lb, c, lc, options) -> int:
    """The same for the counting contraction: a, b and c are (values, counts) pairs."""
    sc = _scratch
    (av, ac), (bv, bc), (cv, cc) = a, b, c
    st, (k0, k1, k2, k3, k4, k5) = sc.layout((len(la), len(la), len(lb), len(lb), len(lc), len(lc)))
    st.pack_into(sc.buffer, 0, av.data_ptr(), *k0, ac.data_ptr(), *k1, bv.data_ptr(), *k2, bc.data_ptr(), *k3,
                 cv.data_ptr(), *k4, cc.data_ptr(), *k5,
                 *av.shape, *av.stride(), *la, *ac.shape, *ac.stride(), *la, *bv.shape, *bv.stride(), *lb,
                 *bc.shape, *bc.stride(), *lb, *cv.shape, *cv.stride(), *lc, *cc.shape, *cc.stride(), *lc)
    d = sc.descriptors
    return fn(t, d[0], d[1], d[2], d[3], d[4], d[5], options)


def _grouped_copy(t: Tensor, labels, order) -> Tensor:
    """t's dimensions in the label order `order`, dense: a view for every merge the library makes."""
    return t.permute([labels.index(l) for l in order]).contiguous()


def _copied_call(call, a: list, la, b: list, lb, outputs: list, lc, shape) -> int:
    """After the GPU refused the strides: every part of a and b (a tensor, or a pair's values and
    counts) copied into (batch, left, contracted) and (batch, contracted, right) order, then
    call(a, la, b, lb, outputs, lc) once. Where lc's order puts C's batch between its rows or
    columns (no output view: batches may not interleave), the product writes (batch, left, right)
    buffers and torch permutes them back into `outputs`."""
    batch = [l for l in lc if l in la and l in lb]
    contracted = [l for l in la if l in lb and l not in lc]
    left = [l for l in lc if l in la and l not in lb]
    right = [l for l in lc if l in lb and l not in la]
    ga, gb = batch + left + contracted, batch + contracted + right
    a, b = [_grouped_copy(x, la, ga) for x in a], [_grouped_copy(x, lb, gb) for x in b]
    grouped = tuple(batch + left + right)
    if grouped == tuple(lc):
        return call(a, ga, b, gb, outputs, lc)
    size = dict(zip(lc, shape))
    dims = [size[l] for l in grouped]
    staged = [torch.empty(dims, dtype=x.dtype, device=x.device) for x in outputs]
    status = call(a, ga, b, gb, staged, grouped)
    back = [grouped.index(l) for l in lc]
    for x, g in zip(outputs, staged):
        x.copy_(g.permute(back))
    return status


def run(a: Tensor, b: Tensor, la, lb, lc, shape, s: int, t: int, with_argmax: bool, refused: list | None = None):
    """The contraction into a new dense C of `shape` (lc's sizes): one C ABI call (two on the GPU
    where the first refuses the operands' strides). No checks beyond the library's. `refused`, a
    one-element list that a caller keeps per step of a program, remembers that the GPU refused
    this step's strides, so that the next run copies first instead of asking again."""
    c = torch.empty(shape, dtype=a.dtype, device=a.device)
    m = torch.empty(shape, dtype=torch.int32, device=a.device) if with_argmax else None
    if a.is_cuda:
        options = device_options(a.device)
        fn = _contract_argmax_c if with_argmax else _contract_c
        status = UnsupportedError.status
        if not (refused and refused[0]):
            status = _call(fn, s, t, a, la, b, lb, c, lc, m, options)
            if status == UnsupportedError.status and refused is not None:
                refused[0] = True
        if status == UnsupportedError.status:  # strides with no batched view: copy into one
            def call(a, la, b, lb, out, lc):
                return _call(fn, s, t, a[0], la, b[0], lb, out[0], lc, out[1] if with_argmax else None, options)

            status = _copied_call(call, [a], la, [b], lb, [c, m] if with_argmax else [c], lc, shape)
    else:
        fn = _host_contract_argmax_c if with_argmax else _host_contract_c
        status = _call(fn, s, t, a, la, b, lb, c, lc, m, host_options())
    if status:
        raise _native.library_error(status, "tropical.contract: ")
    return (c, m) if with_argmax else c


def run_counting(a, b, la, lb, lc, shape, t: int, refused: list | None = None) -> tuple[Tensor, Tensor]:
    """The counting contraction of the pairs a = (values, counts) and b into a new dense (values,
    counts) pair of `shape`, as run does (counts float64; no checks beyond the library's)."""
    values = a[0]
    c = (torch.empty(shape, dtype=values.dtype, device=values.device),
         torch.empty(shape, dtype=torch.float64, device=values.device))
    if values.is_cuda:
        options = device_options(values.device)
        status = UnsupportedError.status
        if not (refused and refused[0]):
            status = _call_counting(_counting_contract_c, t, a, la, b, lb, c, lc, options)
            if status == UnsupportedError.status and refused is not None:
                refused[0] = True
        if status == UnsupportedError.status:
            def call(a, la, b, lb, out, lc):
                return _call_counting(_counting_contract_c, t, a, la, b, lb, out, lc, options)

            status = _copied_call(call, list(a), la, list(b), lb, list(c), lc, shape)
    else:
        status = _call_counting(_host_counting_contract_c, t, a, la, b, lb, c, lc, host_options())
    if status:
        raise _native.library_error(status, "tropical.counting_contract: ")
    return c


# --- the ops ----------------------------------------------------------------------------------


def _check(op: str, a: Tensor, b: Tensor, la, lb, lc, semiring: str, with_argmax: bool = False):
    """Validates the op's arguments; returns (semiring code, dtype code, C's shape)."""
    s = semiring_code(semiring)
    if with_argmax:
        check_argmax(f"tropical.{op}", s)
    found = _check_tensors(op, a, b, la, lb, lc)
    check_semiring_dtype(op, s, a)
    return (s, *found)


def _check_tensors(op: str, a: Tensor, b: Tensor, la, lb, lc):
    """Validates a, b and the labels; returns (dtype code, C's shape)."""
    check_devices(f"tropical.{op}", {"a": a, "b": b})
    t = dtype_code(a, f"tropical.{op}: a")
    if b.dtype != a.dtype:
        raise InvalidArgumentError(f"tropical.{op}: a is {a.dtype} but b is {b.dtype}; convert one of them")
    sizes = {}
    for name, x, labels in (("a", a, la), ("b", b, lb)):
        if len(labels) != x.dim():
            raise InvalidArgumentError(f"tropical.{op}: {name} has {x.dim()} dimensions but {len(labels)} labels")
        if len(set(labels)) != len(labels):
            raise InvalidArgumentError(f"tropical.{op}: the labels of {name} ({list(labels)}) repeat one; take "
                                       f"the diagonal first (Tensor.diagonal), or use tropical_gemm.einsum")
        for l, n in zip(labels, x.shape):
            if sizes.setdefault(l, n) != n:
                raise InvalidArgumentError(f"tropical.{op}: label {l} has size {sizes[l]} in a but {n} in b")
    if len(set(lc)) != len(lc) or any(l not in sizes for l in lc):
        raise InvalidArgumentError(f"tropical.{op}: the output labels {list(lc)} must be distinct labels of a or b")
    alone = [l for l in sizes if l not in lc and (l in la) != (l in lb)]
    if alone:
        raise InvalidArgumentError(f"tropical.{op}: labels {alone} appear in one operand and not in the output; "
                                   f"reduce them first (tropical_gemm.einsum does)")
    if len(lc) > _MAX_RANK or len(la) > _MAX_RANK or len(lb) > _MAX_RANK:
        raise InvalidArgumentError(f"tropical.{op}: at most {_MAX_RANK} dimensions per tensor")
    return t, [sizes[l] for l in lc]


def _impl(op: str, with_argmax: bool):
    def impl(a, b, la, lb, lc, semiring="maxplus"):
        s, t, shape = _check(op, a, b, la, lb, lc, semiring, with_argmax)
        return run(a, b, tuple(la), tuple(lb), tuple(lc), shape, s, t, with_argmax)

    return impl


def _fake(op: str, with_argmax: bool):
    def fake(a, b, la, lb, lc, semiring="maxplus"):
        _, _, shape = _check(op, a, b, la, lb, lc, semiring, with_argmax)
        c = a.new_empty(shape)
        return (c, a.new_empty(shape, dtype=torch.int32)) if with_argmax else c

    return fake


_SCHEMA = "(Tensor a, Tensor b, int[] la, int[] lb, int[] lc, str semiring='maxplus')"
for _name, _with_argmax in (("contract", False), ("contract_argmax", True)):
    _impl_fn = _impl(_name, _with_argmax)
    _registry.define(_name, _SCHEMA + (" -> (Tensor, Tensor)" if _with_argmax else " -> Tensor"), _impl_fn, _impl_fn,
                _fake(_name, _with_argmax))

contract = torch.ops.tropical.contract
contract_argmax = torch.ops.tropical.contract_argmax

def _check_counting(a_values: Tensor, a_counts: Tensor, b_values: Tensor, b_counts: Tensor, la, lb, lc):
    """Validates counting_contract's arguments; returns (dtype code, C's shape)."""
    op = "counting_contract"
    for name, v, c in (("a", a_values, a_counts), ("b", b_values, b_counts)):
        check_counting_pair(f"tropical.{op}", name, v, c)
    return _check_tensors(op, a_values, b_values, la, lb, lc)


def _counting_impl(a_values, a_counts, b_values, b_counts, la, lb, lc):
    t, shape = _check_counting(a_values, a_counts, b_values, b_counts, la, lb, lc)
    a, b = (a_values, a_counts.to(torch.float64)), (b_values, b_counts.to(torch.float64))
    return run_counting(a, b, tuple(la), tuple(lb), tuple(lc), shape, t)


def _counting_fake(a_values, a_counts, b_values, b_counts, la, lb, lc):
    _, shape = _check_counting(a_values, a_counts, b_values, b_counts, la, lb, lc)
    return a_values.new_empty(shape), a_values.new_empty(shape, dtype=torch.float64)


_registry.define("counting_contract", "(Tensor a_values, Tensor a_counts, Tensor b_values, Tensor b_counts, int[] la, "
                 "int[] lb, int[] lc) -> (Tensor, Tensor)", _counting_impl, _counting_impl, _counting_fake)
counting_contract = torch.ops.tropical.counting_contract

# --- autograd ---------------------------------------------------------------------------------


def _setup(ctx, inputs, output):
    a, b, la, lb, lc = inputs[:5]
    ctx.labels = (tuple(la), tuple(lb), tuple(lc))
    ctx.semiring = inputs[5] if len(inputs) > 5 else "maxplus"
    if isinstance(output, tuple):
        ctx.save_for_backward(a, b, output[1])
    elif ctx.semiring in READS_RESULT:  # LogPlus: the backward reads C in the argmax's place
        ctx.save_for_backward(a, b, output)
    else:
        ctx.save_for_backward(a, b)


def _as3(x: Tensor, labels, groups, sizes) -> Tensor:
    """x permuted to the label groups in turn and reshaped to (batch, rows, cols)."""
    order = [labels.index(l) for g in groups for l in g]
    dims = []
    for g in groups:
        n = 1
        for l in g:
            n *= sizes[l]
        dims.append(n)
    return x.permute(order).reshape(dims)


def _from3(g: Tensor, groups, labels, sizes) -> Tensor:
    """The inverse of _as3 for a gradient: (batch, rows, cols) back to `labels`' order."""
    flat = [l for grp in groups for l in grp]
    return g.reshape([sizes[l] for l in flat]).permute([flat.index(l) for l in labels])


def _gradients(ctx, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor):
    """The gradients through the batched backward ops; `argmax` is the forward's C for a semiring whose
    gradient reads it (LogPlus), which has C's labels as the argmax has."""
    la, lb, lc = ctx.labels
    sizes = dict(zip(la, a.shape))
    sizes.update(zip(lb, b.shape))
    batch = [l for l in lc if l in la and l in lb]
    left = [l for l in lc if l in la and l not in lb]
    right = [l for l in lc if l in lb and l not in la]
    contracted = [l for l in la if l in lb and l not in lc]  # the argmax's order
    out = (batch, left, right)
    a_groups, b_groups = (batch, left, contracted), (batch, contracted, right)
    gc3, m3 = _as3(grad_c, lc, out, sizes), _as3(argmax, lc, out, sizes)
    a3, b3 = _as3(a, la, a_groups, sizes), _as3(b, lb, b_groups, sizes)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _from3(ops.gemm_backward_a(gc3, m3, a3, b3, ctx.semiring), a_groups, la, sizes)
    if ctx.needs_input_grad[1]:
        grad_b = _from3(ops.gemm_backward_b(gc3, m3, a3, b3, ctx.semiring), b_groups, lb, sizes)
    return grad_a, grad_b, None, None, None, None


def _backward_saved(ctx, grad_c, grad_argmax):
    a, b, argmax = ctx.saved_tensors
    return _gradients(ctx, grad_c, argmax, a, b)


def _backward_recompute(ctx, grad_c):
    saved = ctx.saved_tensors
    if len(saved) == 3:  # the forward's C, kept by _setup
        return _gradients(ctx, grad_c, saved[2], saved[0], saved[1])
    a, b = saved
    la, lb, lc = ctx.labels
    _, argmax = contract_argmax(a, b, la, lb, lc, ctx.semiring)
    return _gradients(ctx, grad_c, argmax, a, b)


_autograd.register_autograd(_registry.LIBRARY, "contract", _backward_recompute, _setup, 2,
                            _registry.IMPLS["contract"])
_autograd.register_autograd(_registry.LIBRARY, "contract_argmax", _backward_saved, _setup, 2,
                            _registry.IMPLS["contract_argmax"])

