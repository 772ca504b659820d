"""The checks of the ops' arguments, shared by the CPU, CUDA and fake implementations.

Valid operands pass a few cheap tests on the hot path; anything else goes through the explaining
checks, which raise the error that says what is wrong and what to do.
"""

from __future__ import annotations

import struct

import torch
from torch import Tensor

from ._native import (
    BOOLEAN,
    identity_bits,
    COUNTING,
    DTYPE_CODES,
    DTYPE_NAMES,
    ELEMENT_TYPES,
    GRADIENT_SEMIRINGS,
    SEMIRING_FACTS,
    SEMIRING_MEANINGS,
    SEMIRINGS,
    READS_RESULT,
    InvalidArgumentError,
    UnsupportedError,
    semiring_list,
)

# The element types some semiring takes, as PyTorch's dtypes -> tropical_dtype (bool: booleans in bytes,
# as uint8). A row no semiring takes yet (the 16-bit types before their kernels: issue 35) is not one.
_TAKEN = {name for facts in SEMIRING_FACTS.values() for name in facts.dtypes}
DTYPES = {
    getattr(torch, name): code
    for name, code in DTYPE_CODES.items()
    if name in _TAKEN or (name == "bool" and BOOLEAN.name in _TAKEN)
}
FLOATS = tuple(getattr(torch, n) for n, t in ELEMENT_TYPES.items() if t.kind == "float" and n in _TAKEN)
BOOLEANS = (torch.bool, getattr(torch, BOOLEAN.name))  # the Boolean semiring's dtypes, and only its
# The (semiring, dtype) codes that go together, as the table says (counting's pairs have their own checks).
SUPPORTED = frozenset((SEMIRINGS[n], DTYPE_CODES[d]) for n in SEMIRINGS for d in SEMIRING_FACTS[n].dtypes)
# The Boolean semiring (or, and): the one that takes booleans.
ORAND = next(SEMIRINGS[n] for n in SEMIRINGS if SEMIRING_FACTS[n].dtypes == (BOOLEAN.name,))
_ORAND_NAME = next(n for n, v in SEMIRINGS.items() if v == ORAND)
# The semirings whose (+) combines every term (LogPlus's log-sum-exp), by code: no argmax exists.
COMBINING = frozenset(v for n, v in SEMIRINGS.items() if not SEMIRING_FACTS[n].selects)
NAMESPACE = "tropical"  # torch.ops.tropical; the ops' messages name it


def _element(bits: int, element) -> float | int | bool:
    """The element whose bits (the low bytes of the type's size, as the library gives them) are ``bits``."""
    if element.name == "bfloat16":  # float32's upper half
        return struct.unpack("<f", (bits << 16).to_bytes(4, "little"))[0]
    code = {"float": {2: "e", 4: "f", 8: "d"}, "signed": {1: "b", 2: "h", 4: "i", 8: "q"}, "boolean": {1: "?"}}
    return struct.unpack("<" + code[element.kind][element.size], bits.to_bytes(element.size, "little"))[0]


# Every semiring's one (x (x) one = x), by which a product reduces an index, for each dtype it takes:
# exact values (-inf, an integer extreme) read from the library's table, made once at import so that
# torch.compile sees a constant lookup. A dtype's element type is the table's row for its code.
ONES = {
    (name, dtype): _element(identity_bits(name, DTYPE_NAMES[code]), ELEMENT_TYPES[DTYPE_NAMES[code]])
    for name in SEMIRINGS
    for dtype, code in DTYPES.items()
    if (SEMIRINGS[name], code) in SUPPORTED
}


def type_list(names) -> str:
    """Element type names in words: "float32, float64, int32 and int64"."""
    names = list(names)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def semiring_code(semiring: str) -> int:
    code = SEMIRINGS.get(semiring)
    if code is None and semiring == COUNTING:
        raise InvalidArgumentError(
            "the counting semiring multiplies (value, count) pairs: use tropical_gemm.counting_matmul(a_values, "
            "a_counts, b_values, b_counts) or tropical_gemm.einsum(..., semiring='counting')"
        )
    if code is None:
        raise InvalidArgumentError(
            f"unknown semiring {semiring!r}: use {semiring_list()}"
        )
    return code


def dtype_code(t: Tensor, what: str) -> int:
    code = DTYPES.get(t.dtype)
    if code is None:
        hint = ".float()" if t.is_floating_point() or t.is_complex() else ".long()"
        if t.dtype in (torch.int8, torch.int16):
            hint = ".int()"
        raise UnsupportedError(
            f"{what} has dtype {t.dtype}; tropical_gemm supports "
            f"{type_list(n for n in ELEMENT_TYPES if n != BOOLEAN.name and n in _TAKEN)} (and bool "
            f"or {BOOLEAN.name} for semiring '{_ORAND_NAME}'): convert it first, e.g. with {hint}"
        )
    return code


def check_semiring_dtype(op: str, s: int, t: Tensor) -> None:
    """The dtype is one the semiring takes (the table's): OrAnd takes booleans (bool or uint8 tensors)
    and nothing else takes them; LogPlus takes floats only."""
    if (s, DTYPES.get(t.dtype)) not in SUPPORTED:
        if s == ORAND:
            raise UnsupportedError(
                f"tropical.{op}: semiring 'orand' (or, and) is Boolean: it takes bool or uint8 tensors (nonzero is "
                f"true), not {t.dtype}; convert them, e.g. with (x != 0)"
            )
        if t.dtype in BOOLEANS:
            raise UnsupportedError(
                f"tropical.{op}: {t.dtype} tensors are booleans, for semiring 'orand' (or, and); for the other "
                f"semirings convert them, e.g. with .int() or .float()"
            )
        name = next(n for n, v in SEMIRINGS.items() if v == s)
        raise UnsupportedError(
            f"tropical.{op}: semiring '{name}' ({SEMIRING_MEANINGS[name]}) takes {type_list(SEMIRING_FACTS[name].dtypes)} "
            f"tensors, not {t.dtype}; convert them, e.g. with .float() or .double()"
        )


def check_argmax(where: str, s: int) -> None:
    """An argmax exists only where (+) selects one term: LogPlus's log-sum-exp combines them all."""
    if s in COMBINING:
        name = next(n for n, v in SEMIRINGS.items() if v == s)
        share = (" (log-sum-exp: C[i,j] = log sum_k exp(A[i,k] + B[k,j]); its gradient reaches every term, "
                 "weighted by exp(A[i,k] + B[k,j] - C[i,j]))") if name in READS_RESULT else ""
        raise UnsupportedError(
            f"{where}: semiring '{name}' has no argmax: its (+) combines every term{share}, so no single k "
            f"attains a result; call the product without one (return_argmax=False)"
        )


def _unlike(tensors: dict[str, Tensor], attribute: str):
    """(first name, first tensor, name, tensor) for each tensor whose ``attribute`` differs from the first's."""
    (first_name, first), *rest = tensors.items()
    return [(first_name, first, n, t) for n, t in rest if getattr(t, attribute) != getattr(first, attribute)]


def check_devices(where: str, tensors: dict[str, Tensor]) -> None:
    """All of ``tensors`` (by name) on one device; ``where`` begins the message ("tropical.gemm")."""
    for first_name, first, name, t in _unlike(tensors, "device"):
        raise InvalidArgumentError(
            f"{where}: {first_name} is on {first.device} but {name} is on {t.device}: all tensors "
            f"must be on one device; move them with .to({first_name}.device) (or .cpu(), .cuda())"
        )


def check_same_dtype(where: str, tensors: dict[str, Tensor]) -> None:
    """All of ``tensors`` (by name) of one dtype; ``where`` begins the message."""
    for first_name, first, name, t in _unlike(tensors, "dtype"):
        raise InvalidArgumentError(
            f"{where}: {first_name} is {first.dtype} but {name} is {t.dtype}: both operands must have the same "
            f"dtype; convert one, e.g. {name}.to({first_name}.dtype)"
        )


def check_inner_sizes(where: str, a_shape, b_shape) -> None:
    """A product's K: a's last size equals b's last but one."""
    if a_shape[-1] != b_shape[-2]:
        raise InvalidArgumentError(
            f"{where}: a is {tuple(a_shape)} and b is {tuple(b_shape)}: a's columns (K = {a_shape[-1]}) "
            f"must equal b's rows ({b_shape[-2]})"
        )


def check_batches(where: str, a_batch: int, b_batch: int) -> int:
    """A batched product's batch sizes: equal, or one of them 1 (it broadcasts); returns the product's."""
    if a_batch != b_batch and a_batch != 1 and b_batch != 1:
        raise InvalidArgumentError(
            f"{where}: batch sizes {a_batch} (a) and {b_batch} (b) differ; they must be equal, "
            f"or one of them 1 (it broadcasts)"
        )
    return b_batch if a_batch == 1 else a_batch


def check_product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool) -> tuple[int, int]:
    """Validates a product's operands; returns (semiring code, dtype code)."""
    return check_product_shapes(op, a, b, semiring, batched)[:2]


def check_product_shapes(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool):
    """check_product, returning (semiring code, dtype code, a.shape, b.shape). Valid operands pass a
    few cheap tests; anything else goes through _explain_product, which raises the error that says
    what is wrong (the same tests, in the order of its messages)."""
    s = SEMIRINGS.get(semiring)
    dtype = a.dtype
    t = DTYPES.get(dtype)
    if b.dtype == dtype and (s, t) in SUPPORTED:
        sa, sb = a.shape, b.shape
        if batched:
            if (
                len(sa) == 3
                and len(sb) == 3
                and sa[2] == sb[1]
                and (sa[0] == sb[0] or sa[0] == 1 or sb[0] == 1)
                and a.device == b.device
            ):
                return s, t, sa, sb
        elif len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and a.device == b.device:
            return s, t, sa, sb
    s, t = _explain_product(op, a, b, semiring, batched)
    return s, t, a.shape, b.shape


def _explain_product(op: str, a: Tensor, b: Tensor, semiring: str, batched: bool) -> tuple[int, int]:
    s = semiring_code(semiring)
    dims = 3 if batched else 2
    if a.dim() != dims or b.dim() != dims:
        other = "tropical.gemm for 2-D" if batched else "tropical.bgemm for 3-D (batched)"
        raise InvalidArgumentError(
            f"tropical.{op} takes {dims}-D tensors, but a is {a.dim()}-D and b is {b.dim()}-D; use {other} "
            f"tensors, or tropical_gemm.matmul, which takes any of them"
        )
    t = dtype_code(a, "a")
    where = f"{NAMESPACE}.{op}"
    check_same_dtype(where, {"a": a, "b": b})
    check_semiring_dtype(op, s, a)
    check_devices(where, {"a": a, "b": b})
    check_inner_sizes(where, a.shape, b.shape)
    if batched:
        check_batches(where, a.shape[0], b.shape[0])
    return s, t


def check_backward(op: str, grad_c: Tensor, argmax: Tensor, a: Tensor, b: Tensor, semiring: str) -> tuple[int, int]:
    s = semiring_code(semiring)
    if s not in {SEMIRINGS[n] for n in GRADIENT_SEMIRINGS}:  # the library's rule (tropical_semiring_has_gradient)
        why = "is Boolean: its products are true or false" if s == ORAND else "has no backward kernel"
        raise UnsupportedError(f"tropical.{op}: semiring '{semiring}' {why}: it has no gradient")
    batched = grad_c.dim() == 3
    if grad_c.dim() not in (2, 3) or a.dim() != grad_c.dim() or b.dim() != grad_c.dim():
        raise InvalidArgumentError(
            f"tropical.{op}: grad_c, a and b must all be 2-D or all 3-D; they are {grad_c.dim()}-D, "
            f"{a.dim()}-D and {b.dim()}-D"
        )
    t = dtype_code(a, "a")
    if a.dtype not in FLOATS:
        raise UnsupportedError(
            f"tropical.{op}: gradients are defined for float32 and float64, not {a.dtype}; convert the "
            f"operands to floating point"
        )
    if b.dtype != a.dtype or grad_c.dtype != a.dtype:
        raise InvalidArgumentError(
            f"tropical.{op}: grad_c, a and b must share one dtype; they are {grad_c.dtype}, {a.dtype}, {b.dtype}"
        )
    if semiring in READS_RESULT:
        if argmax.dtype != a.dtype:
            raise InvalidArgumentError(
                f"tropical.{op}: semiring '{semiring}' reads the forward's C where the others read the argmax: "
                f"pass C (of the operands' dtype, {a.dtype}), not a {argmax.dtype} tensor"
            )
    elif argmax.dtype != torch.int32:
        raise InvalidArgumentError(
            f"tropical.{op}: argmax must be int32 (as gemm_argmax returns it), not {argmax.dtype}"
        )
    check_devices(f"{NAMESPACE}.{op}", {"grad_c": grad_c, "argmax": argmax, "a": a, "b": b})
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k or grad_c.shape[-2] != m or grad_c.shape[-1] != n or argmax.shape != grad_c.shape:
        raise InvalidArgumentError(
            f"tropical.{op}: shapes do not fit a product: a {tuple(a.shape)}, b {tuple(b.shape)}, "
            f"grad_c {tuple(grad_c.shape)}, argmax {tuple(argmax.shape)}"
        )
    if batched:
        count = grad_c.shape[0]
        for name, t_ in (("a", a), ("b", b)):
            if t_.shape[0] != count and t_.shape[0] != 1:
                raise InvalidArgumentError(
                    f"tropical.{op}: {name} has a batch of {t_.shape[0]} but grad_c has {count}; it must be "
                    f"{count} or 1"
                )
    return s, t


def unsupported_device(op: str, t: Tensor) -> UnsupportedError:
    return UnsupportedError(
        f"tropical.{op}: tensors on {t.device.type} are not supported; tropical_gemm runs on CUDA devices "
        f"and on the CPU: move them with .cuda() or .cpu()"
    )


# --- OrAnd on packed operands -------------------------------------------------------------------


def check_pack(op: str, x: Tensor, dim: int) -> int:
    """Validates pack_bits' operand; returns the dimension packed as -1 (columns: an A) or -2 (rows: a B)."""
    if x.dtype not in BOOLEANS:
        raise UnsupportedError(
            f"tropical.{op} packs booleans: bool or uint8 tensors (nonzero is true), not {x.dtype}; convert it, "
            f"e.g. with (x != 0)"
        )
    if x.dim() not in (2, 3):
        raise InvalidArgumentError(f"tropical.{op} takes a 2-D tensor or a 3-D batch of them, not a {x.dim()}-D one")
    d = dim - x.dim() if dim >= 0 else dim
    if d not in (-1, -2):
        raise InvalidArgumentError(
            f"tropical.{op}: dim {dim} of a {x.dim()}-D tensor; K is packed along the last dimension (-1, the "
            f"columns of an A) or the one before it (-2, the rows of a B)"
        )
    return d


def check_packed_product(op: str, a: Tensor, b: Tensor, k: int) -> tuple[int, int, int, int]:
    """Validates a packed product's operands (int32 words from pack_bits: a (.., M, ceil(k/32)),
    b (.., ceil(k/32), N), both 2-D or both 3-D); returns (count, M, N, words)."""
    for name, t in (("a", a), ("b", b)):
        if t.dtype != torch.int32:
            raise InvalidArgumentError(
                f"tropical.{op}: {name} must hold int32 words (as tropical_gemm.pack_bits makes them), not {t.dtype}"
            )
    if a.dim() not in (2, 3) or b.dim() != a.dim():
        raise InvalidArgumentError(
            f"tropical.{op} takes 2-D word tensors, or 3-D ones (batched), both alike; a is {a.dim()}-D and b "
            f"{b.dim()}-D"
        )
    batched = a.dim() == 3
    check_devices(f"{NAMESPACE}.{op}", {"a": a, "b": b})
    if k < 0:
        raise InvalidArgumentError(f"tropical.{op}: k is {k}: the number of booleans packed along K is 0 or more")
    words = (k + 31) // 32
    if a.shape[-1] != words or b.shape[-2] != words:
        raise InvalidArgumentError(
            f"tropical.{op}: a is {tuple(a.shape)} and b is {tuple(b.shape)} words, but k = {k} packs into {words} "
            f"words: a must be (.., M, {words}) (packed along dim -1) and b ({words}, N) (along dim -2)"
        )
    count = 1
    if batched:
        count = check_batches(f"{NAMESPACE}.{op}", a.shape[0], b.shape[0])
    return count, a.shape[-2], b.shape[-1], words


# --- the walk back through a chain's argmax tables ----------------------------------------------


def check_backtrack(op: str, back: Tensor, last: Tensor) -> tuple[int, int, int]:
    """Validates backtrack's arguments: back (T, B, S) and last (B,) or (B, 1), int32 on one device;
    returns (T, B, S)."""
    for name, t in (("back", back), ("last", last)):
        if t.dtype != torch.int32:
            raise InvalidArgumentError(
                f"tropical.{op}: {name} must hold int32 state indices (as matmul(..., return_argmax=True) returns "
                f"them), not {t.dtype}; convert it with .int()"
            )
    if back.dim() != 3:
        raise InvalidArgumentError(
            f"tropical.{op}: back must be 3-D, (T, B, S): the argmax tables of T steps, each B rows x S states; "
            f"it is {back.dim()}-D {tuple(back.shape)} (stack the steps' tables with torch.stack)"
        )
    check_devices(f"{NAMESPACE}.{op}", {"back": back, "last": last})
    steps, rows, states = back.shape
    if last.dim() not in (1, 2) or last.shape[0] != rows or (last.dim() == 2 and last.shape[1] != 1):
        raise InvalidArgumentError(
            f"tropical.{op}: last is {tuple(last.shape)} but must be ({rows},) or ({rows}, 1): the final state "
            f"of each of back's {rows} rows (back is {tuple(back.shape)}, (T, B, S))"
        )
    return steps, rows, states


# --- the counting semiring's (value, count) pairs ---------------------------------------------------

# Counting values' dtypes, as the library's table says -> tropical_dtype; counts are float64.
COUNTING_DTYPES = {getattr(torch, n): DTYPE_CODES[n] for n in SEMIRING_FACTS[COUNTING].dtypes}


def check_counting_values(where: str, what: str, values: Tensor) -> int:
    """Counting values (``what`` names them) of a dtype the counting semiring takes; returns its code."""
    code = COUNTING_DTYPES.get(values.dtype)
    if code is None:
        names = " or ".join(SEMIRING_FACTS[COUNTING].dtypes)
        raise UnsupportedError(
            f"{where}: {what} has dtype {values.dtype}; counting values are {names} (counts are float64): "
            f"convert them, e.g. with .double()"
        )
    return code


def check_counting_pair(where: str, name: str, values: Tensor, counts: Tensor) -> int:
    """An operand's ``{name}_values`` and ``{name}_counts``: values of a counting dtype, counts of their
    shape on their device; returns the values' dtype code."""
    code = check_counting_values(where, f"{name}_values", values)
    if counts.shape != values.shape:
        raise InvalidArgumentError(
            f"{where}: {name}_counts has shape {tuple(counts.shape)} but {name}_values {tuple(values.shape)}: "
            f"each value needs its count"
        )
    if counts.device != values.device:
        raise InvalidArgumentError(
            f"{where}: {name}_counts is on {counts.device} but {name}_values on {values.device}: move them to one "
            f"device"
        )
    return code
