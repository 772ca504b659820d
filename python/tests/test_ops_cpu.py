"""The ops on CPU tensors (the library's CPU kernels) against the NumPy oracle: every op, dtype, semiring
and layout; the backward ops; matmul's shapes; the tropical linear layer."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402
import tropical_reference as ref  # noqa: E402

CASES = list(itertools.product(ref.DTYPES, ref.SEMIRINGS))
T = torch.ops.tropical


def operands(dtype, semiring, shape_a, shape_b, specials=False, seed=0):
    rng = np.random.default_rng(seed)
    a, b = ref.random_operands(rng, shape_a, shape_b, dtype, semiring, specials)
    return torch.from_numpy(a), torch.from_numpy(b)


def same(x, y):
    torch.testing.assert_close(x, torch.as_tensor(y), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype,semiring", CASES)
def test_gemm_ops(dtype, semiring):
    for (m, k, n), specials in itertools.product([(1, 1, 1), (6, 5, 7), (3, 0, 2), (0, 3, 2)], [False, True]):
        a, b = operands(dtype, semiring, (m, k), (k, n), specials, seed=m * 100 + k * 10 + n)
        want_c, want_idx = ref.gemm(a.numpy(), b.numpy(), semiring, argmax=True)
        same(T.gemm(a, b, semiring), want_c)
        c, idx = T.gemm_argmax(a, b, semiring)
        same(c, want_c)
        same(idx, want_idx)
        assert c.dtype == a.dtype and idx.dtype == torch.int32 and c.is_contiguous()


@pytest.mark.parametrize("dtype,semiring", CASES)
def test_bgemm_ops_broadcast(dtype, semiring):
    # A batch of 1 broadcasts against any count, 0 included (an empty batch of results).
    for ba, bb in [(3, 3), (1, 4), (4, 1), (1, 1), (1, 0), (0, 1)]:
        a, b = operands(dtype, semiring, (ba, 5, 6), (bb, 6, 4), seed=ba * 10 + bb)
        want_c, want_idx = ref.gemm(a.numpy(), b.numpy(), semiring, argmax=True)
        assert T.bgemm(a, b, semiring).shape == (max(ba, bb) if min(ba, bb) else 0, 5, 4)
        same(T.bgemm(a, b, semiring), want_c)
        c, idx = T.bgemm_argmax(a, b, semiring)
        same(c, want_c)
        same(idx, want_idx)


@pytest.mark.parametrize("semiring", ref.SEMIRINGS)
def test_layouts(semiring):
    a, b = operands("float32", semiring, (9, 7), (7, 5), seed=3)
    want = ref.gemm(a.numpy(), b.numpy(), semiring)
    variants_a = [a, a.t().contiguous().t(), torch.zeros(9, 12)[:, 2:9].copy_(a), a.repeat(1, 2)[:, :7], torch.zeros(18, 7)[::2].copy_(a)]
    variants_b = [b, b.t().contiguous().t(), torch.zeros(20, 5)[::3][:7].copy_(b)]
    for x, y in itertools.product(variants_a, variants_b):
        same(T.gemm(x, y, semiring), want)
    # An expanded operand (stride 0), and a batch given by an expanded dimension.
    row = a[:1]
    same(T.gemm(row.expand(4, 7), b, semiring), ref.gemm(np.repeat(row.numpy(), 4, 0), b.numpy(), semiring))
    same(T.bgemm(a.expand(3, 9, 7), b.unsqueeze(0), semiring), np.stack([want] * 3))
    # A transposed batch.
    a3, b3 = operands("float64", semiring, (2, 7, 9), (2, 5, 7), seed=4)
    same(T.bgemm(a3.transpose(1, 2), b3.transpose(1, 2), semiring),
         ref.gemm(a3.transpose(1, 2).numpy(), b3.transpose(1, 2).numpy(), semiring))


def scatter_backward(grad_c, idx, a, b, semiring):
    """The backward rule with torch scatter_add (2-D): independent of the library."""
    k = idx.clamp(min=0).long()
    g = grad_c * (idx >= 0)
    ga = g * b.gather(0, k) if semiring == "maxmul" else g
    gb = g * a.gather(1, k) if semiring == "maxmul" else g
    if semiring in ("maxmin", "minmax"):  # to the operand whose value the term took (A's on a tie or NaN)
        x, y = a.gather(1, k), b.gather(0, k)
        a_took = x.isnan() | (~y.isnan() & (x <= y if semiring == "maxmin" else x >= y))
        ga, gb = g * a_took, g * ~a_took
    return torch.zeros_like(a).scatter_add_(1, k, ga), torch.zeros_like(b).scatter_add_(0, k, gb)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("semiring", ref.SEMIRINGS)
def test_backward_ops(dtype, semiring):
    a, b = operands(dtype, semiring, (6, 8), (8, 5), specials=True, seed=5)
    c, idx = T.gemm_argmax(a, b, semiring)
    grad_c = torch.randn(c.shape, dtype=c.dtype)
    want_a, want_b = scatter_backward(grad_c, idx, a, b, semiring)
    torch.testing.assert_close(T.gemm_backward_a(grad_c, idx, a, b, semiring), want_a, equal_nan=True)
    torch.testing.assert_close(T.gemm_backward_b(grad_c, idx, a, b, semiring), want_b, equal_nan=True)
    np_a, np_b = ref.backward(grad_c.numpy(), idx.numpy(), a.numpy(), b.numpy(), semiring)
    torch.testing.assert_close(T.gemm_backward_a(grad_c, idx, a, b, semiring), torch.from_numpy(np_a), equal_nan=True)
    torch.testing.assert_close(T.gemm_backward_b(grad_c, idx, a, b, semiring), torch.from_numpy(np_b), equal_nan=True)


@pytest.mark.parametrize("semiring", ref.SEMIRINGS)
def test_backward_ops_batched_broadcast(semiring):
    a, b = operands("float64", semiring, (1, 4, 6), (3, 6, 5), seed=6)
    c, idx = T.bgemm_argmax(a, b, semiring)
    grad_c = torch.randn(c.shape, dtype=c.dtype)
    ga = T.gemm_backward_a(grad_c, idx, a, b, semiring)
    gb = T.gemm_backward_b(grad_c, idx, a, b, semiring)
    assert ga.shape == a.shape and gb.shape == b.shape
    want_a = sum(scatter_backward(grad_c[i], idx[i], a[0], b[i], semiring)[0] for i in range(3))
    torch.testing.assert_close(ga[0], want_a)
    for i in range(3):
        torch.testing.assert_close(gb[i], scatter_backward(grad_c[i], idx[i], a[0], b[i], semiring)[1])


def test_matmul_shapes_and_spellings():
    a, b = operands("float32", "maxplus", (2, 3, 4, 5), (5, 6), seed=8)
    want = ref.gemm(a.reshape(-1, 5).numpy(), b.numpy(), "maxplus").reshape(2, 3, 4, 6)
    same(tg.matmul(a, b), want)
    same(tg.matmul(a, b, "Max-Plus"), want)
    b3 = b.expand(3, 5, 6)
    same(tg.matmul(a, b3), want)  # (2,3,4,5) @ (3,5,6): batch dims broadcast
    same(tg.matmul(a[0, 0], b3), np.stack([ref.gemm(a[0, 0].numpy(), b.numpy(), "maxplus")] * 3))
    c, idx = tg.matmul(a[0], b, "minplus", return_argmax=True)
    want_c, want_idx = ref.gemm(a[0].reshape(-1, 5).numpy(), b.numpy(), "minplus", argmax=True)
    same(c, want_c.reshape(3, 4, 6))
    same(idx, want_idx.reshape(3, 4, 6))
    with pytest.raises(tg.InvalidArgumentError, match="unsqueeze"):
        tg.matmul(a[0, 0, 0], b)


def test_matmul_uses_argmax_op_when_grad_is_needed():
    a, b = operands("float64", "maxplus", (4, 5), (5, 3), seed=9)
    a.requires_grad_()
    c = tg.matmul(a, b)
    assert "GemmArgmax" in type(c.grad_fn).__name__ or "gemm_argmax" in str(c.grad_fn).lower()
    c.sum().backward()
    _, idx = T.gemm_argmax(a.detach(), b, "maxplus")
    torch.testing.assert_close(a.grad, scatter_backward(torch.ones(4, 3, dtype=torch.float64), idx, a.detach(), b, "maxplus")[0])


@pytest.mark.parametrize("semiring", ref.SEMIRINGS)
def test_tropical_linear(semiring):
    torch.manual_seed(0)
    layer = tg.TropicalLinear(6, 4, semiring=semiring, dtype=torch.float64)
    x = torch.rand(3, 2, 6, dtype=torch.float64)
    y = layer(x)
    assert y.shape == (3, 2, 4)
    inner = ref.gemm(x.reshape(-1, 6).numpy(), layer.weight.detach().t().contiguous().numpy(), semiring).reshape(3, 2, 4)
    bias = layer.bias.detach().numpy()
    want = np.minimum(inner, bias) if semiring.startswith("min") else np.maximum(inner, bias)  # (+) of the semiring
    torch.testing.assert_close(y.detach(), torch.from_numpy(want))
    y.sum().backward()
    assert layer.weight.grad is not None and layer.weight.grad.shape == layer.weight.shape
    assert layer(x[0, 0]).shape == (4,)
    assert "semiring" in repr(layer)


def test_matmul_direct_path_and_dispatcher_agree():
    # Plain tensors without autograd go straight to the implementation; under a dispatch mode the
    # op itself is called, visible to the mode. Both give the same.
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    a, b = operands("float32", "minplus", (5, 4), (4, 3), seed=10)
    direct = tg.matmul(a, b, "minplus")
    with Record() as mode:
        dispatched = tg.matmul(a, b, "minplus")
    assert "tropical.gemm.default" in mode.seen
    same(direct, dispatched.numpy())
