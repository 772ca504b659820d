"""NVRTC for the library: its own search, and the NVRTC that PyTorch ships as a fallback.

The library looks for NVRTC itself, the first time a kernel must be compiled (a warm kernel cache
never needs it): ``$TROPICAL_GEMM_NVRTC`` alone where it is set; else ``libnvrtc.so.13`` and
``libnvrtc.so.12`` on the loader's path, the toolkits under ``$CUDA_HOME``/``$CUDA_PATH``,
``/usr/local/cuda/lib64``, then the fallbacks an application adds. A PyTorch installed from PyPI
brings its own NVRTC in site-packages (``nvidia/cu13/lib/libnvrtc.so.13``,
``nvidia/cuda_nvrtc/lib/libnvrtc.so.12``), where the library's own places do not reach. Before the
first GPU call or warm-up, :func:`ensure` adds each of those (the one of PyTorch's CUDA major
version first) as a fallback with ``tropical_add_nvrtc_fallback``: the library tries them after its
own places, only if those fail. Nothing here loads NVRTC, searches the system, or changes the
environment; :func:`search_path` and :func:`describe` report the library's own list.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import re
import sys
import threading

from . import _native

VARIABLE = "TROPICAL_GEMM_NVRTC"

_lock = threading.Lock()
done = False  # ensure() has run in this process; read on the ops' hot path, so a plain global
_added: list[str] = []


def site_roots() -> list[str]:
    """The folders that may hold pip's ``nvidia`` namespace package: its own locations, then sys.path."""
    roots = []
    try:
        spec = importlib.util.find_spec("nvidia")
        if spec is not None and spec.submodule_search_locations:
            roots += [os.path.dirname(p) for p in spec.submodule_search_locations]
    except (ImportError, ValueError):
        pass
    return roots + [p for p in sys.path if p]


def pip_candidates(roots: list[str] | None = None) -> list[str]:
    """NVRTC libraries of pip's nvidia-cuda-nvrtc packages (the ones PyTorch uses) under ``roots``
    (default :func:`site_roots`), newest major version first."""
    found: list[str] = []
    for root in dict.fromkeys(site_roots() if roots is None else roots):  # in order, without repeats
        for pattern in ("nvidia/cu*/lib/libnvrtc.so.*", "nvidia/cuda_nvrtc/lib/libnvrtc.so.*"):
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                if re.search(r"libnvrtc\.so\.\d+$", path) and path not in found:
                    found.append(path)
    return sorted(found, key=_major, reverse=True)


def _major(path: str) -> int:
    return int(path.rsplit(".", 1)[1])


def torch_cuda_major() -> int | None:
    """The major version of the CUDA that PyTorch was built with, where PyTorch is imported already."""
    torch = sys.modules.get("torch")
    version = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def preferred(candidates: list[str], cuda_major: int | None) -> list[str]:
    """The candidates in the order to try them: those of PyTorch's CUDA major version first (the
    NVRTC that PyTorch itself loads), then the rest as they came (newest first)."""
    if cuda_major is None:
        return list(candidates)
    suffix = f".so.{cuda_major}"
    return [p for p in candidates if p.endswith(suffix)] + [p for p in candidates if not p.endswith(suffix)]


def add_fallback(path: str) -> None:
    """Adds ``path`` (a libnvrtc.so) to the places the library tries after its own; effective only
    before the library first loads NVRTC in this process."""
    status = _native.lib.tropical_add_nvrtc_fallback(os.fsencode(path))
    if status:
        raise _native.library_error(status, f"adding {path} as an NVRTC fallback: ")


def ensure() -> list[str]:
    """Adds PyTorch's NVRTC libraries (pip's nvidia-cuda-nvrtc) as the library's fallbacks, once
    per process; returns the paths added (all of them on every call). Cheap after the first call."""
    global done
    if done:
        return list(_added)
    with _lock:
        if not done:
            for path in preferred(pip_candidates(), torch_cuda_major()):
                add_fallback(path)
                _added.append(path)
            done = True
    return list(_added)


def search_path() -> list[str]:
    """Where the library looks for NVRTC, in order (tropical_nvrtc_search_path); loads nothing."""
    capacity = 4096
    while True:
        buffer = ctypes.create_string_buffer(capacity)
        status = _native.lib.tropical_nvrtc_search_path(buffer, capacity)
        if status == 0:
            return [line for line in os.fsdecode(buffer.value).split("\n") if line]
        if capacity >= 1 << 20:  # the library refuses for another reason than the buffer's size
            raise _native.library_error(status, "listing where NVRTC is looked for: ")
        capacity *= 16


def describe() -> str:
    """Where NVRTC would come from, in words, for messages and tests: the library's search order,
    with the fallbacks this package added marked."""
    places = search_path()
    if os.environ.get(VARIABLE):
        return f"${VARIABLE} = {os.environ[VARIABLE]} (the library looks nowhere else)"
    lines = [f"  {p}" + (" (PyTorch's, added by tropical_gemm)" if p in _added else "") for p in places]
    return "the library looks for NVRTC in this order:\n" + "\n".join(lines)
