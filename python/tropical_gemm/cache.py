"""The kernel cache from Python: list the kernels, warm the cache ahead of use.

Kernels are compiled by NVRTC on their first use and kept in the disk cache (README, "The kernel
cache"). :func:`warm_up` compiles them ahead of time, in parallel, for this machine's GPUs or for
any architectures (no GPU needed then), so that later processes start without compiling. Needs no
PyTorch.
"""

from __future__ import annotations

import ctypes
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, NamedTuple

from . import _native, _nvrtc
from ._native import InvalidArgumentError


class WarmResult(NamedTuple):
    kernel: str  # the kernel's name, e.g. "tropical_gemm_f32_maxplus"
    arch: int  # XY of sm_XY
    compiled: bool  # compiled by this call; False: the cache held a valid entry already
    ptx_for_jit: bool  # stored as PTX for the driver to finish (NVRTC does not know the architecture)
    seconds: float


def kernel_names() -> list[str]:
    """Every kernel of the library's registry, in registry order."""
    return [_native.host.tgh_kernel_name(i).decode() for i in range(_native.host.tgh_kernel_count())]


def cache_directory() -> tuple[str, bool]:
    """(the cache root the library uses, whether the disk cache is enabled), from the environment."""
    buffer = ctypes.create_string_buffer(4096)
    enabled = ctypes.c_int32(0)
    status = _native.host.tgh_cache_directory(buffer, len(buffer), ctypes.byref(enabled))
    if status:
        raise _native.host_error(status)
    return buffer.value.decode(), bool(enabled.value)


def device_architectures() -> list[int]:
    """The architecture (e.g. 90 for sm_90) of each CUDA device, by ordinal; needs the driver, not a context."""
    out = (ctypes.c_int32 * 64)()
    count = ctypes.c_int64(0)
    status = _native.host.tgh_device_architectures(out, 64, ctypes.byref(count))
    if status:
        raise _native.host_error(status)
    return [out[i] for i in range(min(count.value, 64))]


_DTYPE_TAGS = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64"}


def _dtype_tag(dtype) -> str:
    name = str(dtype).replace("torch.", "")
    tag = _DTYPE_TAGS.get(name, name)
    if tag not in _DTYPE_TAGS.values():
        raise InvalidArgumentError(f"unknown dtype {dtype!r}: use float32, float64, int32 or int64")
    return tag


def select_kernels(
    kernels: Iterable[str] | None = None,
    dtypes: Iterable | None = None,
    semirings: Iterable[str] | None = None,
) -> list[str]:
    """Kernel names by name, and/or by dtype and semiring (backward kernels have no semiring and match any)."""
    names = kernel_names()
    if kernels is not None:
        wanted = list(kernels)
        unknown = [k for k in wanted if k not in names]
        if unknown:
            raise InvalidArgumentError(
                f"unknown kernels {unknown}; tropical_gemm.kernel_names() lists the {len(names)} there are"
            )
        names = wanted
    if dtypes is not None:
        tags = {_dtype_tag(d) for d in dtypes}
        names = [n for n in names if re.search(r"_(f32|f64|i32|i64)(_|$)", n).group(1) in tags]
    if semirings is not None:
        chosen = set()
        for s in semirings:
            canonical = _native.SEMIRING_ALIASES.get(str(s).lower())
            if canonical is None:
                raise InvalidArgumentError(f"unknown semiring {s!r}: use 'maxplus', 'minplus' or 'maxmul'")
            chosen.add(canonical)
        names = [n for n in names if "backward" in n or n.rsplit("_", 1)[1] in chosen]
    return names


def warm_up(
    kernels: Iterable[str] | None = None,
    *,
    dtypes: Iterable | None = None,
    semirings: Iterable[str] | None = None,
    archs: Iterable[int] | None = None,
    workers: int | None = None,
) -> list[WarmResult]:
    """Fills the disk cache with kernels, compiling only those it lacks, in parallel.

    ``kernels``: names (see :func:`kernel_names`), default all; ``dtypes`` (e.g. ``[torch.float32]``
    or ``["float32"]``) and ``semirings`` narrow the choice. ``archs``: architectures such as
    ``[90]``; default those of this machine's GPUs (no GPU needed when they are given). NVRTC is
    found as for the ops (the toolkit's, else PyTorch's). Raises :class:`NoCompilerError` without
    NVRTC, :class:`InvalidArgumentError` where the disk cache is off (``TROPICAL_GEMM_CACHE=off``).
    """
    names = select_kernels(kernels, dtypes, semirings)
    arch_list = sorted(set(archs)) if archs is not None else sorted(set(device_architectures()))
    if not arch_list:
        raise InvalidArgumentError(
            "no CUDA device found to warm the cache for; name the architectures, e.g. warm_up(archs=[90])"
        )
    _nvrtc.ensure()
    tasks = [(n, a) for a in arch_list for n in names]

    def warm(task):
        name, arch = task
        compiled, jit, seconds = ctypes.c_int32(0), ctypes.c_int32(0), ctypes.c_double(0)
        status = _native.host.tgh_warm_kernel(
            name.encode(), arch, ctypes.byref(compiled), ctypes.byref(jit), ctypes.byref(seconds)
        )
        if status:
            raise _native.host_error(status, f"warming {name} for sm_{arch}: ")
        return WarmResult(name, arch, bool(compiled.value), bool(jit.value), seconds.value)

    with ThreadPoolExecutor(max_workers=workers or min(len(tasks), os.cpu_count() or 1) or 1) as pool:
        return list(pool.map(warm, tasks))
