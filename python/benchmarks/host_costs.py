"""Host cost of the pieces of one small CUDA product from Python: the driver queries that the
library's C ABI makes (called here through ctypes, as the package calls the library), the torch
calls that the ops make, and the packing of their arguments; then whole calls for scale (PyTorch's
own ops, and the package's op where it is installed). Needs PyTorch with CUDA and a GPU. Prints a
markdown table; each figure is the median of 7 loops of 20,000 calls (64 x 64 float32).

    python3 python/benchmarks/host_costs.py
"""

from __future__ import annotations

import ctypes
import statistics
import struct
import time

import torch

CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9


def per_call(fn, calls: int = 20000, loops: int = 7) -> float:
    """Median over `loops` of the host time per call of `calls` calls, in microseconds."""
    for _ in range(200):
        fn()
    samples = []
    for _ in range(loops):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuDriverGetVersion.argtypes = [ctypes.c_void_p]
    cuda.cuCtxGetCurrent.argtypes = [ctypes.c_void_p]
    cuda.cuPointerGetAttributes.argtypes = [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
    cuda.cuStreamGetCtx.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

    a = torch.randn(64, 64, device="cuda")
    torch.cuda.synchronize()
    stream = torch.cuda.current_stream().cuda_stream
    version, context = ctypes.c_int(), ctypes.c_void_p()
    memory_type, ordinal = ctypes.c_uint(), ctypes.c_int()
    attributes = (ctypes.c_int * 2)(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
    values = (ctypes.c_void_p * 2)(ctypes.addressof(memory_type), ctypes.addressof(ordinal))
    pointer = ctypes.c_uint64(a.data_ptr())
    matrix = struct.Struct("@Pqqqiq")  # tropical_matrix
    call = struct.Struct("@4i" + "Pqqqiq" * 5 + "qPii")  # tgh_gpu_call, as tropical_gemm._native.GPU_CALL
    raw_stream = torch._C._cuda_getCurrentRawStream

    rows = [
        ("ctypes: cuDriverGetVersion (the ctypes floor)", lambda: cuda.cuDriverGetVersion(ctypes.byref(version))),
        ("ctypes: cuCtxGetCurrent", lambda: cuda.cuCtxGetCurrent(ctypes.byref(context))),
        ("ctypes: cuPointerGetAttributes (2 attributes)",
         lambda: cuda.cuPointerGetAttributes(2, attributes, values, pointer)),
        ("ctypes: cuStreamGetCtx", lambda: cuda.cuStreamGetCtx(stream, ctypes.byref(context))),
        ("torch.empty(64, 64, device=cuda)", lambda: torch.empty(64, 64, dtype=torch.float32, device=a.device)),
        ("a.new_empty((64, 64))", lambda: a.new_empty((64, 64))),
        ("torch.empty_like(a)", lambda: torch.empty_like(a)),
        ("a.device", lambda: a.device),
        ("a.is_cuda", lambda: a.is_cuda),
        ("a.shape; a.stride()", lambda: (a.shape, a.stride())),
        ("a.data_ptr()", lambda: a.data_ptr()),
        ("torch._C._cuda_getCurrentRawStream(0)", lambda: raw_stream(0)),
        ("one tropical_matrix packed", lambda: matrix.pack(123456, 64, 64, 64, 0, 4096)),
        ("one tgh_gpu_call packed (5 descriptors)",
         lambda: call.pack(0, 0, 0, 0, *([123456, 64, 64, 64, 0, 4096] * 5), 1, 0, 0, 0)),
    ]
    # Whole calls, for scale: PyTorch's own ops through the same dispatcher from Python, and the
    # package's op, its CUDA implementation alone (no dispatcher) and matmul, where installed.
    rows += [
        ("torch.mm(a, a) (a native op: dispatcher, allocation, cuBLAS launch)", lambda: torch.mm(a, a)),
        ("torch.add(a, a)", lambda: torch.add(a, a)),
    ]
    try:
        import tropical_gemm
        from tropical_gemm import ops
    except ImportError:
        tropical_gemm = None
    if tropical_gemm is not None:
        op = torch.ops.tropical.gemm
        rows += [
            ("torch.ops.tropical.gemm(a, a)", lambda: op(a, a)),
            ("torch.ops.tropical.gemm.default(a, a)", lambda: op.default(a, a)),
            ("the op's CUDA implementation alone (ops._product_cuda)",
             lambda: ops._product_cuda("gemm", a, a, "maxplus", False, False)),
            ("tropical_gemm.matmul(a, a)", lambda: tropical_gemm.matmul(a, a)),
        ]
    print("| piece | host µs per call |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {per_call(fn):.3f} |")
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
