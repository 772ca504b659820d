"""The package imports, and its torch-free parts work, on a machine without a GPU, without NVRTC,
and without PyTorch."""

from __future__ import annotations

import subprocess
import textwrap

import pytest


def run(python, code, env):
    return subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=300)


def test_import_without_driver_or_nvrtc(python, subprocess_env):
    # Neither a CUDA driver nor NVRTC can be loaded: import and the CPU path still work, and a
    # function that needs the driver says what is missing.
    env = dict(subprocess_env, TROPICAL_GEMM_CUDA_DRIVER="/nonexistent/libcuda.so.1",
               TROPICAL_GEMM_NVRTC="/nonexistent/libnvrtc.so", CUDA_VISIBLE_DEVICES="")
    r = run(python, """
        import tropical_gemm as tg
        print("kernels", len(tg.kernel_names()))
        try:
            tg.device_architectures()
        except tg.NoDriverError as e:
            print("no driver:", str(e).splitlines()[0])
        try:
            import torch
        except ImportError:
            print("no torch")
        else:
            a = torch.tensor([[1., 2.], [3., 4.]]); b = torch.tensor([[5., 6.], [7., 8.]])
            print("cpu", tg.matmul(a, b).tolist())
        """, env)
    assert r.returncode == 0, r.stderr
    assert "kernels " in r.stdout
    assert "no driver: no usable CUDA driver" in r.stdout
    assert "cpu [[9.0, 10.0], [11.0, 12.0]]" in r.stdout or "no torch" in r.stdout


def test_import_without_torch(python, subprocess_env):
    r = run(python, """
        import sys
        sys.modules["torch"] = None  # as if PyTorch were not installed
        import tropical_gemm as tg
        print("names", tg.kernel_names()[0])
        try:
            tg.matmul
        except ImportError as e:
            print("error:", e)
        try:
            import numpy as np
        except ImportError:
            print("no numpy")
        else:
            print("ref", tg.reference.gemm(np.array([[1., 2.], [3., 4.]]), np.array([[5., 6.], [7., 8.]]), "minplus").tolist())
        """, subprocess_env)
    assert r.returncode == 0, r.stderr
    assert "names tropical_gemm_f32_maxplus" in r.stdout
    assert "error: tropical_gemm.matmul needs PyTorch, which is not installed: pip install torch" in r.stdout
    assert "ref [[6.0, 7.0], [8.0, 9.0]]" in r.stdout or "no numpy" in r.stdout


def test_kernel_names_cover_the_registry():
    import tropical_gemm as tg

    names = tg.kernel_names()
    assert len(names) == len(set(names)) >= 31
    for dtype in ("f32", "f64", "i32", "i64"):
        for semiring in ("maxplus", "minplus", "maxmul", "maxmin", "minmax"):
            assert f"tropical_gemm_{dtype}_{semiring}" in names
            assert f"tropical_gemm_argmax_{dtype}_{semiring}" in names
    assert "tropical_backward_a_f32" in names and "tropical_backward_b_f64" in names


def test_import_leaves_the_compiler_alone(python, subprocess_env):
    # Importing the package must not import torch._dynamo (about 3 s): a process that only multiplies
    # would pay it at every start.
    r = run(python, """
        import sys
        try:
            import torch
        except ImportError:
            print("no torch")
            raise SystemExit
        import tropical_gemm
        print("dynamo imported:", "torch._dynamo" in sys.modules)
        """, subprocess_env)
    assert r.returncode == 0, r.stderr
    assert "dynamo imported: False" in r.stdout or "no torch" in r.stdout


def test_import_registers_every_op_and_defers_the_rest(python, subprocess_env):
    # Every torch.ops.tropical op exists right after the import (torch.compile and code that names
    # them rely on it); the modules a first product does not need load at their first use.
    r = run(python, """
        import sys
        try:
            import torch
        except ImportError:
            print("no torch")
            raise SystemExit
        import tropical_gemm as tg
        deferred = ("tropical_gemm._einsum", "tropical_gemm.cache", "tropical_gemm.nn", "tropical_gemm.reference")
        print("loaded:", [m for m in deferred if m in sys.modules])
        ops = ("gemm", "gemm_argmax", "bgemm", "bgemm_argmax", "gemm_backward_a", "gemm_backward_b", "pack_bits",
               "gemm_packed", "gemm_packed_argmax", "backtrack", "contract", "contract_argmax", "counting_gemm",
               "counting_contract")
        print("missing ops:", [o for o in ops if not torch._C._dispatch_has_kernel_for_dispatch_key(
            f"tropical::{o}", "Meta")])
        print("every name:", all(getattr(tg, n) is not None for n in tg.__all__))
        print("modules:", tg.cache.__name__, tg.reference.__name__, tg.nn.__name__)
        print("einsum:", tg.einsum("ij,jk->ik", torch.zeros(2, 3), torch.zeros(3, 2)).tolist())
        try:
            tg.no_such_name
        except AttributeError as e:
            print("error:", e)
        """, subprocess_env)
    assert r.returncode == 0, r.stderr
    if "no torch" in r.stdout:
        return
    assert "loaded: []" in r.stdout
    assert "missing ops: []" in r.stdout
    assert "every name: True" in r.stdout
    assert "modules: tropical_gemm.cache tropical_gemm.reference tropical_gemm.nn" in r.stdout
    assert "einsum: [[0.0, 0.0], [0.0, 0.0]]" in r.stdout
    assert "error: module 'tropical_gemm' has no attribute 'no_such_name'" in r.stdout
