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
``pack_bits(Tensor x, int dim=-1)``                                    int32 words (see below)
``gemm_packed(Tensor a, Tensor b, int k)``                             ``C`` (M x N, or n x M x N; bool)
``gemm_packed_argmax(Tensor a, Tensor b, int k)``                      ``(C, argmax)``
``backtrack(Tensor back, Tensor last)``                                ``path`` (B x (T + 1), int32)
=====================================================================  ==========================

``a`` is M x K and ``b`` K x N (batched: n x M x K and n x K x N, where a batch of 1 broadcasts);
semirings ``"maxplus"``, ``"minplus"``, ``"maxmul"``, ``"maxmin"``, ``"minmax"``; dtypes float32, float64, int32, int64;
``"orand"`` (or, and) on bool or uint8 tensors (nonzero is true; C has their dtype, 0 or 1); and
``"logplus"`` (log-sum-exp, +) on float32 and float64 (every semiring and its dtypes: the library's table,
``tropical_gemm._native.SEMIRING_FACTS``). The semantics are the library's (README, "Semantics"). The
backward ops take 2-D or 3-D operands (OrAnd has no gradient). LogPlus's (+) combines every term, so it
has no argmax (the ``_argmax`` ops refuse it) and its backward ops take the forward's C in the
``argmax`` argument (of the operands' dtype): the gradient reaches every term k, weighted by
``exp(A[i,k] + B[k,j] - C[i,j])``; ``gemm`` and ``bgemm`` keep C for it rather than recomputing.

``pack_bits`` packs a bool or uint8 tensor (2-D or 3-D) along ``dim`` (-1: the columns of an A, -2:
the rows of a B) into int32 words, bit k % 32 of word k / 32 holding element k (the bits past K are
0); the ``*_packed`` products take an A packed along -1 and a B packed along -2 (any int32 tensors
with those bits: the bits past ``k`` are ignored), both 2-D or both 3-D (batched; a batch of 1
broadcasts): one op for both, which keeps the ops registered at import few.

``backtrack`` walks a Viterbi decoder's best paths back through the argmax tables of its T steps:
``back`` (T x B x S, int32) and the final states ``last`` (B, or B x 1, int32) give
``path[b, T] = last[b]``, ``path[b, t] = back[t, b, path[b, t + 1]]``; an index outside [0, S) ends a
row's walk, with -1 there and at the earlier steps.

Each op has a CUDA kernel (the library's public C ABI, on PyTorch's current stream of the tensors'
device, with a device hint: no synchronisation, outputs from PyTorch's caching allocator), a CPU
kernel (the library's host functions: SIMD on every core), a fake implementation (shapes only, for ``torch.compile`` and meta
tensors) and, for the products, an autograd formula through the backward ops. ``gemm`` and
``bgemm`` recompute the argmax in their backward; ``tropical_gemm.matmul`` calls the ``_argmax``
ops when gradients are needed so that nothing is computed twice.
The parts live in their own modules: the argument checks (``_checks``), the CPU and CUDA
implementations (``_impl``, through the C ABI's plumbing in ``_abi``), the autograd formulas
(``_autograd``) and the library of ops with its ``define`` (``_registry``); this one registers them.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _autograd
from ._checks import check_argmax, check_backward, check_product
from ._checks import semiring_code  # noqa: F401 (tropical_gemm.functional uses ops.semiring_code)
from ._checks import check_backtrack, check_pack, check_packed_product
from ._impl import (backtrack_cpu, backtrack_cuda, backward_cpu, backward_cuda, pack_cpu, pack_cuda,
                    packed_product_cpu, packed_product_cuda, product_cpu, product_cuda, words_for)
from ._registry import IMPLS, LIBRARY, define


_PRODUCT = "(Tensor a, Tensor b, str semiring='maxplus')"
_BACKWARD = "(Tensor grad_c, Tensor argmax, Tensor a, Tensor b, str semiring='maxplus') -> Tensor"


def _product_fake(op: str, batched: bool, with_argmax: bool):
    def fake(a: Tensor, b: Tensor, semiring: str = "maxplus"):
        s = check_product(op, a, b, semiring, batched)[0]
        if with_argmax:
            check_argmax(f"tropical.{op}", s)
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
        return product_cpu(op, a, b, semiring, batched, with_argmax)

    def cuda(a, b, semiring="maxplus"):
        return product_cuda(op, a, b, semiring, batched, with_argmax)

    return cpu, cuda


def _backward_impls(op: str, which: str):
    def cpu(grad_c, argmax, a, b, semiring="maxplus"):
        return backward_cpu(op, which, grad_c, argmax, a, b, semiring)

    def cuda(grad_c, argmax, a, b, semiring="maxplus"):
        return backward_cuda(op, which, grad_c, argmax, a, b, semiring)

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
    define(_name, _PRODUCT + _out, *_product_impls(_name, _batched, _with_argmax),
           _product_fake(_name, _batched, _with_argmax))

for _name, _which in (("gemm_backward_a", "a"), ("gemm_backward_b", "b")):
    define(_name, _BACKWARD, *_backward_impls(_name, _which))


def _pack_fake(x: Tensor, dim: int = -1) -> Tensor:
    return words_for(x, check_pack("pack_bits", x, dim))  # the real one's shape and padded strides


define("pack_bits", "(Tensor x, int dim=-1) -> Tensor", lambda x, dim=-1: pack_cpu("pack_bits", x, dim),
       lambda x, dim=-1: pack_cuda("pack_bits", x, dim), _pack_fake)


def _packed_impls(op: str, with_argmax: bool):
    def cpu(a, b, k):
        return packed_product_cpu(op, a, b, k, with_argmax)

    def cuda(a, b, k):
        return packed_product_cuda(op, a, b, k, with_argmax)

    def fake(a, b, k):
        count, m, n, _ = check_packed_product(op, a, b, k)
        shape = (count, m, n) if a.dim() == 3 else (m, n)
        c = a.new_empty(shape, dtype=torch.bool)
        return (c, a.new_empty(shape, dtype=torch.int32)) if with_argmax else c

    return cpu, cuda, fake


for _name, _with_argmax in (("gemm_packed", False), ("gemm_packed_argmax", True)):
    _out = " -> (Tensor, Tensor)" if _with_argmax else " -> Tensor"
    define(_name, "(Tensor a, Tensor b, int k)" + _out, *_packed_impls(_name, _with_argmax))


def _backtrack_fake(back: Tensor, last: Tensor) -> Tensor:
    steps, rows, _ = check_backtrack("backtrack", back, last)
    return back.new_empty((rows, steps + 1))  # int32, as back


define("backtrack", "(Tensor back, Tensor last) -> Tensor", lambda back, last: backtrack_cpu("backtrack", back, last),
       lambda back, last: backtrack_cuda("backtrack", back, last), _backtrack_fake)

_autograd.register(LIBRARY, IMPLS)

gemm = torch.ops.tropical.gemm
gemm_argmax = torch.ops.tropical.gemm_argmax
bgemm = torch.ops.tropical.bgemm
bgemm_argmax = torch.ops.tropical.bgemm_argmax
gemm_backward_a = torch.ops.tropical.gemm_backward_a
gemm_backward_b = torch.ops.tropical.gemm_backward_b
pack_bits = torch.ops.tropical.pack_bits
gemm_packed = torch.ops.tropical.gemm_packed
gemm_packed_argmax = torch.ops.tropical.gemm_packed_argmax
backtrack = torch.ops.tropical.backtrack
