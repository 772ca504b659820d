"""The counting tropical semiring in PyTorch: :func:`counting_matmul`.

Max-plus with multiplicities: an element is ``(value, count)``; ``(x)`` adds values and multiplies
counts; ``(+)`` keeps the larger value and adds the counts of equal ones; the zero is ``(-inf, 0)``.
So the product gives each entry's max-plus value and the number of ways (weighted by the inputs'
counts) that attain it. The rules for -inf, +inf and NaN, and the exactness of counts (integers up
to 2**53), are the library's (README.md, "Semantics").

The op ``torch.ops.tropical.counting_gemm(a_values, a_counts, b_values, b_counts)`` returns
``(values, counts)``: CPU tensors run through ``tropical_host_counting_gemm`` (the CPU path, on
``torch.get_num_threads()`` threads), CUDA tensors through ``tropical_counting_gemm`` on PyTorch's
current stream; it has a fake implementation, so ``torch.compile`` traces it. Not differentiable:
counts are integers, and the gradient of the value is MaxPlus's (use :func:`tropical_gemm.matmul`
for it). :func:`counting_matmul` is its front door (counts may be None there), and calls the
implementation directly where nothing needs to see the op, as ``matmul`` does.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _native, _registry
from ._abi import describe_matrix, device_options, host_options
from ._checks import (
    COUNTING_DTYPES,
    check_batches,
    check_counting_pair,
    check_devices,
    check_inner_sizes,
    check_same_dtype,
)
from ._native import InvalidArgumentError, UnsupportedError
from .functional import direct_ok

__all__ = ["counting_matmul"]

WHERE = "tropical_gemm.counting_matmul"


def _operand(values: Tensor, counts, name: str) -> tuple[Tensor, Tensor]:
    """One operand's checks (a counting pair's, and its rank); returns it with counts as float64."""
    for what, t in ((f"{name}_values", values), (f"{name}_counts", counts)):
        if not isinstance(t, Tensor):
            raise InvalidArgumentError(f"{WHERE}: {what} is a {type(t).__name__}, not a torch.Tensor")
    check_counting_pair(WHERE, name, values, counts)
    if counts.is_complex():
        raise UnsupportedError(f"{WHERE}: {name}_counts is complex; counts are real (float64)")
    if values.dim() not in (2, 3):
        raise InvalidArgumentError(
            f"{WHERE}: {name}_values is {values.dim()}-D; operands are matrices (2-D) or batches of them "
            f"(3-D, the batch first)")
    return values, counts.to(torch.float64)


def _shapes(a_values: Tensor, a_counts: Tensor, b_values: Tensor, b_counts: Tensor):
    """Checks the operands; returns them (counts as float64; a 2-D operand of a batched product
    with a batch of 1), whether the product is batched, the batch and C's shape."""
    a_values, a_counts = _operand(a_values, a_counts, "a")
    b_values, b_counts = _operand(b_values, b_counts, "b")
    check_same_dtype(WHERE, {"a_values": a_values, "b_values": b_values})
    check_devices(WHERE, {"a_values": a_values, "b_values": b_values})
    device = a_values.device
    if device.type not in ("cpu", "cuda"):
        raise UnsupportedError(f"{WHERE}: tensors on {device} are not supported; use CPU or CUDA tensors")
    batched = a_values.dim() == 3 or b_values.dim() == 3
    if batched:
        a_values, a_counts = (x if x.dim() == 3 else x.unsqueeze(0) for x in (a_values, a_counts))
        b_values, b_counts = (x if x.dim() == 3 else x.unsqueeze(0) for x in (b_values, b_counts))
        batch = check_batches(WHERE, a_values.shape[0], b_values.shape[0])
    else:
        batch = 1
    check_inner_sizes(WHERE, a_values.shape, b_values.shape)
    m, n = a_values.shape[-2], b_values.shape[-1]
    shape = (batch, m, n) if batched else (m, n)
    return (a_values, a_counts, b_values, b_counts), batched, batch, shape


def _run(a_values: Tensor, a_counts: Tensor, b_values: Tensor, b_counts: Tensor) -> tuple[Tensor, Tensor]:
    """The op's implementation, CPU and CUDA: checks, then one C ABI call."""
    (a_values, a_counts, b_values, b_counts), batched, batch, shape = _shapes(a_values, a_counts, b_values, b_counts)
    device = a_values.device
    c_values = torch.empty(shape, dtype=a_values.dtype, device=device)
    c_counts = torch.empty(shape, dtype=torch.float64, device=device)
    if c_values.numel() == 0:
        return c_values, c_counts
    descriptors = [describe_matrix(t, batched) for t in (a_values, a_counts, b_values, b_counts, c_values, c_counts)]
    packed = [d for d, _ in descriptors]
    keep = [t for _, t in descriptors]  # noqa: F841 (the tensors the descriptors point into)
    dtype = COUNTING_DTYPES[a_values.dtype]
    if device.type == "cuda":
        status = _native.lib.tropical_counting_gemm(dtype, *packed, batch, device_options(device))
    else:
        status = _native.lib.tropical_host_counting_gemm(dtype, *packed, batch, host_options())
    if status != 0:
        raise _native.library_error(status, f"{WHERE}: ")
    del keep
    return c_values, c_counts


def _fake(a_values: Tensor, a_counts: Tensor, b_values: Tensor, b_counts: Tensor) -> tuple[Tensor, Tensor]:
    (a_values, *_), _, _, shape = _shapes(a_values, a_counts, b_values, b_counts)
    return a_values.new_empty(shape), a_values.new_empty(shape, dtype=torch.float64)


_registry.define("counting_gemm",
                 "(Tensor a_values, Tensor a_counts, Tensor b_values, Tensor b_counts) -> (Tensor, Tensor)",
                 _run, _run, _fake)
counting_gemm = torch.ops.tropical.counting_gemm


def counting_matmul(a_values: Tensor, a_counts: Tensor | None, b_values: Tensor, b_counts: Tensor | None,
                    ) -> tuple[Tensor, Tensor]:
    """The counting tropical product: returns ``(values, counts)`` with
    ``values[..., i, j] = max_k a_values[..., i, k] + b_values[..., k, j]`` and ``counts[..., i, j]`` the
    sum, over the k that attain it, of ``a_counts[..., i, k] * b_counts[..., k, j]``.

    Values are float32 or float64 (both operands alike); counts are converted to float64 (``None``
    means a count of 1 everywhere). Shapes: ``(M, K) x (K, N)``, or batches ``(B, M, K) x (B, K, N)``
    where a batch of 1 (or a 2-D operand) broadcasts. CPU or CUDA tensors, all on one device. The
    op behind it is ``torch.ops.tropical.counting_gemm``, with counts given.
    """
    def ones_if_none(counts, values):  # a count of 1 everywhere, as a stride-0 view
        if counts is None and isinstance(values, Tensor):
            return torch.ones((), dtype=torch.float64, device=values.device).expand(values.shape)
        return counts

    operands = (a_values, ones_if_none(a_counts, a_values), b_values, ones_if_none(b_counts, b_values))
    if not all(isinstance(t, Tensor) for t in operands) or direct_ok(a_values, b_values):
        return _run(*operands)  # its checks say what is wrong with a non-tensor
    return counting_gemm(*operands)
