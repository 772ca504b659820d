"""Finding NVRTC (the toolkit's or PyTorch's) and warming the kernel cache from Python."""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest

import tropical_gemm as tg
from tropical_gemm import _nvrtc


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").close()
    return str(path)


def test_pip_candidates_find_pytorchs_nvrtc(tmp_path):
    cu13 = touch(tmp_path / "site" / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13")
    cu12 = touch(tmp_path / "other" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    touch(tmp_path / "other" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc-builtins.so.12.8")
    found = _nvrtc.pip_candidates([str(tmp_path / "site"), str(tmp_path / "other"), str(tmp_path / "none")])
    assert found == [cu13, cu12]


def test_choice():
    pip = ["/site/nvidia/cu13/lib/libnvrtc.so.13", "/site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"]
    # The library's own search finds one: leave it alone.
    assert _nvrtc.choose("/usr/local/cuda/lib64/libnvrtc.so", pip, 13) is None
    # It finds none: PyTorch's, the one matching PyTorch's CUDA first, else the newest.
    assert _nvrtc.choose(None, pip, 12) == pip[1]
    assert _nvrtc.choose(None, pip, 13) == pip[0]
    assert _nvrtc.choose(None, pip, None) == pip[0]
    assert _nvrtc.choose(None, [], 13) is None


def test_ensure_sets_the_variable_only_when_needed(python, subprocess_env, tmp_path):
    fake = touch(tmp_path / "site" / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13")
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.append({str(tmp_path / "site")!r})
        from tropical_gemm import _nvrtc
        _nvrtc.library_search = lambda: None  # as on a machine without the toolkit
        print("set", _nvrtc.ensure())
        print("env", os.environ.get("TROPICAL_GEMM_NVRTC"))
        """)
    env = {k: v for k, v in subprocess_env.items() if k != "TROPICAL_GEMM_NVRTC"}
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"env {fake}" in r.stdout or "env /" in r.stdout  # a real nvidia package may come first
    # A value the user set is never replaced.
    env["TROPICAL_GEMM_NVRTC"] = "/my/libnvrtc.so"
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "set None" in r.stdout and "env /my/libnvrtc.so" in r.stdout


def test_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("TROPICAL_GEMM_CACHE_DIR", str(tmp_path / "c"))
    assert tg.cache_directory() == (str(tmp_path / "c"), True)


def test_select_kernels():
    names = tg.cache.select_kernels(dtypes=["float32"], semirings=["maxplus"])
    assert "tropical_gemm_f32_maxplus" in names and "tropical_gemm_argmax_f32_maxplus" in names
    assert "tropical_backward_a_f32" in names
    assert all("f32" in n for n in names) and not any("minplus" in n for n in names)


def nvrtc_available() -> bool:
    return bool(os.environ.get("TROPICAL_GEMM_NVRTC")) or _nvrtc.library_search() is not None or bool(
        _nvrtc.pip_candidates()
    )


@pytest.mark.skipif(not nvrtc_available(), reason="no NVRTC on this machine (neither the toolkit's nor PyTorch's)")
def test_warm_up_for_an_architecture_without_a_gpu(python, subprocess_env):
    # Compiles for sm_90 with no GPU at all, into an empty cache; a second process finds it there.
    code = textwrap.dedent("""
        import tropical_gemm as tg
        r = tg.warm_up(["tropical_batched_f32_maxplus"], archs=[90])[0]
        print(r.compiled, r.kernel, r.arch)
        """)
    runs = [subprocess.run([python, "-c", code], capture_output=True, text=True, env=subprocess_env, timeout=600)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.strip() == "True tropical_batched_f32_maxplus 90"
    assert runs[1].stdout.strip() == "False tropical_batched_f32_maxplus 90"
    assert os.listdir(os.path.join(subprocess_env["TROPICAL_GEMM_CACHE_DIR"], "v1", "sm_90"))
