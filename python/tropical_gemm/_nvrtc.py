"""Finding NVRTC for the library: the CUDA toolkit's, or the one PyTorch ships (pip's nvidia-cuda-nvrtc).

The library looks for NVRTC itself, the first time a kernel must be compiled (a warm kernel cache
never needs it): ``$TROPICAL_GEMM_NVRTC``, then ``libnvrtc.so.13`` and ``libnvrtc.so.12`` on the
loader's path, ``$CUDA_HOME``/``$CUDA_PATH``, ``/usr/local/cuda/lib64``. A PyTorch installed from
PyPI brings its own NVRTC in site-packages (``nvidia/cu13/lib/libnvrtc.so.13``,
``nvidia/cuda_nvrtc/lib/libnvrtc.so.12``), where that search does not look. Before the first GPU
call, :func:`ensure` checks, without loading anything, whether the library's search would find
one; if not, and PyTorch's is there, it sets ``TROPICAL_GEMM_NVRTC`` to it. A value set by the user
is never changed.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import threading

VARIABLE = "TROPICAL_GEMM_NVRTC"
SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12")

_lock = threading.Lock()
_done = False


def _loader_cache() -> set[str]:
    """The sonames in the dynamic loader's cache (ldconfig -p), or an empty set."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
    )
    if not ldconfig:
        return set()
    try:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return set(re.findall(r"^\s*(\S+)\s", out, flags=re.MULTILINE))


def _already_loaded() -> str | None:
    """An NVRTC this process has loaded already (dlopen by soname returns it)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path) in SONAMES:
                    return path
    except OSError:
        pass
    return None


def library_search() -> str | None:
    """What the library's own search would load, as far as can be told without loading it; None: nothing."""
    loaded = _already_loaded()
    if loaded:
        return loaded
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    dirs += ["/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]
    for soname in SONAMES:
        for d in dirs:
            if os.path.exists(os.path.join(d, soname)):
                return os.path.join(d, soname)
    cached = _loader_cache()
    for soname in SONAMES:
        if soname in cached:
            return soname
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root:
            for soname in SONAMES + ("libnvrtc.so",):
                if os.path.exists(os.path.join(root, "lib64", soname)):
                    return os.path.join(root, "lib64", soname)
    if os.path.exists("/usr/local/cuda/lib64/libnvrtc.so"):
        return "/usr/local/cuda/lib64/libnvrtc.so"
    return None


def pip_candidates(roots: list[str] | None = None) -> list[str]:
    """NVRTC libraries of pip's nvidia-cuda-nvrtc packages (the ones PyTorch uses), newest major first."""
    if roots is None:
        roots = []
        try:
            import importlib.util

            spec = importlib.util.find_spec("nvidia")
            if spec is not None and spec.submodule_search_locations:
                roots += [os.path.dirname(p) for p in spec.submodule_search_locations]
        except (ImportError, ValueError):
            pass
        roots += [p for p in sys.path if p]
    found: list[str] = []
    for root in dict.fromkeys(roots):  # in order, without repeats
        for pattern in ("nvidia/cu*/lib/libnvrtc.so.*", "nvidia/cuda_nvrtc/lib/libnvrtc.so.*"):
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                if re.search(r"libnvrtc\.so\.\d+$", path) and path not in found:
                    found.append(path)

    def major(path: str) -> int:
        return int(path.rsplit(".", 1)[1])

    return sorted(found, key=major, reverse=True)


def _torch_cuda_major() -> int | None:
    torch = sys.modules.get("torch")
    version = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def choose(library_found: str | None, candidates: list[str], cuda_major: int | None) -> str | None:
    """The path to put in $TROPICAL_GEMM_NVRTC, or None to leave the library's own search alone."""
    if library_found or not candidates:
        return None
    if cuda_major is not None:
        for path in candidates:
            if path.endswith(f".so.{cuda_major}"):
                return path
    return candidates[0]


def ensure() -> str | None:
    """Sets $TROPICAL_GEMM_NVRTC to PyTorch's NVRTC where the library would otherwise find none.

    Runs once per process; returns the path it set, or None. Cheap after the first call.
    """
    global _done
    if _done:
        return None
    with _lock:
        if _done:
            return None
        chosen = None
        if not os.environ.get(VARIABLE):
            chosen = choose(library_search(), pip_candidates(), _torch_cuda_major())
            if chosen:
                os.environ[VARIABLE] = chosen
        _done = True
        return chosen


def describe() -> str:
    """Where NVRTC would come from, for messages and tests."""
    if os.environ.get(VARIABLE):
        return f"${VARIABLE} = {os.environ[VARIABLE]}"
    found = library_search()
    if found:
        return f"the library's own search ({found})"
    candidates = pip_candidates()
    return f"PyTorch's NVRTC ({candidates[0]})" if candidates else "none found"
