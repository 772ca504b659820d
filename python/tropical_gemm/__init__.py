"""tropical_gemm: tropical-semiring matrix products (MaxPlus, MinPlus, MaxMul, MaxMin, MinMax, the
Boolean OrAnd, and the log semiring LogPlus) as PyTorch ops.

    import torch, tropical_gemm
    c = tropical_gemm.matmul(a, b, semiring="maxplus")     # C[i,j] = max_k a[i,k] + b[k,j]
    r = tropical_gemm.matmul(x, y, semiring="orand")       # booleans: R[i,j] = OR_k x[i,k] AND y[k,j]
    path = tropical_gemm.backtrack(back, last)              # Viterbi: the best paths through argmax tables
    e = tropical_gemm.einsum("ij,jk,k->i", a, b, v)         # any network, in einsum's equations
    z = tropical_gemm.einsum("ij,jk->", x, y, semiring="logplus")  # log partition function: log sum exp
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
__version__ = "0.1.0"

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the ops need PyTorch; the rest of the package does not
    _torch = None

if _torch is not None:
    # Every op is registered here, at import (torch.ops.tropical.*, for torch.compile and for code
    # that names them): ops, _counting and _contract register them.
    from . import ops, _contract, _counting  # noqa: F401
    from .functional import PackedBits, backtrack, matmul, pack_bits
    from ._counting import counting_matmul

# Loaded at their first use (PEP 562): a process's first product needs none of them, and importing
# them was about a third of `import tropical_gemm` (issue 14's fresh-process target).
# name -> (module, whether it needs PyTorch); a module's own name stands for the module itself.
_LAZY = {
    name: (module, needs_torch)
    for module, needs_torch, names in (
        ("cache", False, ("cache", "warm_up", "kernel_names", "cache_directory", "device_architectures", "WarmResult")),
        ("reference", False, ("reference",)),
        ("_einsum", True, ("einsum", "einsum_path", "clear_einsum_graphs")),
        ("nn", True, ("nn", "TropicalLinear")),
    )
    for name in names
}
# The names that PyTorch brings, for the error that says so where it is missing.
_TORCH_NAMES = ("ops", "matmul", "counting_matmul", "pack_bits", "PackedBits", "backtrack", "functional")


def __getattr__(name: str):
    module, needs_torch = _LAZY.get(name, (None, name in _TORCH_NAMES))
    if needs_torch and _torch is None:
        raise ImportError(f"tropical_gemm.{name} needs PyTorch, which is not installed: pip install torch")
    if module is None:
        raise AttributeError(f"module 'tropical_gemm' has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(f".{module}", __name__)
    value = loaded if name == module else getattr(loaded, name)
    globals()[name] = value
    return value


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
