"""The ops on CPU tensors as they reach the library's CPU kernels (``tropical_host_*``): products big
enough to be cut into tasks for several threads and into several K blocks, PyTorch's thread count,
operands that go without a copy and those that are copied first, and the SIMD target's name."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402
import tropical_reference as ref  # noqa: E402
from tropical_gemm import _native  # noqa: E402

T = torch.ops.tropical


def same(x, y):
    torch.testing.assert_close(x, torch.as_tensor(y), rtol=0, atol=0, equal_nan=True)


def operands(dtype, semiring, shape_a, shape_b, specials=False, seed=0):
    rng = np.random.default_rng(seed)
    a, b = ref.random_operands(rng, shape_a, shape_b, dtype, semiring, specials)
    return torch.from_numpy(a), torch.from_numpy(b)


@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype,semiring", [("float32", "maxplus"), ("int32", "minplus"), ("float64", "maxmul")])
def test_large_products_on_any_thread_count(dtype, semiring, threads, specials):
    # 40 x 700 x 90: more terms than one thread takes, and K past the kernels' blocks of 512.
    a, b = operands(dtype, semiring, (40, 700), (700, 90), specials=specials, seed=threads)
    want_c, want_idx = ref.gemm(a.numpy(), b.numpy(), semiring, argmax=True)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        same(T.gemm(a, b, semiring), want_c)
        c, idx = T.gemm_argmax(a, b, semiring)
    finally:
        torch.set_num_threads(before)
    same(c, want_c)
    same(idx, want_idx)


def test_strided_and_copied_operands():
    a, b = operands("float32", "minplus", (2, 30, 20), (2, 20, 25), seed=7)
    want = ref.gemm(a.numpy(), b.numpy(), "minplus")
    # Transposed and sliced views go as descriptors; a stride in both dimensions is copied first.
    a_t = a.transpose(1, 2).contiguous().transpose(1, 2)
    b_wide = torch.zeros(2, 20, 60)[:, :, ::2][:, :, :25].copy_(b)
    same(T.bgemm(a_t, b_wide, "minplus"), want)
    same(T.bgemm(a[:, ::1, :], b, "minplus"), want)
    same(T.gemm(a[0].t().contiguous().t(), b[0], "minplus"), want[0])


def test_broadcast_gradient_is_summed_over_the_batch():
    a, b = operands("float64", "maxplus", (1, 6, 8), (4, 8, 5), seed=9)
    c, idx = T.bgemm_argmax(a, b, "maxplus")
    grad_c = torch.ones_like(c)
    ga = T.gemm_backward_a(grad_c, idx, a, b, "maxplus")
    assert ga.shape == a.shape
    # Every output with an argmax routes its 1 to A: the summed gradient counts them.
    assert ga.sum().item() == (idx >= 0).sum().item()


def test_the_simd_target_is_named():
    name = _native.lib.tropical_host_simd_target().decode()
    assert name in {"AVX3", "AVX3_DL", "AVX2", "SSE4", "NEON", "EMU128", "SCALAR"}
    assert tg is not None
