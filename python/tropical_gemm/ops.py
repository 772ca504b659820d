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
semirings ``"maxplus"``, ``"minplus"``, ``"maxmul"``, ``"maxmin"``, ``"minmax"``; dtypes float32, float64, int32, int64. The
semantics are the library's (README, "Semantics"). The backward ops take 2-D or 3-D operands.

Each op has a CUDA kernel (the library's public C ABI, on PyTorch's current stream of the tensors'
device, with a device hint: no synchronisation, outputs from PyTorch's caching allocator), a CPU
kernel (the library's host functions: SIMD on every core), a fake implementation (shapes only, for ``torch.compile`` and meta
tensors) and, for the products, an autograd formula through the backward ops. ``gemm`` and
``bgemm`` recompute the argmax in their backward; ``tropical_gemm.matmul`` calls the ``_argmax``
ops when gradients are needed so that nothing is computed twice.
The parts live in their own modules: the argument checks (``_checks``), the CPU and CUDA
implementations (``_impl``) and the autograd formulas (``_autograd``); this one registers them.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _autograd
from ._checks import NAMESPACE, check_backward, check_product, unsupported_device
from ._checks import semiring_code  # noqa: F401 (tropical_gemm.functional uses ops.semiring_code)
from ._impl import _backward_cpu, _backward_cuda, _product_cpu, _product_cuda


def _dispatch(op: str, cpu, cuda):
    """The catch-all implementation: any device other than CPU and CUDA gets an error that says what to do."""

    def impl(*args):
        t = args[0]
        if t.device.type == "cpu":
            return cpu(*args)
        if t.device.type == "cuda":
            return cuda(*args)
        raise unsupported_device(op, t)

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

_autograd.register(_lib, _IMPLS)

gemm = torch.ops.tropical.gemm
gemm_argmax = torch.ops.tropical.gemm_argmax
bgemm = torch.ops.tropical.bgemm
bgemm_argmax = torch.ops.tropical.bgemm_argmax
gemm_backward_a = torch.ops.tropical.gemm_backward_a
gemm_backward_b = torch.ops.tropical.gemm_backward_b
