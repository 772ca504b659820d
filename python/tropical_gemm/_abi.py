"""The plumbing of the C ABI's calls (``tropical/c_api.h``) that every op shares: a tensor as a
``tropical_matrix`` descriptor, the ``tropical_options`` of a CUDA call (PyTorch's current stream,
the device hint), the ``tropical_host_options`` of a CPU call, and the current stream itself.

The structs' layouts are ``_native``'s (``MATRIX``, ``OPTIONS``, ``HOST_OPTIONS``), where the library
is loaded; this module fills them for PyTorch's tensors. Each descriptor and each options struct is
one precompiled ``struct.pack`` (the bytes go to C without a copy), which keeps the ops' host cost
small (python/benchmarks/host_costs.py). A failed call's status becomes an exception through
``_native.library_error``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _nvrtc
from ._native import COL_MAJOR, HOST_OPTIONS, MATRIX, OPTIONS, ROW_MAJOR

# The packers of the structs, by their fields in order:
# tropical_matrix (data, rows, cols, ld, layout, batch_stride)
pack_matrix = MATRIX.pack
# tropical_options (stream, accumulate, device_hint)
pack_options = OPTIONS.pack
# tropical_host_options (accumulate, threads)
pack_host_options = HOST_OPTIONS.pack

# --- descriptors ------------------------------------------------------------------------------


def describe_matrix(t: Tensor, batched: bool) -> tuple[bytes, Tensor]:
    """A packed tropical_matrix for t (2-D, or 3-D with the batch first; on the GPU or, for the host
    functions, on the CPU: the descriptors are the same), without a copy where the
    strides allow: inner stride 1 -> row-major, ld = the outer stride; outer stride 1 ->
    column-major; anything else -> .contiguous(). A batch of 1 gets batch stride 0 (it broadcasts).
    Returns the descriptor and the tensor it points into (keep it alive until the launch is queued)."""
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
    return pack_matrix(t.data_ptr(), rows, cols, ld, layout, batch_stride), t


# --- streams and options ----------------------------------------------------------------------

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_stream(index: int) -> int:
    """PyTorch's current stream on CUDA device `index`, as a raw handle."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def host_options() -> bytes:
    """tropical_host_options: overwrite, on as many threads as PyTorch's CPU ops use
    (torch.set_num_threads)."""
    return pack_host_options(0, torch.get_num_threads())


def device_options(device: torch.device) -> bytes:
    """tropical_options for CUDA tensors on `device`: PyTorch's current stream there, accumulate off
    and the device hint, TROPICAL_DEVICE_HINT(index) (PyTorch's tensors and streams are the primary
    context's, so the library need not ask the driver). The first GPU call also names pip's NVRTC to
    the library (_nvrtc.ensure)."""
    if not _nvrtc.done:
        _nvrtc.ensure()
    index = device.index
    if index is None:
        index = torch.cuda.current_device()
    return pack_options(current_stream(index), 0, index + 1)
