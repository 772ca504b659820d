"""The kernel cache against hostile files and settings, from Python (issue 15). A FIFO in place of
the compiler record (v1/nvrtc-identity) once made ``warm_up`` block forever in ``open()``; an empty
TROPICAL_GEMM_CACHE_DIR must turn the disk cache off, never mean the default folder. Each case runs
in a child process with a time bound, so that a hang fails the test rather than the test run. No GPU
needed, but for the last test; the warm-ups need NVRTC (skipped without it)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import pytest

import tropical_gemm as tg

from nvrtc_isolation import nvrtc_loadable

BOUND_S = 60  # far beyond what these children take (seconds); a hang is killed there
KERNEL = "tropical_backward_a_f32"  # one of the quickest to compile


def run(code: str, env: dict, timeout: float = BOUND_S) -> subprocess.CompletedProcess:
    """``code`` in a child Python; a child still running after ``timeout`` seconds fails the test."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child did not finish within {timeout} s (it hangs): {e.stderr!r}")


needs_nvrtc = pytest.mark.skipif(not nvrtc_loadable(),
                                 reason="no NVRTC on this machine (neither the toolkit's nor PyTorch's)")

WARM = f"""
    import tropical_gemm as tg
    r = tg.warm_up([{KERNEL!r}], archs=[90])[0]
    print(r.compiled, r.kernel, r.arch)
    """


@needs_nvrtc
def test_warm_up_does_not_hang_on_a_fifo_in_place_of_the_compiler_record(subprocess_env):
    cache = subprocess_env["TROPICAL_GEMM_CACHE_DIR"]
    first = run(WARM, subprocess_env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["True", KERNEL, "90"]

    record = os.path.join(cache, "v1", "nvrtc-identity")
    os.remove(record)
    os.mkfifo(record)  # no writer will ever open it: reading it blocks forever
    second = run(WARM, subprocess_env)
    assert second.returncode == 0, second.stderr
    # The record names the compiler; the entry's key does not depend on it: still found on disk.
    assert second.stdout.split() == ["False", KERNEL, "90"]
    # Never opened: NVRTC, loaded to find the key, is recorded again in its place.
    assert stat.S_ISREG(os.lstat(record).st_mode)

    # A kernel that is not cached yet is compiled and stored there, beside the FIFO or in its place.
    other = run(WARM.replace(KERNEL, "tropical_backward_b_f32"), subprocess_env)
    assert other.returncode == 0, other.stderr
    assert other.stdout.split() == ["True", "tropical_backward_b_f32", "90"]
    assert run(WARM.replace(KERNEL, "tropical_backward_b_f32"), subprocess_env).stdout.split()[0] == "False"


def empty_cache_dir_env(subprocess_env, tmp_path) -> dict:
    """TROPICAL_GEMM_CACHE_DIR set but empty, with a HOME and XDG_CACHE_HOME whose default cache
    folder would be written if the empty value meant "the default"."""
    env = dict(subprocess_env, TROPICAL_GEMM_CACHE_DIR="", HOME=str(tmp_path / "home"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.pop("TROPICAL_GEMM_CACHE", None)
    os.makedirs(env["HOME"])
    os.makedirs(env["XDG_CACHE_HOME"])
    return env


def default_cache_folders(tmp_path) -> list[str]:
    """Those of the default cache folders (of that HOME and XDG_CACHE_HOME) that exist. (Other caches,
    such as the CUDA driver's own ~/.nv/ComputeCache, may appear there: they are not this library's.)"""
    places = [tmp_path / "home" / ".cache" / "tropical-gemm", tmp_path / "xdg" / "tropical-gemm"]
    return [str(p) for p in places if os.path.lexists(p)]


def test_an_empty_cache_dir_turns_the_disk_cache_off(subprocess_env, tmp_path):
    env = empty_cache_dir_env(subprocess_env, tmp_path)
    r = run(f"""
        import tropical_gemm as tg
        print(repr(tg.cache_directory()))
        try:
            tg.warm_up([{KERNEL!r}], archs=[90])
            print("warmed")
        except tg.InvalidArgumentError as e:
            print("refused:", str(e).replace("\\n", " "))
        except tg.NoCompilerError:
            print("no NVRTC")  # asked for first: then nothing is warmed anywhere either
        """, env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "('', False)", "the cache is off, and names no folder"
    assert default_cache_folders(tmp_path) == [], "an empty TROPICAL_GEMM_CACHE_DIR made the default cache folder"
    if lines[1] == "no NVRTC":
        pytest.skip("no NVRTC here: warm_up stops before it looks at the cache")
    # warm_up says why, and what to do: it never warms another folder.
    assert lines[1].startswith("refused:"), r.stdout
    assert "TROPICAL_GEMM_CACHE_DIR is set but empty" in lines[1]
    assert "unset it to use the default" in lines[1]


@pytest.mark.gpu
def test_an_empty_cache_dir_warns_once_and_products_still_run(subprocess_env, tmp_path):
    # On a GPU the first kernel loaded says, once, that the disk cache is off and why; the kernels are
    # compiled into memory, and nothing is written in the default folder.
    env = empty_cache_dir_env(subprocess_env, tmp_path)
    r = run("""
        import torch, tropical_gemm
        a = torch.ones(8, 8, device="cuda")
        for _ in range(2):
            c = torch.ops.tropical.gemm(a, a, "maxplus")
        print(bool((c.cpu() == 2).all()))
        """, env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"
    warning = "the kernel cache on disk is off: TROPICAL_GEMM_CACHE_DIR is set but empty"
    assert r.stderr.count(warning) == 1, r.stderr
    assert default_cache_folders(tmp_path) == []
