"""tropical_gemm: tropical-semiring matrix products (MaxPlus, MinPlus, MaxMul, MaxMin, MinMax, and the
Boolean OrAnd) as PyTorch ops.

    import torch, tropical_gemm
    c = tropical_gemm.matmul(a, b, semiring="maxplus")     # C[i,j] = max_k a[i,k] + b[k,j]
    r = tropical_gemm.matmul(x, y, semiring="orand")       # booleans: R[i,j] = OR_k x[i,k] AND y[k,j]
    path = tropical_gemm.backtrack(back, last)              # Viterbi: the best paths through argmax tables
    e = tropical_gemm.einsum("ij,jk,k->i", a, b, v)         # any network, in einsum's equations
    torch.ops.tropical.gemm(a, b, "minplus")                # the registered op itself
    layer = tropical_gemm.TropicalLinear(64, 32)            # a tropical linear layer
    tropical_gemm.warm_up(dtypes=[torch.float32])           # compile kernels ahead of first use

CUDA tensors run on the library's kernels on PyTorch's current stream; CPU tensors on its SIMD
CPU kernels. Importing needs neither a GPU nor NVRTC. Without PyTorch, the NumPy CPU reference
(tropical_gemm.reference) and the cache functions still work.
"""

from __future__ import annotations

from ._native import (
    CompileError,
    CudaError,
    InternalError,
    InvalidArgumentError,
    NoCompilerError,
    NoDeviceError,
    NoDriverError,
    OutOfMemoryError,
    TropicalError,
    UnsupportedError,
)
from .cache import WarmResult, cache_directory, device_architectures, kernel_names, warm_up
from . import reference

__version__ = "0.1.0"

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the ops need PyTorch; the rest of the package does not
    _torch = None

if _torch is not None:
    from . import ops
    from .functional import PackedBits, backtrack, matmul, pack_bits
    from ._counting import counting_matmul
    from ._einsum import clear_einsum_graphs, einsum, einsum_path
    from .nn import TropicalLinear
else:

    def __getattr__(name: str):
        if name in ("ops", "matmul", "counting_matmul", "pack_bits", "PackedBits", "backtrack", "einsum",
                    "einsum_path", "clear_einsum_graphs", "TropicalLinear", "functional", "nn"):
            raise ImportError(f"tropical_gemm.{name} needs PyTorch, which is not installed: pip install torch")
        raise AttributeError(f"module 'tropical_gemm' has no attribute {name!r}")


__all__ = [
    "matmul",
    "counting_matmul",
    "pack_bits",
    "PackedBits",
    "backtrack",
    "einsum",
    "einsum_path",
    "clear_einsum_graphs",
    "TropicalLinear",
    "ops",
    "reference",
    "warm_up",
    "kernel_names",
    "cache_directory",
    "device_architectures",
    "WarmResult",
    "TropicalError",
    "InvalidArgumentError",
    "UnsupportedError",
    "OutOfMemoryError",
    "NoDriverError",
    "NoDeviceError",
    "NoCompilerError",
    "CompileError",
    "CudaError",
    "InternalError",
]
