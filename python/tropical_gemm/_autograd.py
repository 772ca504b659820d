"""Autograd for the ops: the products' backward through the backward ops, no double backward, and
an Autograd kernel that skips a dispatcher round trip where no gradient is wanted."""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import NAMESPACE
from ._native import READS_RESULT, UnsupportedError

_ops = getattr(torch.ops, NAMESPACE)  # resolves each op by name when used

# --- the formulas -----------------------------------------------------------------------------


def _route(ctx, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor):
    grad_a = grad_b = None
    if grad_c is None:
        return None, None
    if ctx.needs_input_grad[0]:
        grad_a = _ops.gemm_backward_a(grad_c, argmax, a, b, ctx.semiring)
    if ctx.needs_input_grad[1]:
        grad_b = _ops.gemm_backward_b(grad_c, argmax, a, b, ctx.semiring)
    return grad_a, grad_b


def _setup(ctx, inputs, output):
    a, b = inputs[0], inputs[1]
    ctx.semiring = inputs[2] if len(inputs) > 2 else "maxplus"
    if isinstance(output, tuple):
        ctx.save_for_backward(a, b, output[1])
    elif ctx.semiring in READS_RESULT:  # LogPlus: the backward reads C where the others read the argmax
        ctx.save_for_backward(a, b, output)
    else:
        ctx.save_for_backward(a, b)


def _backward_recompute(argmax_op):
    def backward(ctx, grad_c):
        saved = ctx.saved_tensors
        if len(saved) == 3:  # the forward's C, kept by _setup
            a, b, c = saved
            return (*_route(ctx, grad_c, c, a, b), None)
        a, b = saved
        # The op does not keep its argmax; tropical_gemm.matmul avoids this by calling the _argmax op.
        _, argmax = argmax_op(a, b, ctx.semiring)
        return (*_route(ctx, grad_c, argmax, a, b), None)

    return backward


def _backward_saved(ctx, grad_c, grad_argmax):
    a, b, argmax = ctx.saved_tensors
    return (*_route(ctx, grad_c, argmax, a, b), None)


def _no_double_backward(ctx, grad):
    raise UnsupportedError(
        "tropical_gemm computes first derivatives only: gradients of gradients (double backward, "
        "create_graph=True through a tropical product) are not implemented"
    )


def _setup_backward(ctx, inputs, output):
    pass


# --- registration -----------------------------------------------------------------------------
# torch.library.register_autograd's Autograd kernel is Python that, when no input requires grad,
# redispatches below autograd: a second round trip through the dispatcher and Python (about half the
# host time of a small product). register_autograd below keeps that kernel for everything it
# handles, and in front of it sends the common case -- no gradient wanted, plain CPU or CUDA
# tensors, no mode, subclass, functionalization or transform below autograd (the dispatch key set
# says so) -- straight to the implementation the redispatch would reach.
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
    # make_autograd_impl runs at an op's first call that wants a gradient (below), so its shape is
    # checked here: (op, info), info holding the backward and setup_context functions.
    _Info(None, None)
    if _make_autograd_impl.__code__.co_argcount != 2:
        raise TypeError("make_autograd_impl of another shape")
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


def register_autograd(lib, name: str, backward, setup_context, tensors: int, impls) -> None:
    """Registers op `name`'s gradient formula (torch.library.register_autograd's backward and
    setup_context) in `lib`, with the fast path to its (CPU, CUDA) `impls` where no gradient is
    wanted; `tensors` is how many leading arguments are tensors (2 or 4)."""
    if _make_autograd_impl is None:
        torch.library.register_autograd(f"{NAMESPACE}::{name}", backward, setup_context=setup_context, lib=lib)
        return
    cpu, cuda = impls
    routes: dict = {}  # keyset.raw_repr() -> implementation or None
    # register_autograd's kernel, built at the op's first call that needs it: building it (a
    # dataclass and an autograd.Function class) costs about half a millisecond per op, which was a
    # third of `import tropical_gemm`. Two threads may both build it; either one serves.
    general: list = []

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
        if not general:
            general.append(_make_autograd_impl(getattr(_ops, name).default, _Info(backward, setup_context)))
        return general[0](keyset, *args, **kwargs)

    lib.impl(name, kernel, "Autograd", with_keyset=True)


def register(lib, impls: dict) -> None:
    """Registers the autograd formulas of the ops that `lib` defined; `impls` maps an op's name to
    its (CPU, CUDA) implementations, which the fast path calls directly."""
    products = (("gemm", _backward_recompute(_ops.gemm_argmax)), ("bgemm", _backward_recompute(_ops.bgemm_argmax)),
                ("gemm_argmax", _backward_saved), ("bgemm_argmax", _backward_saved))
    for name, backward in products:
        register_autograd(lib, name, backward, _setup, 2, impls[name])
    for name in ("gemm_backward_a", "gemm_backward_b"):
        register_autograd(lib, name, _no_double_backward, _setup_backward, 4, impls[name])
