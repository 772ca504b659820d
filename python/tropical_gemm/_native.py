"""The package's native library, loaded with ctypes, and the package's exceptions.

``libtropical_gemm_python.so`` holds the library and exports C symbols only: the library's public
C ABI (``tropical/c_api.h``, ``tropical_*``), which the package uses for everything on the GPU and
on the CPU (``tropical_host_*``), the kernel registry, the cache and NVRTC, and the plain CPU
reference for NumPy arrays (``python/src/host_api.cpp``, ``tgh_cpu_gemm``), which reports its
errors the same way.

Loading it touches neither the CUDA driver nor NVRTC: the library opens those at first use, so
``import tropical_gemm`` works on a machine without a GPU.
"""

from __future__ import annotations

import ctypes
import os
import struct
from typing import NamedTuple

_HERE = os.path.dirname(os.path.abspath(__file__))

# --- exceptions -------------------------------------------------------------------------------
# Each class stands for the status of tropical/status.h with its name (less "Error"); the numbers
# are read from the library below (tropical_status_name), so that there is one list of them.


class TropicalError(RuntimeError):
    """Any failure reported by tropical-gemm; ``status`` is the C ABI's status code."""

    status: int | None = None  # the library's code for "Internal", set below

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(TropicalError, ValueError):
    """Shapes, dtypes, devices or layouts that cannot work."""


class UnsupportedError(TropicalError, NotImplementedError):
    """A valid request that tropical-gemm does not implement, e.g. float16 or backward for integers."""


class OutOfMemoryError(TropicalError, MemoryError):
    """Device (or host) memory ran out."""


class NoDriverError(TropicalError):
    """libcuda.so.1 could not be loaded."""


class NoDeviceError(TropicalError):
    """The driver loaded but there is no such (or no) CUDA device."""


class NoCompilerError(TropicalError):
    """NVRTC could not be loaded and a kernel had to be compiled."""


class CompileError(TropicalError):
    """NVRTC rejected a kernel."""


class CudaError(TropicalError):
    """Any other failure reported by the CUDA driver."""


class InternalError(TropicalError):
    """A defect of tropical-gemm: please report it with the message."""


EXCEPTIONS = (
    InvalidArgumentError,
    UnsupportedError,
    OutOfMemoryError,
    NoDriverError,
    NoDeviceError,
    NoCompilerError,
    CompileError,
    CudaError,
    InternalError,
)

# --- the library ------------------------------------------------------------------------------

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

_i32, _i64, _p, _v = ctypes.c_int32, ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p


def _declare(fn, argtypes, restype=_i32):
    fn.argtypes, fn.restype = argtypes, restype


# Semiring and dtype are int32, as tropical_semiring and tropical_dtype are; descriptors are
# pointers: a bytes object holding the packed struct, a ctypes object, an address, or None (NULL).
_declare(lib.tropical_gemm, [_i32, _i32, _v, _v, _v, _i64, _v])
_declare(lib.tropical_gemm_argmax, [_i32, _i32, _v, _v, _v, _v, _i64, _v])
_declare(lib.tropical_gemm_backward_a, [_i32, _i32, _v, _v, _v, _v, _v, _i64, _v])
_declare(lib.tropical_gemm_backward_b, [_i32, _i32, _v, _v, _v, _v, _v, _i64, _v])
# The same in host memory, on the CPU; the last argument is a tropical_host_options.
_declare(lib.tropical_host_gemm, [_i32, _i32, _v, _v, _v, _i64, _v])
_declare(lib.tropical_host_gemm_argmax, [_i32, _i32, _v, _v, _v, _v, _i64, _v])
_declare(lib.tropical_host_gemm_backward_a, [_i32, _i32, _v, _v, _v, _v, _v, _i64, _v])
_declare(lib.tropical_host_gemm_backward_b, [_i32, _i32, _v, _v, _v, _v, _v, _i64, _v])
# The counting products: value dtype, then (values, counts) descriptors of A, B and C.
_declare(lib.tropical_counting_gemm, [_i32, _v, _v, _v, _v, _v, _v, _i64, _v])
_declare(lib.tropical_host_counting_gemm, [_i32, _v, _v, _v, _v, _v, _v, _i64, _v])
# OrAnd on packed operands, and the packing (semiring, a, b, k, c[, argmax], batch, options).
_declare(lib.tropical_gemm_packed, [_i32, _v, _v, _i64, _v, _i64, _v])
_declare(lib.tropical_gemm_packed_argmax, [_i32, _v, _v, _i64, _v, _v, _i64, _v])
_declare(lib.tropical_pack_bits, [_v, _i32, _v, _i64, _v])
_declare(lib.tropical_host_gemm_packed, [_i32, _v, _v, _i64, _v, _i64, _v])
_declare(lib.tropical_host_gemm_packed_argmax, [_i32, _v, _v, _i64, _v, _v, _i64, _v])
_declare(lib.tropical_host_pack_bits, [_v, _i32, _v, _i64, _v])
# The walk back through a chain's argmax tables (back, steps, last, path, options).
_declare(lib.tropical_backtrack, [_v, _i64, _v, _v, _v])
_declare(lib.tropical_host_backtrack, [_v, _i64, _v, _v, _v])
_declare(lib.tropical_host_simd_target, [], _p)
_declare(lib.tropical_last_error_message, [], _p)
_declare(lib.tropical_status_name, [_i32], _p)
_declare(lib.tropical_semiring_name, [_i32], _p)
_declare(lib.tropical_semiring_has_gradient, [_i32], _i32)
_declare(lib.tropical_status_string, [_i32], _p)


class KernelInfo(ctypes.Structure):
    """tropical_kernel_info: static strings, valid for the life of the process."""

    _fields_ = [(name, _p) for name in ("name", "group", "operation", "variant", "dtype", "semiring")]


class WarmResultC(ctypes.Structure):
    """tropical_warm_result."""

    _fields_ = [("compiled", _i32), ("ptx_for_jit", _i32), ("seconds", ctypes.c_double)]


_declare(lib.tropical_kernel_count, [], _i64)
_declare(lib.tropical_kernel_info_at, [_i64, ctypes.POINTER(KernelInfo)])
_declare(lib.tropical_cache_directory, [_p, _i64, ctypes.POINTER(_i32)])
_declare(lib.tropical_device_architectures, [ctypes.POINTER(_i32), _i64, ctypes.POINTER(_i64)])
_declare(lib.tropical_warm_targets, [ctypes.POINTER(_i32), _i64, ctypes.POINTER(_i32), _i64, ctypes.POINTER(_i64)])
_declare(lib.tropical_warm_kernel, [_p, _i32, ctypes.POINTER(WarmResultC)])
_declare(lib.tropical_nvrtc_search_path, [_p, _i64])
_declare(lib.tropical_nvrtc_search_places, [_p, _i64])
# pip's NVRTC: site-packages folders (one per line) and the CUDA major version to prefer (0: none).
_declare(lib.tropical_nvrtc_site_libraries, [_p, _i32, _p, _i64])
_declare(lib.tropical_add_nvrtc_site_folders, [_p, _i32])

# The NumPy reference takes its views as the bytes of packed tgh_view structs (c_char_p passes a
# bytes object's buffer without a copy).
_declare(lib.tgh_cpu_gemm, [_i32, _i32, _p, _p, _p, _p, _i64])


def undeclared(name: str):
    """A second handle on the C function `name`, without argtypes, for the ops' hot path.

    With argtypes, ctypes converts every argument through its type's from_param: measured on a
    2-core CI machine, about 0.4 us per argument, 2.5 us for the 7 of tropical_gemm, as much as the
    rest of a call that has nothing to compute. Without them the caller must pass exactly what C expects, since
    nothing is checked: a Python int only for a 32-bit int (the enums), bytes or None for a
    pointer (the bytes' buffer is passed, without a copy), a ctypes.c_int64 for an int64.
    """
    fn = lib._FuncPtr((name, lib))
    fn.restype = _i32
    return fn


# tropical_matrix {const void* data; int64 rows, cols, ld; int32 layout; int64 batch_stride}
MATRIX = struct.Struct("@Pqqqiq")
# tropical_options {void* stream; int32 accumulate; int32 device_hint}
OPTIONS = struct.Struct("@Pii")
# tropical_host_options {int32 accumulate; int32 threads}
HOST_OPTIONS = struct.Struct("@ii")
# tgh_view {void* data; int64 rows, cols, row_stride, col_stride, batch_stride}
VIEW = struct.Struct("@Pqqqqq")
assert MATRIX.size == 48 and OPTIONS.size == 16 and HOST_OPTIONS.size == 8 and VIEW.size == 48

ROW_MAJOR, COL_MAJOR = 0, 1


# --- the semiring and element-type tables -----------------------------------------------------
# Read from the library's one table (tropical/semiring_table.h, through tropical_semiring_facts_of and
# tropical_dtype_facts_of), so that the package keeps no list of its own and parses no names.


class SemiringFactsC(ctypes.Structure):
    """tropical_semiring_facts."""

    _fields_ = [(n, _p) for n in ("name", "plus_word", "times_word", "times_symbol")] + [
        (n, _i32) for n in ("plus", "times", "zero", "one", "gradient", "selects", "prefers", "pairs")
    ] + [("dtypes", ctypes.c_uint32)]


class DTypeFactsC(ctypes.Structure):
    """tropical_dtype_facts."""

    _fields_ = [("tag", _p), ("name", _p), ("size", _i32), ("kind", _i32), ("kind_word", _p),
                ("identity_bits", ctypes.c_uint64 * 4)]


_declare(lib.tropical_semiring_facts_of, [_i32, ctypes.POINTER(SemiringFactsC)])
_declare(lib.tropical_dtype_facts_of, [_i32, ctypes.POINTER(DTypeFactsC)])


class ElementType(NamedTuple):
    """An element type's row: ``name`` is PyTorch's and NumPy's ("float32"), ``tag`` the library's ("f32")."""

    value: int  # tropical_dtype
    name: str
    tag: str
    size: int  # bytes
    kind: str  # "float", "signed" or "boolean"
    identity_bits: tuple  # the bits of the elements a semiring's zero or one can be, by tropical_identity


class SemiringFacts(NamedTuple):
    """A semiring's row."""

    value: int  # tropical_semiring
    name: str
    plus: str  # (+) as the name spells it: "max", "min", "or"
    times: str  # (x) likewise: "plus", "mul", "min", "max", "and"
    times_symbol: str  # (x) in messages: "+", "x", ...
    zero: int  # tropical_identity: an index into ElementType.identity_bits
    one: int
    has_gradient: bool
    selects: bool  # (+) selects one term: the argmax exists
    prefers_larger: bool  # (+) keeps the larger value (max, or); else the smaller (min)
    pairs: bool  # (value, count) pairs: the counting semiring
    dtypes: tuple  # the names of the element types it takes (counting: its values')
    gradient: int  # tropical_gradient: where a gradient goes through the term an argmax names


def _rows(read) -> list:
    rows = []
    for value in range(256):  # the library refuses the value after its last row; 256 bounds a defect
        row = read(value)
        if row is None:
            break
        rows.append(row)
    return rows


def _dtype_row(value: int):
    f = DTypeFactsC()
    if lib.tropical_dtype_facts_of(value, ctypes.byref(f)) != 0:
        return None
    return ElementType(value, f.name.decode(), f.tag.decode(), f.size, f.kind_word.decode(), tuple(f.identity_bits))


ELEMENT_TYPES = {t.name: t for t in _rows(_dtype_row)}  # by name, in the library's order
# The Boolean type's elements are bytes (nonzero is true), and a bool tensor is such bytes too.
BOOLEAN = next(t for t in ELEMENT_TYPES.values() if t.kind == "boolean")
DTYPE_NAMES = tuple(ELEMENT_TYPES)  # by tropical_dtype
DTYPE_CODES = {**{n: t.value for n, t in ELEMENT_TYPES.items()}, "bool": BOOLEAN.value}  # name -> tropical_dtype


def _semiring_row(value: int):
    f = SemiringFactsC()
    if lib.tropical_semiring_facts_of(value, ctypes.byref(f)) != 0:
        return None
    dtypes = tuple(n for n, t in ELEMENT_TYPES.items() if f.dtypes >> t.value & 1)
    return SemiringFacts(value, f.name.decode(), f.plus_word.decode(), f.times_word.decode(), f.times_symbol.decode(),
                         f.zero, f.one, f.gradient != 0, f.selects == 1, f.prefers > 0, f.pairs == 1, dtypes,
                         f.gradient)


SEMIRING_FACTS = {s.name: s for s in _rows(_semiring_row)}  # every semiring by name ("maxplus")
ALL_SEMIRINGS = {n: s.value for n, s in SEMIRING_FACTS.items()}  # name -> tropical_semiring
# The semirings with a gradient, by name: the backward kernels, which take their semiring at launch, serve these.
GRADIENT_SEMIRINGS = frozenset(n for n, s in SEMIRING_FACTS.items() if s.has_gradient)
# The counting semiring's elements are (value, count) pairs: it has entry points of its own
# (counting_matmul, einsum(semiring="counting")), so the scalar ops' names leave it out.
COUNTING = next(n for n, s in SEMIRING_FACTS.items() if s.pairs)
SEMIRINGS = {n: v for n, v in ALL_SEMIRINGS.items() if n != COUNTING}

# tropical_gradient (tropical/semiring_table.h): none, as is (reads neither operand), the product rule
# (reads the other operand), to the smaller or the larger operand (reads both), softmax weights (reads
# both, and the forward's C where the others read the argmax).
GRADIENT_NONE, GRADIENT_AS_IS, GRADIENT_PRODUCT, GRADIENT_TO_MIN, GRADIENT_TO_MAX, GRADIENT_SOFTMAX = range(6)
# (semiring code, "a" or "b") -> whether the gradient of that operand reads A, and B (types.hpp's
# gradient_reads_a/b); NULL may go for an operand it does not read.
GRADIENT_READS = {
    (s.value, which): (both or (s.gradient == GRADIENT_PRODUCT and which == "b"),
                       both or (s.gradient == GRADIENT_PRODUCT and which == "a"))
    for s in SEMIRING_FACTS.values()
    for both in [s.gradient in (GRADIENT_TO_MIN, GRADIENT_TO_MAX, GRADIENT_SOFTMAX)] for which in "ab"
}
# The semirings (by name) whose backward reads the forward's C in the argmax's place (types.hpp's
# gradient_reads_result): their products keep C, not an argmax, for the gradient.
READS_RESULT = frozenset(n for n, s in SEMIRING_FACTS.items() if s.gradient == GRADIENT_SOFTMAX)


def identity_bits(semiring: str, dtype: str, which: str = "one") -> int:
    """The bits of a semiring's zero or one ("zero", "one") as an element of type ``dtype`` ("float32",
    "bool"), in the low bytes of the type's size."""
    facts = SEMIRING_FACTS[semiring]
    element = BOOLEAN if dtype == "bool" else ELEMENT_TYPES[dtype]
    return element.identity_bits[facts.zero if which == "zero" else facts.one]


# What each semiring computes, for messages: (+) and (x) ("maxplus": max, +).
SEMIRING_MEANINGS = {n: f"{SEMIRING_FACTS[n].plus}, {SEMIRING_FACTS[n].times_symbol}" for n in SEMIRINGS}
# Spellings that tropical_gemm.matmul and warm_up accept for each semiring (the ops take the first):
# the name, and its two words joined by _ or - ("max_plus", "min-max"); "max-times" for a product
# (x); "and-or" (the usual name of the Boolean product) for a (+) that is or.
SEMIRING_ALIASES = {}
for _name in SEMIRINGS:
    _head, _tail = SEMIRING_FACTS[_name].plus, SEMIRING_FACTS[_name].times
    for _tail_word in (_tail, "times") if _tail == "mul" else (_tail,):
        for _joint in ("", "_", "-"):
            SEMIRING_ALIASES[f"{_head}{_joint}{_tail_word}"] = _name
            if _head == "or":
                SEMIRING_ALIASES[f"{_tail_word}{_joint}{_head}"] = _name


def semiring_list() -> str:
    """The semirings in words, for messages: "'maxplus' (max, +), ..., or 'minmax' (min, max)"."""
    items = [f"'{n}' ({SEMIRING_MEANINGS[n]})" for n in SEMIRINGS]
    return ", ".join(items[:-1]) + " or " + items[-1]


PACK_A, PACK_B = 0, 1  # tropical_pack

# --- status codes -----------------------------------------------------------------------------


def status_names() -> dict[int, str]:
    """Every status of the library by value, as tropical/status.h names it ("InvalidArgument")."""
    names = {}
    for value in range(256):  # the library answers NULL after its last status; 256 bounds a defect
        name = lib.tropical_status_name(value)
        if name is None:
            break
        names[value] = name.decode()
    return names


def _class_name(status_name: str) -> str:
    return status_name if status_name.endswith("Error") else status_name + "Error"


STATUS_NAMES = status_names()
_BY_STATUS: dict[int, type] = {}
for _value, _name in STATUS_NAMES.items():
    _cls = next((c for c in EXCEPTIONS if c.__name__ == _class_name(_name)), None)
    if _cls is not None:
        _cls.status = _value
        _BY_STATUS[_value] = _cls
_missing = [c.__name__ for c in EXCEPTIONS if "status" not in vars(c)]
if _missing:  # the Python files and the native library come from different builds
    raise ImportError(
        f"tropical_gemm: {LIBRARY_NAME} knows no status for {_missing} (it lists {sorted(STATUS_NAMES.values())}): "
        f"the package's Python files and its native library do not match; reinstall the package with pip"
    )
# A bare TropicalError is the library's defect status, as InternalError is.
TropicalError.status = InternalError.status


def exception_for(status: int) -> type:
    """The exception class for a status code (TropicalError for one this package does not know)."""
    return _BY_STATUS.get(status, TropicalError)


def library_error(status: int, where: str = "") -> TropicalError:
    """The exception for a failed call of the library (its C ABI or the NumPy reference), with its message."""
    message = (lib.tropical_last_error_message() or b"").decode(errors="replace")
    if not message:
        words = lib.tropical_status_string(status)
        message = words.decode() if words else f"unknown status {status}"
    return exception_for(status)(f"{where}{message}", status)
