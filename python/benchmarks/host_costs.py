"""Host cost of the pieces of one small CUDA product from Python: the driver queries that the
library's C ABI makes without a device hint (called here through ctypes, as the package calls the
library), the torch calls that the ops make, the packing of their arguments and the C ABI call
itself, with the device hint as the ops pass it (so no driver query); then whole calls for scale
(PyTorch's own ops, and the package's op). Needs PyTorch with CUDA, a GPU and the package
installed. Prints a markdown table; each figure is the median of 7 loops of 20,000 calls (64 x 64
float32).

    python3 python/benchmarks/host_costs.py
"""

from __future__ import annotations

import ctypes

import torch

import tropical_gemm
from host_timing import per_call
from tropical_gemm import _impl, _native

CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9


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
    raw_stream = torch._C._cuda_getCurrentRawStream
    pack_matrix, pack_options = _native.MATRIX.pack, _native.OPTIONS.pack
    hint = a.device.index + 1

    # The C ABI call as the ops make it (_impl: no argtypes, bytes descriptors, a c_int64 batch),
    # with the device hint, on a preallocated C: the floor under the op. An empty product (0 rows)
    # is the library's argument checks alone, with no launch; the 64 x 64 one launches, and where
    # its kernel takes longer than the call, the full launch queue bounds the figure.
    c = torch.empty(64, 64, device="cuda")
    d = [pack_matrix(t.data_ptr(), 64, 64, 64, 0, 0) for t in (a, a, c)]
    empty = [pack_matrix(0, 0, 64, 64, 0, 0), d[1], pack_matrix(0, 0, 64, 64, 0, 0)]
    gemm, one = _impl._gemm_c, _impl._ONE
    declared = _native.lib.tropical_gemm
    options = pack_options(stream, 0, hint)
    options_no_hint = pack_options(stream, 0, 0)

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
        ("one tropical_matrix packed", lambda: pack_matrix(123456, 64, 64, 64, 0, 4096)),
        ("one tropical_options packed (stream, device hint)", lambda: pack_options(stream, 0, hint)),
        ("C ABI tropical_gemm, empty product (checks only), as the ops call it (no argtypes)",
         lambda: gemm(0, 0, empty[0], empty[1], empty[2], one, options)),
        ("C ABI tropical_gemm, empty product, argtypes declared",
         lambda: declared(0, 0, empty[0], empty[1], empty[2], 1, options)),
        ("C ABI tropical_gemm with the device hint, as the ops call it (no argtypes)",
         lambda: gemm(0, 0, d[0], d[1], d[2], one, options)),
        ("C ABI tropical_gemm with the device hint, argtypes declared",
         lambda: declared(0, 0, d[0], d[1], d[2], 1, options)),
        ("C ABI tropical_gemm without a hint (the library asks the driver), as the ops call it",
         lambda: gemm(0, 0, d[0], d[1], d[2], one, options_no_hint)),
    ]
    # Whole calls, for scale: PyTorch's own ops through the same dispatcher from Python, and the
    # package's op, its CUDA implementation alone (no dispatcher) and matmul.
    op = torch.ops.tropical.gemm
    rows += [
        ("torch.mm(a, a) (a native op: dispatcher, allocation, cuBLAS launch)", lambda: torch.mm(a, a)),
        ("torch.add(a, a)", lambda: torch.add(a, a)),
        ("torch.ops.tropical.gemm(a, a)", lambda: op(a, a)),
        ("torch.ops.tropical.gemm.default(a, a)", lambda: op.default(a, a)),
        ("the op's CUDA implementation alone (_impl.product_cuda)",
         lambda: _impl.product_cuda("gemm", a, a, "maxplus", False, False)),
        ("tropical_gemm.matmul(a, a)", lambda: tropical_gemm.matmul(a, a)),
    ]
    print("| piece | host µs per call |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {per_call(fn):.3f} |")
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
