"""A child process that sees no NVRTC in the library's own places (no toolkit visible), for the
tests of the fallback to PyTorch's NVRTC on a machine that has the toolkit (as CI's does).

The folders that hold an NVRTC the library would find (those the loader's cache names for
libnvrtc.so*, and /usr/local/cuda/lib64) are covered by an empty folder in a private mount
namespace (``unshare -m``, or ``unshare -r -m`` without root), which lasts as long as the child.
The child's environment must drop CUDA_HOME, CUDA_PATH, LD_LIBRARY_PATH and TROPICAL_GEMM_NVRTC.
Where that cannot be done (no unshare, no namespaces allowed, NVRTC in a system folder that cannot
be covered), :func:`without_system_nvrtc` returns None and :func:`why_not` says why.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
# The loader's default folders: covering them would hide the C library too.
_SYSTEM = {os.path.realpath(d) for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
                                         "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                                         "/usr/lib/aarch64-linux-gnu")}
_reason = "not tried"


def nvrtc_folders() -> set[str]:
    """The folders (real paths) from which the library's own search could load an NVRTC."""
    folders = set()
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    if ldconfig:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=60).stdout
        for line in out.splitlines():
            if "libnvrtc.so" in line and "=>" in line:
                folders.add(os.path.realpath(os.path.dirname(line.split("=>", 1)[1].strip())))
    for folder in ["/usr/local/cuda/lib64", *_SYSTEM]:
        if any(os.path.exists(os.path.join(folder, s)) for s in _SONAMES):
            folders.add(os.path.realpath(folder))
    return folders


def without_system_nvrtc(empty) -> list[str] | None:
    """A command prefix that runs a program where the library's own places hold no NVRTC, or None."""
    global _reason
    unshare = shutil.which("unshare")
    if unshare is None:
        _reason = "unshare (util-linux) is not installed: cannot hide the CUDA toolkit's NVRTC"
        return None
    folders = sorted(nvrtc_folders())
    system = [f for f in folders if f in _SYSTEM]
    if system:
        _reason = f"NVRTC is in a system folder ({system[0]}) that cannot be hidden from a test"
        return None
    empty = str(empty)
    os.makedirs(empty, exist_ok=True)
    mounts = " && ".join(f"mount --bind {shlex.quote(empty)} {shlex.quote(f)}" for f in folders) or "true"
    errors = []
    for flags in (["-m"], ["-r", "-m"]):
        prefix = [unshare, *flags, "sh", "-c", mounts + ' && exec "$@"', "sh"]
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            errors.append(str(e))
            continue
        if probe.returncode == 0:
            return prefix
        errors.append(probe.stderr.strip())
    _reason = f"cannot hide the CUDA toolkit's NVRTC in a private mount namespace: {'; '.join(errors)}"
    return None


def why_not() -> str:
    return _reason


def nvrtc_loadable() -> bool:
    """Whether the library's search, or PyTorch's NVRTC, would give a loadable NVRTC (tried in a child)."""
    from tropical_gemm import _nvrtc

    places = _nvrtc.search_path() + _nvrtc.pip_candidates()
    code = "import ctypes, sys\nfor p in sys.argv[1:]:\n    try:\n        ctypes.CDLL(p); print('ok'); break\n" \
           "    except OSError: pass\n"
    r = subprocess.run([sys.executable, "-c", code, *places], capture_output=True, text=True, timeout=60)
    return "ok" in r.stdout
