"""Every error the package raises says what went wrong and what to do."""

from __future__ import annotations

import re
import subprocess
import textwrap

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

T = torch.ops.tropical


def m(*shape, dtype=torch.float32, device="cpu"):
    return torch.ones(shape, dtype=dtype, device=device)


def test_unknown_semiring():
    with pytest.raises(tg.InvalidArgumentError, match="unknown semiring 'tropical': use 'maxplus'"):
        T.gemm(m(2, 3), m(3, 4), "tropical")
    with pytest.raises(ValueError, match="unknown semiring 'plus'"):
        tg.matmul(m(2, 3), m(3, 4), "plus")


@pytest.mark.parametrize("dtype,hint", [(torch.int8, ".int()"), (torch.uint16, ".long()"),
                                        (torch.complex64, ".float()")])
def test_unsupported_dtype(dtype, hint):
    types = r"supports float32, float64, int32,? (and )?int64"
    with pytest.raises(tg.UnsupportedError, match=types + ".*" + re.escape(hint)):
        T.gemm(m(2, 3, dtype=dtype), m(3, 4, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8])
def test_booleans_are_for_orand(dtype):
    with pytest.raises(tg.UnsupportedError, match=r"booleans, for semiring 'orand'.*\.int\(\)"):
        T.gemm(m(2, 3, dtype=dtype), m(3, 4, dtype=dtype))


def test_mixed_dtypes():
    with pytest.raises(tg.InvalidArgumentError, match=r"a is torch.float32 but b is torch.float64.*b.to\(a.dtype\)"):
        T.gemm(m(2, 3), m(3, 4, dtype=torch.float64))
    with pytest.raises(tg.InvalidArgumentError, match="same dtype"):
        tg.matmul(m(2, 3, dtype=torch.int32), m(3, 4, dtype=torch.int64))


def test_mixed_devices():
    # A CPU tensor and a meta tensor: two devices, checked the same way as CPU and CUDA.
    with pytest.raises(tg.InvalidArgumentError, match=r"a is on cpu but b is on meta.*move them with .to\(a.device\)"):
        T.gemm(m(2, 3), m(3, 4, device="meta"))


def test_shapes():
    with pytest.raises(tg.InvalidArgumentError, match=r"a's columns \(K = 3\) must equal b's rows \(5\)"):
        T.gemm(m(2, 3), m(5, 4))
    with pytest.raises(tg.InvalidArgumentError, match="takes 2-D tensors.*use tropical.bgemm for 3-D"):
        T.gemm(m(1, 2, 3), m(1, 3, 4))
    with pytest.raises(tg.InvalidArgumentError, match="takes 3-D tensors.*use tropical.gemm for 2-D"):
        T.bgemm_argmax(m(2, 3), m(3, 4))
    with pytest.raises(tg.InvalidArgumentError, match="batch sizes 2 .a. and 3 .b. differ.*or one of them 1"):
        T.bgemm(m(2, 2, 3), m(3, 3, 4))
    with pytest.raises(tg.InvalidArgumentError, match="needs matrices"):
        tg.matmul(m(3), m(3, 4))


def test_backward_errors():
    a, b = m(2, 3), m(3, 4)
    _, idx = T.gemm_argmax(a, b)
    g = m(2, 4)
    with pytest.raises(tg.UnsupportedError, match="gradients are defined for float32 and float64, not torch.int32"):
        T.gemm_backward_a(g.int(), idx, a.int(), b.int(), "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="argmax must be int32"):
        T.gemm_backward_a(g, idx.long(), a, b, "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="shapes do not fit a product"):
        T.gemm_backward_b(m(2, 5), idx, a, b, "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="must all be 2-D or all 3-D"):
        T.gemm_backward_b(g, idx, a.unsqueeze(0), b, "maxplus")


def test_double_backward_is_refused():
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 2, dtype=torch.float64)
    (ga,) = torch.autograd.grad(T.gemm(a, b).sum(), a, create_graph=True)
    with pytest.raises(tg.UnsupportedError, match="first derivatives only"):
        ga.sum().backward()


def test_unsupported_device_message():
    # No device other than CPU and CUDA is at hand on CI: call the catch-all implementation with a
    # stand-in tensor on an unsupported device.
    from tropical_gemm import _registry

    class Fake:
        device = torch.device("meta")

    impl = _registry.dispatch("gemm", None, None)
    with pytest.raises(tg.UnsupportedError, match="tensors on meta are not supported.*move them with .cuda\\(\\) or .cpu\\(\\)"):
        impl(Fake(), Fake(), "maxplus")


def test_cuda_tensors_without_a_gpu(python, subprocess_env):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises((RuntimeError, AssertionError)):
        torch.empty(1, device="cuda")  # PyTorch itself refuses: nothing of ours runs


def test_warm_up_without_nvrtc(python, subprocess_env):
    env = dict(subprocess_env, TROPICAL_GEMM_NVRTC="/nonexistent/libnvrtc.so.13")
    code = textwrap.dedent("""
        import tropical_gemm as tg
        try:
            tg.warm_up(["tropical_gemm_f32_maxplus"], archs=[90])
        except tg.NoCompilerError as e:
            print("no compiler:", e)
        """)
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "no compiler: " in r.stdout and "/nonexistent/libnvrtc.so.13" in r.stdout
    assert "TROPICAL_GEMM_NVRTC" in r.stdout


def test_warm_up_arguments():
    with pytest.raises(tg.InvalidArgumentError, match="unknown kernels.*kernel_names"):
        tg.warm_up(["tropical_gemm_f8_maxplus"], archs=[90])
    with pytest.raises(tg.InvalidArgumentError, match="unknown dtype"):
        tg.warm_up(dtypes=["complex64"], archs=[90])
    with pytest.raises(tg.InvalidArgumentError, match="unknown semiring"):
        tg.warm_up(semirings=["plus"], archs=[90])


def test_warm_up_architectures_follow_the_tools_rule(monkeypatch, tmp_path):
    # An architecture NVRTC cannot compile for is refused, as tropical-gemm-warmup refuses it, and
    # nothing is created for it (NVRTC, which says what it knows, is there wherever the tests run).
    # A cache folder of its own (warm-up reads the variable at each call), where sm_999 must not appear.
    monkeypatch.setenv("TROPICAL_GEMM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TROPICAL_GEMM_CACHE", raising=False)
    assert tg.cache_directory() == (str(tmp_path / "cache"), True)
    with pytest.raises(tg.UnsupportedError, match="NVRTC cannot compile for sm_999"):
        tg.warm_up(["tropical_gemm_f32_maxplus"], archs=[999])
    assert not (tmp_path / "cache" / "v1" / "sm_999").exists()
    assert not list((tmp_path / "cache").glob("**/sm_999")), "warm_up(archs=[999]) created a folder for it"
    with pytest.raises(tg.InvalidArgumentError, match="archs is empty"):
        tg.warm_up(archs=[])
    assert tg.cache.warm_targets([90, 80, 90]) == [80, 90]


def test_warm_up_without_a_gpu_says_how_to_name_architectures(python, subprocess_env):
    env = dict(subprocess_env, TROPICAL_GEMM_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    code = textwrap.dedent("""
        import tropical_gemm as tg
        try:
            tg.warm_up(dtypes=["float32"])
        except tg.TropicalError as e:
            print(type(e).__name__, e)
        """)
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "NoDriverError" in r.stdout and "name the architectures" in r.stdout
    assert "warm_up(archs=[80, 90])" in r.stdout
