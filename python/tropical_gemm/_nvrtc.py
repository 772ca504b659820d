"""NVRTC for the library: the folders where pip's NVRTC may be, handed to the library's own search.

The library looks for NVRTC itself, the first time a kernel must be compiled (a warm kernel cache
never needs it), and the whole order is its own (``src/nvrtc/nvrtc_library.cpp``):
``$TROPICAL_GEMM_NVRTC`` alone where it is set; else ``libnvrtc.so.13`` and ``libnvrtc.so.12`` on
the loader's path, the toolkits under ``$CUDA_HOME``/``$CUDA_PATH``, ``/usr/local/cuda/lib64``,
then the fallbacks an application adds. A PyTorch installed from PyPI brings its own NVRTC in
site-packages (``nvidia/cu13/lib/libnvrtc.so.13``, ``nvidia/cuda_nvrtc/lib/libnvrtc.so.12``), where
those places do not reach, and only Python knows where its site-packages folders are. So before the
first GPU call or warm-up, :func:`ensure` names them to the library in one call
(``tropical_add_nvrtc_site_folders``, with PyTorch's CUDA major version to prefer), and the library
finds the wheels' NVRTC there, orders them and adds them as fallbacks: tried after its own places,
only if those fail. Nothing here loads NVRTC, looks into a folder or changes the environment;
:func:`search_path` and :func:`describe` report the library's list.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import threading

from . import _native

_lock = threading.Lock()
done = False  # ensure() has run in this process; read on the ops' hot path, so a plain global
_added: list[str] = []
_PYTORCHS = "PyTorch's, added by tropical_gemm"


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


def torch_cuda_major() -> int | None:
    """The major version of the CUDA that PyTorch was built with, where PyTorch is imported already."""
    torch = sys.modules.get("torch")
    version = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def _folders(roots: list[str]) -> bytes:
    """Folders for the C ABI: one per line (a folder whose name holds a newline cannot be named)."""
    return b"\n".join(os.fsencode(r) for r in roots if r and "\n" not in r)


def _lines(call, what: str) -> list[str]:
    """The lines that `call(buffer, capacity)` writes, growing the buffer until they fit."""
    capacity = 4096
    while True:
        buffer = ctypes.create_string_buffer(capacity)
        status = call(buffer, capacity)
        if status == 0:
            return [line for line in os.fsdecode(buffer.value).split("\n") if line]
        if capacity >= 1 << 20:  # the library refuses for another reason than the buffer's size
            raise _native.library_error(status, what)
        capacity *= 16


def _site_libraries(folders: bytes, cuda_major: int) -> list[str]:
    return _lines(lambda out, capacity: _native.lib.tropical_nvrtc_site_libraries(folders, cuda_major, out, capacity),
                  "looking for pip's NVRTC: ")


def pip_candidates(roots: list[str] | None = None, cuda_major: int | None = None) -> list[str]:
    """The NVRTC libraries of pip's nvidia-cuda-nvrtc wheels (the ones PyTorch uses) that the library
    finds under ``roots`` (default :func:`site_roots`), in the order it would try them: those of CUDA
    major version ``cuda_major`` first, then the newest first (``tropical_nvrtc_site_libraries``)."""
    return _site_libraries(_folders(site_roots() if roots is None else roots), cuda_major or 0)


def ensure() -> list[str]:
    """Names this interpreter's site-packages folders to the library, which adds pip's NVRTC found
    there (PyTorch's CUDA major version first) as its fallbacks, once per process; returns the
    libraries added (all of them on every call). Cheap after the first call."""
    global done
    if done:
        return list(_added)
    with _lock:
        if not done:
            folders, major = _folders(site_roots()), torch_cuda_major() or 0
            status = _native.lib.tropical_add_nvrtc_site_folders(folders, major)
            if status:
                raise _native.library_error(status, "adding pip's NVRTC as a fallback: ")
            _added.extend(_site_libraries(folders, major))  # what that call added, for describe()
            done = True
    return list(_added)


def search_path() -> list[str]:
    """Where the library looks for NVRTC, in order (tropical_nvrtc_search_path); loads nothing."""
    return _lines(_native.lib.tropical_nvrtc_search_path, "listing where NVRTC is looked for: ")


def describe() -> str:
    """Where NVRTC would come from, in words, for messages and tests: the library's search order, each
    place with where it came from (tropical_nvrtc_search_places), this package's additions marked."""
    lines = []
    for place in _lines(_native.lib.tropical_nvrtc_search_places, "listing where NVRTC is looked for: "):
        path, _, why = place.partition("\t")
        lines.append(f"  {path} ({_PYTORCHS if path in _added else why})")
    return "the library looks for NVRTC in this order:\n" + "\n".join(lines)
