"""The custom ops ``torch.ops.tropical.*``, registered with ``torch.library``.

=====================================================================  ==========================
op                                                                     returns
=====================================================================  ==========================
``gemm(Tensor a, Tensor b, str semiring="maxplus")``                   ``C`` (M x N)
``gemm_argmax(Tensor a, Tensor b, str semiring="maxplus")``            ``(C, argmax)`` (int32)
``bgemm(Tensor a, Tensor b, str semiring="maxplus")``                  ``C`` (n x M x N)
``bgemm_argmax(Tensor a, Tensor b, str semiring="maxplus")``           ``(C, argmax)``
``gemm_backward_a(Tensor grad_c, Tensor argmax, Tensor a, Tensor b,    ``grad_A`` (shaped like a)
str semiring)``
``gemm_backward_b(...)`` (same arguments)                              ``grad_B`` (shaped like b)
=====================================================================  ==========================

``a`` is M x K and ``b`` K x N (batched: n x M x K and n x K x N, where a batch of 1 broadcasts);
semirings ``"maxplus"``, ``"minplus"``, ``"maxmul"``; dtypes float32, float64, int32, int64. The
semantics are the library's (README, "Semantics"). The backward ops take 2-D or 3-D operands.

Each op has a CUDA kernel (the library, through the package's ``tgh_gpu_run``, on PyTorch's current
stream of the tensors' device: no synchronisation, outputs from PyTorch's caching allocator), a CPU
kernel (the CPU reference), a fake implementation (shapes only, for ``torch.compile`` and meta
tensors) and, for the products, an autograd formula through the backward ops. ``gemm`` and
``bgemm`` recompute the argmax in their backward; ``tropical_gemm.matmul`` calls the ``_argmax``
ops when gradients are needed so that nothing is computed twice.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _native, _nvrtc
from ._native import (
    BACKWARD_A,
    BACKWARD_B,
    COL_MAJOR,
    GEMM,
    GEMM_ARGMAX,
    GPU_CALL,
    NO_MATRIX,
    ROW_MAJOR,
    SEMIRINGS,
    VIEW,
    InvalidArgumentError,
    UnsupportedError,
)

NAMESPACE = "tropical"

_DTYPES = {torch.float32: 0, torch.float64: 1, torch.int32: 2, torch.int64: 3}
_FLOATS = (torch.float32, torch.float64)

# --- checks, shared by the real and the fake implementations ----------------------------------


def semiring_code(semiring: str) -> int:
    code = SEMIRINGS.get(semiring)
    if code is None:
        raise InvalidArgumentError(
            f"unknown semiring {semiring!r}: use 'maxplus' (max, +), 'minplus' (min, +) or 'maxmul' (max, x)"
        )
    return code


def _dtype_code(t: Tensor, what: str) -> int:
    code = _DTYPES.get(t.dtype)
    if code is None:
        hint = ".float()" if t.is_floating_point() or t.is_complex() else ".long()"
        if t.dtype == torch.bool or t.dtype in (torch.int8, torch.int16, torch.uint8):
            hint = ".int()"
        raise UnsupportedError(
            f"{what} has dtype {t.dtype}; tropical_gemm supports float32, float64, int32 and int64: "
            f"convert it first, e.g. with {hint}"
        )
    return code


def _check_devices(op: str, tensors: dict[str, Tensor]) -> None:
    items = list(tensors.items())
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.device != first.device:
            raise InvalidArgumentError(
                f"tropical.{op}: {first_name} is on {first.device} but {name} is on {t.device}: all tensors "
                f"must be on one device; move them with .to({first_name}.device) (or .cpu(), .cuda())"
            )


def check_product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool) -> tuple[int, int]:
    """Validates a product's operands; returns (semiring code, dtype code)."""
    return _check_product(op, a, b, semiring, batched)[:2]


def _check_product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool):
    """check_product, returning (semiring code, dtype code, a.shape, b.shape). Valid operands pass a
    few cheap tests; anything else goes through _explain_product, which raises the error that says
    what is wrong (the same tests, in the order of its messages)."""
    s = SEMIRINGS.get(semiring)
    dtype = a.dtype
    t = _DTYPES.get(dtype)
    if s is not None and t is not None and b.dtype == dtype:
        sa, sb = a.shape, b.shape
        if batched:
            if (
                len(sa) == 3
                and len(sb) == 3
                and sa[2] == sb[1]
                and (sa[0] == sb[0] or sa[0] == 1 or sb[0] == 1)
                and a.device == b.device
            ):
                return s, t, sa, sb
        elif len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and a.device == b.device:
            return s, t, sa, sb
    s, t = _explain_product(op, a, b, semiring, batched)
    return s, t, a.shape, b.shape


def _explain_product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool) -> tuple[int, int]:
    s = semiring_code(semiring)
    dims = 3 if batched else 2
    if a.dim() != dims or b.dim() != dims:
        other = "tropical.gemm for 2-D" if batched else "tropical.bgemm for 3-D (batched)"
        raise InvalidArgumentError(
            f"tropical.{op} takes {dims}-D tensors, but a is {a.dim()}-D and b is {b.dim()}-D; use {other} "
            f"tensors, or tropical_gemm.matmul, which takes any of them"
        )
    t = _dtype_code(a, "a")
    if b.dtype != a.dtype:
        raise InvalidArgumentError(
            f"tropical.{op}: a is {a.dtype} but b is {b.dtype}: both operands must have the same dtype; "
            f"convert one, e.g. b.to(a.dtype)"
        )
    _check_devices(op, {"a": a, "b": b})
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(
            f"tropical.{op}: a is {tuple(a.shape)} and b is {tuple(b.shape)}: a's columns (K = {a.shape[-1]}) "
            f"must equal b's rows ({b.shape[-2]})"
        )
    if batched and a.shape[0] != b.shape[0] and a.shape[0] != 1 and b.shape[0] != 1:
        raise InvalidArgumentError(
            f"tropical.{op}: batch sizes {a.shape[0]} (a) and {b.shape[0]} (b) differ; they must be equal, "
            f"or one of them 1 (it broadcasts)"
        )
    return s, t


def check_backward(op: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> tuple[int, int]:
    s = semiring_code(semiring)
    batched = grad_c.dim() == 3
    if grad_c.dim() not in (2, 3) or a.dim() != grad_c.dim() or b.dim() != grad_c.dim():
        raise InvalidArgumentError(
            f"tropical.{op}: grad_c, a and b must all be 2-D or all 3-D; they are {grad_c.dim()}-D, "
            f"{a.dim()}-D and {b.dim()}-D"
        )
    t = _dtype_code(a, "a")
    if a.dtype not in _FLOATS:
        raise UnsupportedError(
            f"tropical.{op}: gradients are defined for float32 and float64, not {a.dtype}; convert the "
            f"operands to floating point"
        )
    if b.dtype != a.dtype or grad_c.dtype != a.dtype:
        raise InvalidArgumentError(
            f"tropical.{op}: grad_c, a and b must share one dtype; they are {grad_c.dtype}, {a.dtype}, {b.dtype}"
        )
    if argmax.dtype != torch.int32:
        raise InvalidArgumentError(f"tropical.{op}: argmax must be int32 (as gemm_argmax returns it), not {argmax.dtype}")
    _check_devices(op, {"grad_c": grad_c, "argmax": argmax, "a": a, "b": b})
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k or grad_c.shape[-2] != m or grad_c.shape[-1] != n or argmax.shape != grad_c.shape:
        raise InvalidArgumentError(
            f"tropical.{op}: shapes do not fit a product: a {tuple(a.shape)}, b {tuple(b.shape)}, "
            f"grad_c {tuple(grad_c.shape)}, argmax {tuple(argmax.shape)}"
        )
    if batched:
        count = grad_c.shape[0]
        for name, t_ in (("a", a), ("b", b)):
            if t_.shape[0] != count and t_.shape[0] != 1:
                raise InvalidArgumentError(
                    f"tropical.{op}: {name} has a batch of {t_.shape[0]} but grad_c has {count}; it must be "
                    f"{count} or 1"
                )
    return s, t


def _unsupported_device(op: str, t: Tensor) -> UnsupportedError:
    return UnsupportedError(
        f"tropical.{op}: tensors on {t.device.type} are not supported; tropical_gemm runs on CUDA devices "
        f"and on the CPU: move them with .cuda() or .cpu()"
    )


# --- descriptors ------------------------------------------------------------------------------


def _gpu_matrix(t: Tensor, batched: bool) -> tuple[tuple, Tensor]:
    """The fields of a tropical_matrix for t (2-D, or 3-D with the batch first), without a copy
    where the strides allow: inner stride 1 -> row-major, ld = the outer stride; outer stride 1 ->
    column-major; anything else -> .contiguous(). A batch of 1 gets batch stride 0 (it broadcasts).
    Returns (data, rows, cols, ld, layout, batch stride) and the tensor it points into (keep it
    alive until the launch is queued)."""
    shape, strides = t.shape, t.stride()
    rows, cols = shape[-2], shape[-1]
    rs, cs = strides[-2], strides[-1]
    if rows == 0 or cols == 0:
        layout, ld = ROW_MAJOR, max(cols, 1)
    elif (cs == 1 or cols == 1) and (rows == 1 or rs >= cols):
        layout, ld = ROW_MAJOR, (rs if rows > 1 else cols)
    elif (rs == 1 or rows == 1) and (cols == 1 or cs >= rows):
        layout, ld = COL_MAJOR, (cs if cols > 1 else rows)
    else:
        t = t.contiguous()
        layout, ld = ROW_MAJOR, cols
        strides = t.stride()
    batch_stride = (strides[0] if shape[0] > 1 else 0) if batched else 0
    return (t.data_ptr(), rows, cols, ld, layout, batch_stride), t


def _cpu_view(t: Tensor, batched: bool) -> bytes:
    """A tgh_view for the CPU reference, which takes any strides."""
    st = t.stride()
    batch_stride = (st[0] if t.shape[0] > 1 else 0) if batched else 0
    return VIEW.pack(t.data_ptr(), t.shape[-2], t.shape[-1], st[-2], st[-1], batch_stride)


def _out_view(t: Tensor, batched: bool, batch_stride: int | None = None) -> bytes:
    st = t.stride()
    bs = (st[0] if batched else 0) if batch_stride is None else batch_stride
    return VIEW.pack(t.data_ptr(), t.shape[-2], t.shape[-1], st[-2], st[-1], bs)


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(index: int) -> int:
    """PyTorch's current stream on CUDA device `index`, as a raw handle."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


# --- implementations --------------------------------------------------------------------------

# The GPU path: one packed tgh_gpu_call per launch (python/src/host_api.cpp). The tensors' device is
# known, so the library skips asking the driver about each pointer and the stream.
_gpu_run = _native.host.tgh_gpu_run
_pack_call = GPU_CALL.pack


def _launch(op: str, operation: int, s: int, t: int, index: int, *operands_and_count) -> None:
    """Queues one tgh_gpu_call on PyTorch's current stream of CUDA device `index`;
    `operands_and_count` is the fields of a, b, c, argmax and grad, then the batch count."""
    if not _nvrtc._done:
        _nvrtc.ensure()
    status = _gpu_run(_pack_call(operation, s, t, index, *operands_and_count, _stream(index), 0, 0))
    if status:
        raise _native.host_error(status, f"tropical.{op}: ")
_cpu_gemm_c = _native.host.tgh_cpu_gemm
_cpu_backward_a_c = _native.host.tgh_cpu_backward_a
_cpu_backward_b_c = _native.host.tgh_cpu_backward_b


def _product_cuda(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool, with_argmax: bool):
    s, t, sa, sb = _check_product(op, a, b, semiring, batched)
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
    da, a_ = _gpu_matrix(a, batched)
    db, b_ = _gpu_matrix(b, batched)
    dm = (argmax.data_ptr(), m, n, n, ROW_MAJOR, m * n) if with_argmax else NO_MATRIX
    _launch(op, GEMM_ARGMAX if with_argmax else GEMM, s, t, device.index, *da, *db,
            c.data_ptr(), m, n, n, ROW_MAJOR, m * n, *dm, *NO_MATRIX, count)
    return (c, argmax) if with_argmax else c


def _product_cpu(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool, with_argmax: bool):
    s, t, sa, sb = _check_product(op, a, b, semiring, batched)
    if batched:
        count = sb[0] if sa[0] == 1 else sa[0]  # a batch of 1 broadcasts, also against 0
        c = torch.empty(count, sa[1], sb[2], dtype=a.dtype)
        argmax = torch.empty(count, sa[1], sb[2], dtype=torch.int32) if with_argmax else None
        if count == 0:  # an empty batch: nothing to compute, and the empty operand may have no memory
            return (c, argmax) if with_argmax else c
    else:
        count = 1
        c = torch.empty(sa[0], sb[1], dtype=a.dtype)
        argmax = torch.empty(sa[0], sb[1], dtype=torch.int32) if with_argmax else None
    va, vb = _cpu_view(a, batched), _cpu_view(b, batched)
    vc = _out_view(c, batched)
    vm = _out_view(argmax, batched) if with_argmax else None
    status = _cpu_gemm_c(s, t, va, vb, vc, vm, count)
    if status:
        raise _native.host_error(status, f"tropical.{op}: ")
    return (c, argmax) if with_argmax else c


def _backward_cuda(op: str, which: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> Tensor:
    s, t = check_backward(op, grad_c, argmax, a, b, semiring)
    device = grad_c.device
    batched = grad_c.dim() == 3
    count = grad_c.shape[0] if batched else 1
    target = a if which == "a" else b
    rows, cols = target.shape[-2], target.shape[-1]
    # The kernels cannot sum a batch into one matrix (outputs may not overlap): a broadcast operand
    # gets the gradient of every product, summed afterwards.
    shape = (count, rows, cols) if batched else (rows, cols)
    if count == 0:  # no products, no contributions
        return torch.zeros(target.shape, dtype=a.dtype, device=device)
    grad = torch.empty(shape, dtype=a.dtype, device=device)
    dg = (grad.data_ptr(), rows, cols, cols, ROW_MAJOR, rows * cols)
    dgc, grad_c_ = _gpu_matrix(grad_c, batched)
    dam, argmax_ = _gpu_matrix(argmax, batched)
    other = b if which == "a" else a
    do, other_ = _gpu_matrix(other, batched) if s == SEMIRINGS["maxmul"] else (NO_MATRIX, None)
    da, db = (NO_MATRIX, do) if which == "a" else (do, NO_MATRIX)
    _launch(op, BACKWARD_A if which == "a" else BACKWARD_B, s, t, device.index, *da, *db, *dgc, *dam, *dg, count)
    if batched and target.shape[0] != count:
        grad = grad.sum(0, keepdim=True)
    return grad


def _backward_cpu(op: str, which: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> Tensor:
    s, t = check_backward(op, grad_c, argmax, a, b, semiring)
    batched = grad_c.dim() == 3
    count = grad_c.shape[0] if batched else 1
    target = a if which == "a" else b
    grad = torch.zeros(target.shape, dtype=a.dtype)
    if count == 0:  # no products, no contributions
        return grad
    # The reference adds into grad: a broadcast operand (batch 1) sums its batch in place.
    dg = _out_view(grad, batched, batch_stride=(grad.stride(0) if target.shape[0] > 1 else 0) if batched else 0)
    other = b if which == "a" else a
    fn = _cpu_backward_a_c if which == "a" else _cpu_backward_b_c
    status = fn(
        s, t, _cpu_view(grad_c, batched), _cpu_view(argmax, batched), _cpu_view(other, batched), dg, count
    )
    if status:
        raise _native.host_error(status, f"tropical.{op}: ")
    return grad


def _dispatch(op: str, cpu, cuda):
    """The catch-all implementation: any device other than CPU and CUDA gets an error that says what to do."""

    def impl(*args):
        t = args[0]
        if t.device.type == "cpu":
            return cpu(*args)
        if t.device.type == "cuda":
            return cuda(*args)
        raise _unsupported_device(op, t)

    return impl


# --- registration -----------------------------------------------------------------------------

_lib = torch.library.Library(NAMESPACE, "DEF")


_IMPLS: dict = {}  # op name -> (CPU implementation, CUDA implementation)


def _define(name: str, schema: str, cpu, cuda, fake):
    _IMPLS[name] = (cpu, cuda)
    _lib.define(f"{name}{schema}")
    _lib.impl(name, _dispatch(name, cpu, cuda), "CompositeExplicitAutograd")
    _lib.impl(name, cpu, "CPU")
    _lib.impl(name, cuda, "CUDA")
    torch.library.register_fake(f"{NAMESPACE}::{name}", fake, lib=_lib)


_PRODUCT = "(Tensor a, Tensor b, str semiring='maxplus')"
_BACKWARD = "(Tensor grad_c, Tensor argmax, Tensor a, Tensor b, str semiring='maxplus') -> Tensor"


def _product_fake(op: str, batched: bool, with_argmax: bool):
    def fake(a: Tensor, b: Tensor, semiring: str = "maxplus"):
        check_product(op, a, b, semiring, batched)
        if batched:
            count = a.shape[0] if b.shape[0] == 1 else b.shape[0]
            shape = (count, a.shape[1], b.shape[2])
        else:
            shape = (a.shape[0], b.shape[1])
        c = a.new_empty(shape)
        return (c, a.new_empty(shape, dtype=torch.int32)) if with_argmax else c

    return fake


def _product_impls(op: str, batched: bool, with_argmax: bool):
    def cpu(a, b, semiring="maxplus"):
        return _product_cpu(op, a, b, semiring, batched, with_argmax)

    def cuda(a, b, semiring="maxplus"):
        return _product_cuda(op, a, b, semiring, batched, with_argmax)

    return cpu, cuda


def _backward_impls(op: str, which: str):
    def cpu(grad_c, argmax, a, b, semiring="maxplus"):
        return _backward_cpu(op, which, grad_c, argmax, a, b, semiring)

    def cuda(grad_c, argmax, a, b, semiring="maxplus"):
        return _backward_cuda(op, which, grad_c, argmax, a, b, semiring)

    def fake(grad_c, argmax, a, b, semiring="maxplus"):
        check_backward(op, grad_c, argmax, a, b, semiring)
        target = a if which == "a" else b
        return target.new_empty(target.shape)

    return cpu, cuda, fake


for _name, _batched, _with_argmax in (
    ("gemm", False, False),
    ("gemm_argmax", False, True),
    ("bgemm", True, False),
    ("bgemm_argmax", True, True),
):
    _out = " -> (Tensor, Tensor)" if _with_argmax else " -> Tensor"
    _define(_name, _PRODUCT + _out, *_product_impls(_name, _batched, _with_argmax),
            _product_fake(_name, _batched, _with_argmax))

for _name, _which in (("gemm_backward_a", "a"), ("gemm_backward_b", "b")):
    _define(_name, _BACKWARD, *_backward_impls(_name, _which))

# --- autograd ---------------------------------------------------------------------------------


def _route(ctx, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor):
    grad_a = grad_b = None
    if grad_c is None:
        return None, None
    if ctx.needs_input_grad[0]:
        grad_a = torch.ops.tropical.gemm_backward_a(grad_c, argmax, a, b, ctx.semiring)
    if ctx.needs_input_grad[1]:
        grad_b = torch.ops.tropical.gemm_backward_b(grad_c, argmax, a, b, ctx.semiring)
    return grad_a, grad_b


def _setup(ctx, inputs, output):
    a, b = inputs[0], inputs[1]
    ctx.semiring = inputs[2] if len(inputs) > 2 else "maxplus"
    if isinstance(output, tuple):
        ctx.save_for_backward(a, b, output[1])
    else:
        ctx.save_for_backward(a, b)


def _backward_recompute(argmax_op):
    def backward(ctx, grad_c):
        a, b = ctx.saved_tensors
        # The op does not keep its argmax; tropical_gemm.matmul avoids this by calling the _argmax op.
        _, argmax = argmax_op(a, b, ctx.semiring)
        return (*_route(ctx, grad_c, argmax, a, b), None)

    return backward


def _backward_saved(ctx, grad_c, grad_argmax):
    a, b, argmax = ctx.saved_tensors
    return (*_route(ctx, grad_c, argmax, a, b), None)


# register_autograd's Autograd kernel is Python that, when no input requires grad, redispatches
# below autograd: a second round trip through the dispatcher and Python (about half the host time
# of a small product). _register_autograd keeps that kernel for everything it handles, and in front
# of it sends the common case -- no gradient wanted, plain CPU or CUDA tensors, no mode, subclass,
# functionalization or transform below autograd (the dispatch key set says so) -- straight to the
# implementation the redispatch would reach.
try:
    from torch._library.autograd import Info as _Info, make_autograd_impl as _make_autograd_impl

    _after_autograd = torch._C._after_autograd_keyset
    _grad_enabled = torch._C.is_grad_enabled
    _DispatchKey = torch._C.DispatchKey
    _PLAIN_CPU = torch._C.DispatchKeySet(_DispatchKey.CPU).raw_repr()
    _PLAIN_CUDA = torch._C.DispatchKeySet(_DispatchKey.CUDA).raw_repr()
    _IN_PLACE_OR_VIEW = _DispatchKey.ADInplaceOrView
    # The key-set operations _direct_impl uses, tried once here so that a PyTorch without them takes
    # the fallback now rather than failing at the first call.
    (torch._C.DispatchKeySet(_DispatchKey.AutogradCPU) & _after_autograd).remove(_IN_PLACE_OR_VIEW).raw_repr()
except (ImportError, AttributeError, TypeError):  # a PyTorch without them: register_autograd alone
    _make_autograd_impl = None

_UNSEEN = object()
# Whether any of an op's tensor arguments (the first 2 of a product, the first 4 of a backward op)
# requires grad, written out: any() over a generator costs more than the rest of the check.
_ANY_GRAD = {
    2: lambda args: args[0].requires_grad or args[1].requires_grad,
    4: lambda args: args[0].requires_grad or args[1].requires_grad or args[2].requires_grad or args[3].requires_grad,
}


def _direct_impl(keyset, cpu, cuda):
    """The implementation that redispatching keyset below autograd reaches with nothing in between
    (ADInplaceOrView is a fallthrough for these ops), or None."""
    rest = (keyset & _after_autograd).remove(_IN_PLACE_OR_VIEW).raw_repr()
    if rest == _PLAIN_CPU:
        return cpu
    if rest == _PLAIN_CUDA:
        return cuda
    return None


def _register_autograd(name: str, backward, setup_context, tensors: int) -> None:
    qualname = f"{NAMESPACE}::{name}"
    general = None
    if _make_autograd_impl is not None:
        try:
            general = _make_autograd_impl(getattr(torch.ops.tropical, name).default, _Info(backward, setup_context))
        except (TypeError, AttributeError):  # private API of another shape
            general = None
    if general is None:
        torch.library.register_autograd(qualname, backward, setup_context=setup_context, lib=_lib)
        return
    cpu, cuda = _IMPLS[name]
    routes: dict = {}  # keyset.raw_repr() -> implementation or None

    def route(keyset):
        impl = _direct_impl(keyset, cpu, cuda)
        if len(routes) < 64:
            routes[keyset.raw_repr()] = impl
        return impl

    wants_grad = _ANY_GRAD[tensors]

    def kernel(keyset, *args, **kwargs):
        if not kwargs and not (_grad_enabled() and wants_grad(args)):
            impl = routes.get(keyset.raw_repr(), _UNSEEN)
            if impl is _UNSEEN:
                impl = route(keyset)
            if impl is not None:
                return impl(*args)
        return general(keyset, *args, **kwargs)

    _lib.impl(name, kernel, "Autograd", with_keyset=True)


_register_autograd("gemm", _backward_recompute(torch.ops.tropical.gemm_argmax), _setup, 2)
_register_autograd("bgemm", _backward_recompute(torch.ops.tropical.bgemm_argmax), _setup, 2)
_register_autograd("gemm_argmax", _backward_saved, _setup, 2)
_register_autograd("bgemm_argmax", _backward_saved, _setup, 2)


def _no_double_backward(ctx, grad):
    raise UnsupportedError(
        "tropical_gemm computes first derivatives only: gradients of gradients (double backward, "
        "create_graph=True through a tropical product) are not implemented"
    )


def _setup_backward(ctx, inputs, output):
    pass


for _name in ("gemm_backward_a", "gemm_backward_b"):
    _register_autograd(_name, _no_double_backward, _setup_backward, 4)

gemm = torch.ops.tropical.gemm
gemm_argmax = torch.ops.tropical.gemm_argmax
bgemm = torch.ops.tropical.bgemm
bgemm_argmax = torch.ops.tropical.bgemm_argmax
gemm_backward_a = torch.ops.tropical.gemm_backward_a
gemm_backward_b = torch.ops.tropical.gemm_backward_b
