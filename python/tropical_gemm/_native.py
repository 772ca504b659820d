"""The package's native library, loaded with ctypes, and the package's exceptions.

``libtropical_gemm_python.so`` holds the library and exports C symbols only: the library's C ABI
(``tropical/c_api.h``, ``tropical_*``), which runs the GPU path, and the host helpers
(``python/src/host_api.cpp``, ``tgh_*``): the CPU reference and the cache warm-up.

Loading it touches neither the CUDA driver nor NVRTC: the library opens those at first use, so
``import tropical_gemm`` works on a machine without a GPU.
"""

from __future__ import annotations

import ctypes
import os
import struct

_HERE = os.path.dirname(os.path.abspath(__file__))

# --- exceptions -------------------------------------------------------------------------------


class TropicalError(RuntimeError):
    """Any failure reported by tropical-gemm; ``status`` is the C ABI's status code."""

    status = 9

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(TropicalError, ValueError):
    """Shapes, dtypes, devices or layouts that cannot work (status 1)."""

    status = 1


class UnsupportedError(TropicalError, NotImplementedError):
    """A valid request that tropical-gemm does not implement, e.g. float16 or backward for integers (status 2)."""

    status = 2


class OutOfMemoryError(TropicalError, MemoryError):
    status = 3


class NoDriverError(TropicalError):
    """libcuda.so.1 could not be loaded (status 4)."""

    status = 4


class NoDeviceError(TropicalError):
    status = 5


class NoCompilerError(TropicalError):
    """NVRTC could not be loaded and a kernel had to be compiled (status 6)."""

    status = 6


class CompileError(TropicalError):
    status = 7


class CudaError(TropicalError):
    status = 8


_BY_STATUS = {
    1: InvalidArgumentError,
    2: UnsupportedError,
    3: OutOfMemoryError,
    4: NoDriverError,
    5: NoDeviceError,
    6: NoCompilerError,
    7: CompileError,
    8: CudaError,
}

# --- the libraries ----------------------------------------------------------------------------

LIBRARY_NAME = "libtropical_gemm_python.so"


def _load(name: str) -> ctypes.CDLL:
    path = os.path.join(_HERE, name)
    if not os.path.exists(path):
        raise ImportError(
            f"tropical_gemm: {path} is missing. The package's native library is built by pip: "
            f"install it with `pip install ./` from the repository's root (importing python/tropical_gemm "
            f"straight from the source tree does not work)."
        )
    return ctypes.CDLL(path)  # CDLL releases the GIL during every call


lib = _load(LIBRARY_NAME)
host = lib  # the helpers (tgh_*) live in the same library

_i32, _i64, _p = ctypes.c_int32, ctypes.c_int64, ctypes.c_char_p

# The C ABI: descriptors travel as the bytes of packed structs (c_char_p passes a bytes object's
# buffer without a copy), which costs one struct.pack per operand instead of a ctypes.Structure.
for _fn, _n in (
    (lib.tropical_gemm, 5),
    (lib.tropical_gemm_argmax, 6),
    (lib.tropical_gemm_backward_a, 6),
    (lib.tropical_gemm_backward_b, 6),
):
    _fn.argtypes = [_i32, _i32] + [_p] * (_n - 2) + [_i64, _p]
    _fn.restype = _i32
lib.tropical_last_error_message.argtypes = []
lib.tropical_last_error_message.restype = ctypes.c_char_p

host.tgh_cpu_gemm.argtypes = [_i32, _i32, _p, _p, _p, _p, _i64]
host.tgh_cpu_backward_a.argtypes = [_i32, _i32, _p, _p, _p, _p, _i64]
host.tgh_cpu_backward_b.argtypes = [_i32, _i32, _p, _p, _p, _p, _i64]
for _fn in (host.tgh_cpu_gemm, host.tgh_cpu_backward_a, host.tgh_cpu_backward_b):
    _fn.restype = _i32
host.tgh_kernel_count.argtypes = []
host.tgh_kernel_count.restype = _i64
host.tgh_kernel_name.argtypes = [_i64]
host.tgh_kernel_name.restype = ctypes.c_char_p
host.tgh_cache_directory.argtypes = [ctypes.c_char_p, _i64, ctypes.POINTER(_i32)]
host.tgh_cache_directory.restype = _i32
host.tgh_device_architectures.argtypes = [ctypes.POINTER(_i32), _i64, ctypes.POINTER(_i64)]
host.tgh_device_architectures.restype = _i32
host.tgh_warm_kernel.argtypes = [
    ctypes.c_char_p,
    _i32,
    ctypes.POINTER(_i32),
    ctypes.POINTER(_i32),
    ctypes.POINTER(ctypes.c_double),
]
host.tgh_warm_kernel.restype = _i32
host.tgh_gpu_run.argtypes = [_p]
host.tgh_gpu_run.restype = _i32
host.tgh_last_error.argtypes = []
host.tgh_last_error.restype = ctypes.c_char_p

# tropical_matrix {const void* data; int64 rows, cols, ld; int32 layout; int64 batch_stride}
MATRIX = struct.Struct("@Pqqqiq")
# tropical_options {void* stream; int32 accumulate}, padded to its C size
OPTIONS = struct.Struct("@Pi4x")
# tgh_view {void* data; int64 rows, cols, row_stride, col_stride, batch_stride}
VIEW = struct.Struct("@Pqqqqq")

# tgh_gpu_call {int32 operation, semiring, dtype, device; tropical_matrix a, b, c, argmax, grad;
# int64 batch; void* stream; int32 accumulate, reserved} (python/src/host_api.cpp)
GPU_CALL = struct.Struct("@4i" + "Pqqqiq" * 5 + "qPii")
GEMM, GEMM_ARGMAX, BACKWARD_A, BACKWARD_B = 0, 1, 2, 3
NO_MATRIX = (0, 0, 0, 0, 0, 0)  # an operand the operation does not use

assert MATRIX.size == 48 and OPTIONS.size == 16 and VIEW.size == 48 and GPU_CALL.size == 280

ROW_MAJOR, COL_MAJOR = 0, 1
SEMIRINGS = {"maxplus": 0, "minplus": 1, "maxmul": 2}
# Spellings that tropical_gemm.matmul and warm_up accept for each semiring (the ops take the first).
SEMIRING_ALIASES = {
    "maxplus": "maxplus", "max_plus": "maxplus", "max-plus": "maxplus",
    "minplus": "minplus", "min_plus": "minplus", "min-plus": "minplus",
    "maxmul": "maxmul", "max_mul": "maxmul", "max-mul": "maxmul", "maxtimes": "maxmul", "max_times": "maxmul",
}
DTYPE_NAMES = ("float32", "float64", "int32", "int64")  # by tropical_dtype


def library_error(status: int, where: str = "") -> TropicalError:
    """The exception for a failed call of the library's C ABI, with its message."""
    message = (lib.tropical_last_error_message() or b"").decode(errors="replace") or "unknown error"
    return _BY_STATUS.get(status, TropicalError)(f"{where}{message}", status)


def host_error(status: int, where: str = "") -> TropicalError:
    """The exception for a failed call of the host helper library."""
    message = (host.tgh_last_error() or b"").decode(errors="replace") or "unknown error"
    return _BY_STATUS.get(status, TropicalError)(f"{where}{message}", status)
