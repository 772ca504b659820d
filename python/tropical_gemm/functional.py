"""The friendly layer: :func:`matmul` over the ``torch.ops.tropical`` ops, :func:`pack_bits` and
:func:`backtrack`."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, _C

_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_FAST = all(hasattr(_C, f) for f in ("_is_torch_function_mode_enabled", "_len_torch_dispatch_stack",
                                     "_are_functorch_transforms_active"))

from . import _impl, ops
from ._native import SEMIRING_ALIASES, SEMIRING_FACTS, InvalidArgumentError, semiring_list

_ALIASES = SEMIRING_ALIASES
# The semirings whose (+) selects one term (the argmax exists; the gradient follows it). The others
# (LogPlus) refuse return_argmax, and their gradient reads the forward's C (_autograd keeps it).
_SELECTS = frozenset(n for n, f in SEMIRING_FACTS.items() if f.selects)


class PackedBits(NamedTuple):
    """A boolean tensor packed along K into int32 words (:func:`pack_bits`): ``words`` has the
    tensor's shape with dimension ``dim`` (-1: the columns of an A, -2: the rows of a B) in words of
    32, bit k % 32 of word k / 32 holding element k; ``k`` is that dimension's length in booleans."""

    words: Tensor
    k: int
    dim: int


def pack_bits(x: Tensor, dim: int = -1) -> PackedBits:
    """Packs a bool or uint8 tensor (2-D, or 3-D with the batch first; nonzero is true) along ``dim``
    into int32 words, for :func:`matmul` with ``semiring="orand"``: an A along -1 (its K columns), a B
    along -2 (its K rows). Worth it for an operand used in several products, and for large ones (the
    products of bytes pack their operands again for every tile; CUDA products of more than 2^32 terms
    pack them first by themselves). Runs on the tensor's device (CPU or CUDA, PyTorch's stream)."""
    words = ops.pack_bits(x, dim)
    d = dim - x.dim() if dim >= 0 else dim
    return PackedBits(words, x.shape[d], d)


def backtrack(back: Tensor, last: Tensor) -> Tensor:
    """The best paths of a Viterbi decoder, walked back through the argmax tables of its steps.

    After T chained steps ``v_{t+1}, back[t] = matmul(v_t, W, "maxplus", return_argmax=True)`` (B rows
    of S scores; ``back[t][b, s]`` is the state at step t from which state s at step t + 1 is reached
    best), ``back`` is those tables stacked, an int32 tensor (T, B, S), and ``last`` (B,) or (B, 1),
    int32, each row's final state: the argmax of ``v_T`` over the states (``v_T.argmax(-1).int()``, or
    the argmax of ``matmul(v_T, torch.zeros(S, 1), "maxplus", return_argmax=True)``, which also gives
    the best score). Returns ``path`` (B, T + 1), int32, with ``path[b, T] = last[b]`` and
    ``path[b, t] = back[t, b, path[b, t + 1]]``: the path of states that reaches each row's final
    state best.

    The walk runs on the tensors' device (CUDA: one thread per row, on PyTorch's current stream, so the
    T x B x S tables never travel to the host; CPU: the library's host function). An index outside
    [0, S) (such as the -1 of an argmax where no term beat the semiring's zero) ends a row's walk: that
    entry and the earlier ones are -1. Tables in any layout (transposed or strided) are read as they are.
    """
    return ops.backtrack(back, last)


def _packed_matmul(a: PackedBits, b, s: str, return_argmax: bool):
    """matmul of operands that pack_bits packed: A along -1, B along -2, 2-D or 3-D (a batch of 1 broadcasts)."""
    if not isinstance(b, PackedBits) or not isinstance(a, PackedBits):
        raise InvalidArgumentError(
            "tropical_gemm.matmul: packed operands (tropical_gemm.pack_bits) go together: pack both a (dim=-1) "
            "and b (dim=-2), or neither"
        )
    if s != "orand":
        raise InvalidArgumentError(f"tropical_gemm.matmul: packed booleans are for semiring 'orand', not {s!r}")
    if a.dim != -1 or b.dim != -2:
        raise InvalidArgumentError(
            f"tropical_gemm.matmul: a must be packed along dim -1 (its columns) and b along -2 (its rows); they are "
            f"packed along {a.dim} and {b.dim}"
        )
    if a.k != b.k:
        raise InvalidArgumentError(f"tropical_gemm.matmul: a packs K = {a.k} booleans but b {b.k}: they must agree")
    wa, wb = a.words, b.words
    if wa.dim() != wb.dim():  # a 2-D operand with a batched one: a batch of 1 broadcasts
        wa = wa if wa.dim() == 3 else wa.unsqueeze(0)
        wb = wb if wb.dim() == 3 else wb.unsqueeze(0)
    return ops.gemm_packed_argmax(wa, wb, a.k) if return_argmax else ops.gemm_packed(wa, wb, a.k)


def semiring_name(semiring: str) -> str:
    """The canonical name ('maxplus', 'minplus', 'maxmul', 'maxmin', 'minmax', 'orand', 'logplus', ...: the
    library's table) of a semiring given in any common spelling ('max_plus', 'max-min', 'and-or', 'log_plus', ...)."""
    name = _ALIASES.get(semiring) if type(semiring) is str else None  # the usual spellings, as given
    if name is None:
        name = _ALIASES.get(str(semiring).lower())
    if name is None:
        ops.semiring_code(str(semiring))  # raises with the list of names
    return name


def direct_ok(a: Tensor, b: Tensor) -> bool:
    """Whether matmul may call the implementation without the dispatcher: plain tensors, no
    autograd wanted (checked by the caller), no tracing, no mode or transform that must see the op.
    Saves the dispatcher's round trips through Python (about half the host time of a small product)."""
    return (
        type(a) is Tensor
        and type(b) is Tensor
        and not _is_compiling()
        and not _C._is_torch_function_mode_enabled()
        and _C._len_torch_dispatch_stack() == 0
        and not _C._are_functorch_transforms_active()
    )


def _product(name: str, a: Tensor, b: Tensor, s: str, batched: bool, with_argmax: bool, direct: bool):
    if direct:
        # is_cuda / is_cpu: cheaper than a.device.type, which builds a device and a string.
        if a.is_cuda:
            return _impl.product_cuda(name, a, b, s, batched, with_argmax)
        if a.is_cpu:
            return _impl.product_cpu(name, a, b, s, batched, with_argmax)
    return getattr(ops, name)(a, b, s)


def matmul(a: Tensor, b: Tensor, semiring: str = "maxplus", *, return_argmax: bool = False):
    """The tropical product ``C[..., i, j] = (+)_k a[..., i, k] (x) b[..., k, j]``.

    ``semiring`` is one of {semirings} (the library's table; spellings such as ``"max_plus"`` or
    ``"log-plus"`` work too). ``"orand"`` takes bool or uint8 tensors (nonzero is
    true; C has their dtype and holds 0 or 1; the argmax is the first k whose term is true), or
    operands packed by :func:`pack_bits` (C is bool). ``"logplus"`` is the log semiring,
    ``C[i, j] = log sum_k exp(a[i, k] + b[k, j])`` (probabilities kept as logarithms: HMMs, CRFs,
    partition functions), float32 and float64 only: -inf is its zero and 0 its one; a NaN term makes
    the entry NaN, else a +inf term makes it +inf; it has no argmax (``return_argmax=True`` raises),
    and its gradient reaches every term, weighted by its share ``exp(a[i, k] + b[k, j] - C[i, j])``.
    Shapes follow :func:`torch.matmul` for 2-D and batched operands: ``(M, K) @ (K, N)``;
    ``(..., M, K) @ (K, N)`` (the leading dimensions of ``a`` are folded into M);
    ``(B, M, K) @ (B, K, N)`` with a batch of 1 broadcasting; more leading dimensions broadcast
    like :func:`torch.matmul`'s. Differentiable for float32 and float64 (the gradient flows through
    the argmax; MaxMul by the product rule; LogPlus through the softmax weights, from the C it keeps). With ``return_argmax``, returns ``(C, argmax)``, the int32
    index k that attained each entry (-1 where none beat the semiring's zero).

    It calls the ``torch.ops.tropical`` ops; where no gradient is wanted, on plain tensors outside
    ``torch.compile`` and any mode or transform, it runs their implementation directly, skipping
    the dispatcher's round trips through Python (the result is the same).
    """
    s = semiring_name(semiring)
    if isinstance(a, PackedBits) or isinstance(b, PackedBits):
        return _packed_matmul(a, b, s, return_argmax)
    a_dim, b_dim = a.dim(), b.dim()
    if a_dim < 2 or b_dim < 2:
        raise InvalidArgumentError(
            f"tropical_gemm.matmul needs matrices (2-D or more), got a {a_dim}-D and b {b_dim}-D; "
            f"add a dimension, e.g. a.unsqueeze(0) for a row vector or b.unsqueeze(-1) for a column"
        )
    grad = _grad_enabled() and (a.requires_grad or b.requires_grad)
    if s in _SELECTS:
        argmax_wanted = return_argmax or grad
    else:
        if return_argmax:
            ops.check_argmax("tropical_gemm.matmul", ops.semiring_code(s))  # raises: no single k attains a result
        argmax_wanted = False
    direct = _FAST and not grad and direct_ok(a, b)

    if a_dim == 2 and b_dim == 2:
        if argmax_wanted:
            c, argmax = _product("gemm_argmax", a, b, s, False, True, direct)
            return (c, argmax) if return_argmax else c
        return _product("gemm", a, b, s, False, False, direct)

    if b_dim == 2:
        # (..., M, K) @ (K, N): one product with the leading dimensions folded into M.
        lead = a.shape[:-1]
        flat = a.reshape(-1, a.shape[-1])
        if argmax_wanted:
            c, argmax = _product("gemm_argmax", flat, b, s, False, True, direct)
            c, argmax = c.reshape(*lead, b.shape[-1]), argmax.reshape(*lead, b.shape[-1])
            return (c, argmax) if return_argmax else c
        return _product("gemm", flat, b, s, False, False, direct).reshape(*lead, b.shape[-1])

    if a_dim <= 3 and b_dim == 3:
        a3 = a if a_dim == 3 else a.unsqueeze(0)
        batch_shape = None
        b3 = b
    else:
        batch_shape = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a3 = a.expand(*batch_shape, *a.shape[-2:]).reshape(-1, *a.shape[-2:])
        b3 = b.expand(*batch_shape, *b.shape[-2:]).reshape(-1, *b.shape[-2:])
    if argmax_wanted:
        c, argmax = _product("bgemm_argmax", a3, b3, s, True, True, direct)
    else:
        c, argmax = _product("bgemm", a3, b3, s, True, False, direct), None
    if batch_shape is not None:
        c = c.reshape(*batch_shape, *c.shape[-2:])
        argmax = argmax.reshape(*batch_shape, *argmax.shape[-2:]) if argmax is not None else None
    return (c, argmax) if return_argmax else c


# The semirings in matmul's docstring, as the library's table lists them.
matmul.__doc__ = matmul.__doc__.replace("{semirings}", semiring_list())
