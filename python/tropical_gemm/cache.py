"""The kernel cache from Python: list the kernels, warm the cache ahead of use.

Kernels are compiled by NVRTC on their first use and kept in the disk cache (README, "The kernel
cache"). :func:`warm_up` compiles them ahead of time, in parallel, for this machine's GPUs or for
any architectures (no GPU needed then), so that later processes start without compiling. Needs no
PyTorch. Everything here is the library's C ABI: its kernel registry (``tropical_kernel_info_at``),
cache folder, device architectures and ``tropical_warm_kernel``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, NamedTuple

from . import _native, _nvrtc
from ._native import InvalidArgumentError


class Kernel(NamedTuple):
    """One kernel of the library's registry, in the words of ``tropical_kernel_info``."""

    name: str  # the entry point, e.g. "tropical_gemm_f32_maxplus"
    group: str  # "gemm", "gemm_argmax", "batched", "backward_a", "backward_b", "pack_bits", "backtrack"
    operation: str  # "gemm", "gemm_argmax", "backward_a", "backward_b", "pack_bits", "backtrack"
    variant: str  # "tiled", "splitk", "batched", "small", "tiny", "dense", "wide", "vector", "column", "scatter", "packed", "walk", "serial"
    dtype: str  # "f32", "f64", "i32", "i64", "u8" (booleans)
    semiring: str  # "maxplus", "minplus", "maxmul", ..., "orand", or "any" (a kernel that takes it at launch)


class WarmResult(NamedTuple):
    kernel: str  # the kernel's name, e.g. "tropical_gemm_f32_maxplus"
    arch: int  # XY of sm_XY
    compiled: bool  # compiled by this call; False: the cache held a valid entry already
    ptx_for_jit: bool  # stored as PTX for the driver to finish (NVRTC does not know the architecture)
    seconds: float


_registry: list[Kernel] | None = None


def kernels() -> list[Kernel]:
    """Every kernel of the library's registry, in registry order."""
    return list(_read_registry())


def _read_registry() -> list[Kernel]:
    """The registry, read once (it never changes in a process)."""
    global _registry
    if _registry is None:
        info = _native.KernelInfo()
        found = []
        for i in range(_native.lib.tropical_kernel_count()):
            status = _native.lib.tropical_kernel_info_at(i, ctypes.byref(info))
            if status:
                raise _native.library_error(status, f"reading kernel {i} of the registry: ")
            found.append(Kernel(*(getattr(info, f).decode() for f in Kernel._fields)))
        _registry = found
    return _registry


def kernel_names() -> list[str]:
    """The names of every kernel of the library's registry, in registry order."""
    return [k.name for k in _read_registry()]


def cache_directory() -> tuple[str, bool]:
    """(the cache root the library uses, whether the disk cache is enabled), from the environment."""
    buffer = ctypes.create_string_buffer(4096)  # PATH_MAX
    enabled = ctypes.c_int32(0)
    status = _native.lib.tropical_cache_directory(buffer, len(buffer), ctypes.byref(enabled))
    if status:
        raise _native.library_error(status, "finding the cache folder: ")
    return os.fsdecode(buffer.value), bool(enabled.value)


def warm_targets(archs: Iterable[int] | None = None) -> list[int]:
    """The architectures warm_up compiles for, by the library's rule (the warm-up tool's too):
    ``archs`` checked against what NVRTC can compile for (where NVRTC can be loaded), or this
    machine's GPUs' where ``archs`` is None."""
    requested = [] if archs is None else [int(a) for a in archs]
    if archs is not None and not requested:
        raise InvalidArgumentError("archs is empty: name the architectures, e.g. warm_up(archs=[90]), or leave it out")
    given = (ctypes.c_int32 * max(len(requested), 1))(*requested)
    out = (ctypes.c_int32 * 64)()
    found = ctypes.c_int64(0)
    status = _native.lib.tropical_warm_targets(given, len(requested), out, 64, ctypes.byref(found))
    if status:
        err = _native.library_error(status, "warm_up: ")
        if not requested:  # no GPU here to warm for: how to name the architectures, in Python
            err = type(err)(f"{err}. With this package: warm_up(archs=[80, 90])", status)
        raise err
    return list(out[: min(found.value, 64)])


def device_architectures() -> list[int]:
    """The architecture (e.g. 90 for sm_90) of each CUDA device, by ordinal; needs the driver, not a context."""
    capacity = 64
    while True:
        out = (ctypes.c_int32 * capacity)()
        count = ctypes.c_int64(0)
        status = _native.lib.tropical_device_architectures(out, capacity, ctypes.byref(count))
        if status:
            raise _native.library_error(status)
        if count.value <= capacity:
            return list(out[: count.value])
        capacity = count.value


# The library's element types by name ("float32", and bool for the Boolean type) -> the kernels' tag ("f32").
_DTYPE_TAGS = {**{n: t.tag for n, t in _native.ELEMENT_TYPES.items()}, "bool": _native.BOOLEAN.tag}


def _dtype_tag(dtype) -> str:
    """The kernels' tag of a dtype given as a name ("float32", "bool"), a tag ("f32"), or a PyTorch or
    NumPy dtype: the table's name whose PyTorch dtype it is, or NumPy's name of it."""
    if isinstance(dtype, str):
        name = dtype
    else:
        torch = sys.modules.get("torch")  # a PyTorch dtype comes from a loaded PyTorch; this module never loads it
        if torch is not None and isinstance(dtype, torch.dtype):
            name = next((n for n in _DTYPE_TAGS if getattr(torch, n, None) == dtype), None)
        else:
            name = getattr(dtype, "name", None)  # NumPy's names are the table's ("float32")
    tag = _DTYPE_TAGS.get(name, name)
    if tag not in _DTYPE_TAGS.values():
        names = ", ".join(_native.ELEMENT_TYPES)
        raise InvalidArgumentError(f"unknown dtype {dtype!r}: use {names} (or bool)")
    return tag


def _semiring_name(semiring) -> str:
    """A semiring's name from any spelling the ops accept, or the name of any semiring of the library
    (counting's kernels are selected by name like any other's)."""
    word = str(semiring).lower()
    name = _native.SEMIRING_ALIASES.get(word, word if word in _native.ALL_SEMIRINGS else None)
    if name is None:
        others = " or ".join(repr(n) for n in _native.ALL_SEMIRINGS if n not in _native.SEMIRINGS)
        raise InvalidArgumentError(f"unknown semiring {semiring!r}: use {_native.semiring_list()} (or {others})")
    return name


def _chosen(values: Iterable, field: str, known: Iterable[str]) -> set[str]:
    """The values of a registry field asked for, checked against those the registry has."""
    known = sorted(set(known))
    chosen = {str(v).lower() for v in values}
    unknown = sorted(chosen.difference(known))
    if unknown:
        raise InvalidArgumentError(f"unknown {field} {unknown}: the registry's {field}s are {known}")
    return chosen


def select_kernels(
    kernels: Iterable[str] | None = None,
    dtypes: Iterable | None = None,
    semirings: Iterable[str] | None = None,
    *,
    groups: Iterable[str] | None = None,
    variants: Iterable[str] | None = None,
) -> list[str]:
    """Kernel names by name, and/or by the registry's fields: ``dtypes`` (``torch.float32``,
    ``"float32"`` or ``"f32"``; ``torch.bool``, ``"uint8"`` or ``"u8"`` for OrAnd's), ``semirings`` (a
    kernel that takes its semiring at launch, such as the backward ones, matches every semiring with a
    gradient, as the library's ``tropical_semiring_has_gradient`` says: not ``"counting"``, not
    ``"orand"``), ``groups`` (``"gemm"``, ``"gemm_argmax"``, ``"batched"``, ``"backward_a"``,
    ``"backward_b"``, ``"pack_bits"``, ``"backtrack"``) and ``variants`` (``"tiled"``, ``"splitk"``, ...,
    ``"packed"``, ``"walk"``)."""
    registry = _read_registry()
    by_name = {k.name: k for k in registry}
    if kernels is not None:
        wanted = list(kernels)
        unknown = [k for k in wanted if k not in by_name]
        if unknown:
            raise InvalidArgumentError(
                f"unknown kernels {unknown}; tropical_gemm.kernel_names() lists the {len(by_name)} there are"
            )
        chosen = [by_name[k] for k in wanted]
    else:
        chosen = registry
    if dtypes is not None:
        tags = {_dtype_tag(d) for d in dtypes}
        chosen = [k for k in chosen if k.dtype in tags]
    if semirings is not None:
        names = {_semiring_name(s) for s in semirings}
        # Kernels that take their semiring at launch (backward) serve every semiring with a gradient.
        launch_ok = bool(names & _native.GRADIENT_SEMIRINGS)
        chosen = [k for k in chosen if (k.semiring == "any" and launch_ok) or k.semiring in names]
    if groups is not None:
        wanted_groups = _chosen(groups, "group", (k.group for k in registry))
        chosen = [k for k in chosen if k.group in wanted_groups]
    if variants is not None:
        wanted_variants = _chosen(variants, "variant", (k.variant for k in registry))
        chosen = [k for k in chosen if k.variant in wanted_variants]
    return [k.name for k in chosen]


def warm_up(
    kernels: Iterable[str] | None = None,
    *,
    dtypes: Iterable | None = None,
    semirings: Iterable[str] | None = None,
    groups: Iterable[str] | None = None,
    variants: Iterable[str] | None = None,
    archs: Iterable[int] | None = None,
    workers: int | None = None,
) -> list[WarmResult]:
    """Fills the disk cache with kernels, compiling only those it lacks, in parallel.

    ``kernels``: names (see :func:`kernel_names`), default all; ``dtypes`` (e.g. ``[torch.float32]``
    or ``["float32"]``), ``semirings``, ``groups`` and ``variants`` narrow the choice (see
    :func:`select_kernels`). ``archs``: architectures such as ``[90]``; default those of this
    machine's GPUs (no GPU needed when they are given). NVRTC is found as for the ops (the library's
    own search, then PyTorch's). Raises :class:`NoCompilerError` without NVRTC,
    :class:`InvalidArgumentError` where the disk cache is off (``TROPICAL_GEMM_CACHE=off``, or
    ``TROPICAL_GEMM_CACHE_DIR`` set but empty: an empty value turns the disk cache off, with a
    warning where kernels are loaded, and never means the default folder, so that a script whose
    variable came out empty cannot fill or clear your real cache).
    """
    names = select_kernels(kernels, dtypes, semirings, groups=groups, variants=variants)
    _nvrtc.ensure()  # before the architectures are checked against NVRTC
    arch_list = warm_targets(archs)
    tasks = [(n, a) for a in arch_list for n in names]

    def warm(task):
        name, arch = task
        result = _native.WarmResultC()
        status = _native.lib.tropical_warm_kernel(name.encode(), arch, ctypes.byref(result))
        if status:
            raise _native.library_error(status, f"warming {name} for sm_{arch}: ")
        return WarmResult(name, arch, bool(result.compiled), bool(result.ptx_for_jit), result.seconds)

    with ThreadPoolExecutor(max_workers=workers or min(len(tasks), os.cpu_count() or 1) or 1) as pool:
        return list(pool.map(warm, tasks))
