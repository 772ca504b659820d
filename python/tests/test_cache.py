"""The kernel registry and cache from Python (the library's C ABI), and NVRTC: the library's own
search, with PyTorch's NVRTC (pip's nvidia-cuda-nvrtc) added as its fallback. No PyTorch needed."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest

import tropical_gemm as tg
from tropical_gemm import _native, _nvrtc

import nvrtc_isolation


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").close()
    return str(path)


def run(python, code, env, prefix=(), timeout=600):
    return subprocess.run([*prefix, python, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=timeout)


def without_nvrtc_settings(env):
    """env less everything that points the library at an NVRTC of the user's choosing."""
    dropped = ("TROPICAL_GEMM_NVRTC", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH")
    return {k: v for k, v in env.items() if k not in dropped}


# --- NVRTC ------------------------------------------------------------------------------------


def test_pip_candidates_find_pytorchs_nvrtc(tmp_path):
    cu13 = touch(tmp_path / "site" / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13")
    cu12 = touch(tmp_path / "other" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    touch(tmp_path / "other" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc-builtins.so.12.8")
    found = _nvrtc.pip_candidates([str(tmp_path / "site"), str(tmp_path / "other"), str(tmp_path / "none")])
    assert found == [cu13, cu12]


def test_pytorchs_cuda_version_comes_first(tmp_path):
    # The library orders what it finds (tropical_nvrtc_site_libraries): PyTorch's major version first.
    site = str(tmp_path / "site")
    pip = [touch(tmp_path / "site" / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13"),
           touch(tmp_path / "site" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")]
    assert _nvrtc.pip_candidates([site], 12) == [pip[1], pip[0]]
    assert _nvrtc.pip_candidates([site], 13) == pip
    assert _nvrtc.pip_candidates([site], None) == pip  # no PyTorch: newest first
    assert _nvrtc.pip_candidates([site], 11) == pip
    assert _nvrtc.pip_candidates([str(tmp_path / "none")], 13) == []


def test_fallbacks_come_after_the_librarys_own_places(python, subprocess_env, tmp_path):
    # In a child: fallbacks are for the whole process, and this one cannot be loaded.
    site = tmp_path / "site"
    cu12 = touch(site / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    cu13 = touch(site / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13")
    code = f"""
        import os, sys
        sys.modules["torch"] = None  # the order then follows the versions alone
        from tropical_gemm import _nvrtc
        _nvrtc.site_roots = lambda: [{str(site)!r}]
        own = _nvrtc.search_path()
        print("added", _nvrtc.ensure())
        print("again", _nvrtc.ensure())
        print("own", own)
        print("now", _nvrtc.search_path())
        print("env", os.environ.get("TROPICAL_GEMM_NVRTC"))
        print(_nvrtc.describe())
        """
    env = without_nvrtc_settings(subprocess_env)
    r = run(python, code, env)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if line.split(" ", 1)[0] in
                 ("added", "again", "own", "now", "env"))
    own, now = ast.literal_eval(lines["own"]), ast.literal_eval(lines["now"])
    assert ast.literal_eval(lines["added"]) == ast.literal_eval(lines["again"]) == [cu13, cu12]
    assert own and "/usr/local/cuda/lib64/libnvrtc.so" in own and cu13 not in own
    assert now == own + [cu13, cu12]  # after every place of the library's own, in the order added
    assert lines["env"] == "None"  # the environment is left alone
    assert f"{cu13} (PyTorch's, added by tropical_gemm)" in r.stdout

    # $TROPICAL_GEMM_NVRTC names the one library to load: no other place, no fallback.
    r = run(python, code, dict(env, TROPICAL_GEMM_NVRTC="/my/libnvrtc.so"))
    assert r.returncode == 0, r.stderr
    assert "now ['/my/libnvrtc.so']" in r.stdout and "env /my/libnvrtc.so" in r.stdout


def test_a_fallback_that_cannot_be_loaded_is_named(python, subprocess_env, tmp_path):
    # No toolkit visible (its folders hidden in a mount namespace) and a fake PyTorch NVRTC: the
    # error lists the library's places and then the fallback, with why each failed.
    hide = nvrtc_isolation.without_system_nvrtc(tmp_path / "empty")
    if hide is None:
        pytest.skip(nvrtc_isolation.why_not())
    fake = touch(tmp_path / "site" / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13")  # empty: not a library
    code = f"""
        import sys
        sys.modules["torch"] = None  # PyTorch would load its own NVRTC into the process
        import tropical_gemm as tg
        import tropical_gemm._nvrtc  # (the package imports it at its first compile, not at import)
        tg._nvrtc.site_roots = lambda: [{str(tmp_path / "site")!r}]
        try:
            tg.warm_up(["tropical_gemm_f32_maxplus"], archs=[90])
        except tg.NoCompilerError as e:
            print("no compiler:", e)
        """
    r = run(python, code, without_nvrtc_settings(subprocess_env), prefix=hide)
    assert r.returncode == 0, r.stderr
    assert "no compiler: " in r.stdout, r.stdout
    message = r.stdout.split("no compiler: ", 1)[1]
    assert fake in message and "TROPICAL_GEMM_NVRTC" in message
    assert message.index("libnvrtc.so.13") < message.index(fake)  # the library's own places first


def test_pytorchs_nvrtc_compiles_where_the_toolkit_is_hidden(python, subprocess_env, tmp_path):
    # The real thing: with the toolkit hidden, the NVRTC of pip's nvidia-cuda-nvrtc (added as a
    # fallback) compiles a kernel for sm_90, without a GPU.
    candidates = _nvrtc.pip_candidates()
    if not candidates:
        pytest.skip("pip's nvidia-cuda-nvrtc (PyTorch's NVRTC) is not installed here")
    hide = nvrtc_isolation.without_system_nvrtc(tmp_path / "empty")
    if hide is None:
        pytest.skip(nvrtc_isolation.why_not())
    code = """
        import sys
        sys.modules["torch"] = None  # PyTorch would load its NVRTC itself; the fallback must do it
        import tropical_gemm as tg
        r = tg.warm_up(["tropical_gemm_f32_maxplus"], archs=[90])[0]
        loaded = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libnvrtc.so" in l})
        print("compiled", r.compiled)
        print("loaded", loaded)
        """
    r = run(python, code, without_nvrtc_settings(subprocess_env), prefix=hide)
    assert r.returncode == 0, r.stderr
    assert "compiled True" in r.stdout, r.stdout
    loaded = ast.literal_eval(r.stdout.split("loaded ", 1)[1].strip())
    assert loaded and set(loaded) <= set(candidates), loaded


# --- the registry and the cache ---------------------------------------------------------------


def test_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("TROPICAL_GEMM_CACHE_DIR", str(tmp_path / "c"))
    assert tg.cache_directory() == (str(tmp_path / "c"), True)
    monkeypatch.setenv("TROPICAL_GEMM_CACHE", "off")
    assert tg.cache_directory()[1] is False


def test_registry_fields():
    kernels = tg.cache.kernels()
    assert [k.name for k in kernels] == tg.kernel_names()
    assert len({k.name for k in kernels}) == len(kernels) >= 31
    assert {k.dtype for k in kernels} == {t.tag for t in _native.ELEMENT_TYPES.values()}  # every type has kernels
    assert {k.semiring for k in kernels} <= set(_native.SEMIRING_FACTS) | {"any"}  # the library's table
    assert {"gemm", "gemm_argmax", "batched", "backward_a", "backward_b", "pack_bits", "backtrack"} <= {
        k.group for k in kernels}
    for k in kernels:
        assert k.dtype in k.name and (k.semiring == "any" or k.semiring in k.name)
        assert k.operation in ("gemm", "gemm_argmax", "backward_a", "backward_b", "pack_bits", "backtrack")
    backward = [k for k in kernels if k.group.startswith("backward")]
    # the backward kernels take their semiring at launch, except those of a gradient that reads C (LogPlus's own)
    assert backward and all(k.semiring == "any" or k.semiring in _native.READS_RESULT for k in backward)


def test_select_kernels_by_fields():
    names = tg.cache.select_kernels(dtypes=["float32"], semirings=["maxplus"])
    assert "tropical_gemm_f32_maxplus" in names and "tropical_gemm_argmax_f32_maxplus" in names
    assert "tropical_backward_a_f32" in names  # takes its semiring at launch: matches any
    kernels = {k.name: k for k in tg.cache.kernels()}
    assert all(kernels[n].dtype == "f32" and kernels[n].semiring in ("maxplus", "any") for n in names)
    argmax = tg.cache.select_kernels(dtypes=["f64"], groups=["gemm_argmax"])
    assert argmax and all(kernels[n].group == "gemm_argmax" and kernels[n].dtype == "f64" for n in argmax)
    variant = kernels["tropical_gemm_f32_maxplus"].variant
    same_variant = tg.cache.select_kernels(variants=[variant])
    assert "tropical_gemm_f32_maxplus" in same_variant and all(kernels[n].variant == variant for n in same_variant)
    assert tg.cache.select_kernels(["tropical_gemm_f32_maxplus", "tropical_backward_a_f32"], semirings=["minplus"]) == [
        "tropical_backward_a_f32"
    ]


def test_select_kernels_refuses_unknown_fields():
    with pytest.raises(tg.InvalidArgumentError, match=r"unknown group \['gemmm'\]: the registry's groups are"):
        tg.cache.select_kernels(groups=["gemmm"])
    with pytest.raises(tg.InvalidArgumentError, match=r"unknown variant \['fast'\].*'tiled'"):
        tg.warm_up(variants=["fast"], archs=[90])


def test_device_architectures_without_a_driver(python, subprocess_env):
    env = dict(subprocess_env, TROPICAL_GEMM_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    r = run(python, """
        import tropical_gemm as tg
        try:
            tg.device_architectures()
        except tg.NoDriverError as e:
            print("status", e.status, str(e).splitlines()[0])
        """, env)
    assert r.returncode == 0, r.stderr
    assert f"status {tg.NoDriverError.status} no usable CUDA driver" in r.stdout


@pytest.mark.skipif(not nvrtc_isolation.nvrtc_loadable(),
                    reason="no NVRTC on this machine (neither the toolkit's nor PyTorch's)")
def test_warm_up_for_an_architecture_without_a_gpu(python, subprocess_env):
    # Compiles for sm_90 with no GPU at all, into an empty cache; a second process finds it there.
    code = """
        import tropical_gemm as tg
        r = tg.warm_up(["tropical_batched_f32_maxplus"], archs=[90])[0]
        print(r.compiled, r.kernel, r.arch)
        """
    runs = [run(python, code, subprocess_env) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.strip() == "True tropical_batched_f32_maxplus 90"
    assert runs[1].stdout.strip() == "False tropical_batched_f32_maxplus 90"
    assert os.listdir(os.path.join(subprocess_env["TROPICAL_GEMM_CACHE_DIR"], "v1", "sm_90"))
