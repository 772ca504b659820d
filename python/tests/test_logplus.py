"""The log semiring, LogPlus: ``C[i,j] = log sum_k exp(A[i,k] + B[k,j])`` (float32, float64) through
matmul, the ops and autograd, against float64 torch (logplus_reference.py: torch.logsumexp over the
explicit broadcast of the terms). CPU tests always run (the library's host path); the GPU ones skip
without a device (conftest.py), as the package's other GPU tests do. Einsum, contractions, compile and
the distributed refusal: test_logplus_einsum.py."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

from logplus_reference import DEVICES, FLOATS, INF, NAN, check_close, randn, reference  # noqa: E402

T = torch.ops.tropical


# --- values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("scale", [1.0, 100.0, 1e4])
def test_values_against_float64(device, dtype, scale):
    for m, k, n in [(1, 1, 1), (5, 7, 3), (17, 33, 9), (64, 65, 31), (3, 300, 2), (4, 8192, 3)]:
        for sign in (1.0, -1.0):
            a = randn(m, k, dtype=dtype, device=device, scale=scale, seed=m) * sign
            b = randn(k, n, dtype=dtype, device=device, scale=scale, seed=n + 1) * sign
            c = tg.matmul(a, b, "logplus")
            assert c.dtype == dtype and c.device.type == device
            check_close(c, reference(a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_constant_inputs(device, dtype):
    # exactly +-1, +-100, +-1e4 everywhere: every term equal, C = 2x + log K
    for x in (1.0, -1.0, 100.0, -100.0, 1e4, -1e4):
        for k in (1, 2, 10, 1000):
            a = torch.full((3, k), x, dtype=dtype, device=device)
            b = torch.full((k, 2), x, dtype=dtype, device=device)
            c = tg.matmul(a, b, "logplus")
            check_close(c, torch.full((3, 2), 2 * x + math.log(k), dtype=torch.float64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_dominant_term(device, dtype):
    # one term far above the rest: C is that term; the others vanish without overflow or underflow
    k = 50
    a = torch.zeros(2, k, dtype=dtype, device=device)
    b = torch.zeros(k, 3, dtype=dtype, device=device)
    a[0, 7] = 1e4
    a[1, 3] = -1e4
    b[:, 1] = -1e4
    c = tg.matmul(a, b, "logplus")
    check_close(c, reference(a, b))
    assert float(c[0, 0]) == pytest.approx(1e4, rel=1e-7)
    assert float(c[1, 0]) == pytest.approx(math.log(k - 1), rel=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_edge_values(device, dtype):
    a = torch.tensor([[0.0, 1.0], [-INF, -INF], [INF, 0.0], [NAN, 0.0], [-0.0, -INF], [INF, -INF], [-INF, 2.0]],
                     dtype=dtype, device=device)
    b = torch.tensor([[0.0, -INF, INF], [1.0, -INF, -0.0]], dtype=dtype, device=device)
    c = tg.matmul(a, b, "logplus")
    want = reference(a, b)
    check_close(c, want)
    assert bool((c[1, :2] == -INF).all())  # a row of the zero against finite or -inf columns: C is the zero
    assert bool(torch.isnan(c[1, 2]))  # -inf + +inf is a NaN term
    assert bool(torch.isnan(c[3]).all())  # a NaN term makes C NaN
    assert float(c[2, 0]) == INF  # a +inf term makes C +inf
    assert bool(torch.isnan(c[5, 1]))  # +inf + -inf is a NaN term
    assert bool(torch.isnan(c[6, 2]))  # NaN wins over a +inf term
    # -0 is 0: log(exp(-0)) is +0, the reference's normalised zero
    z = tg.matmul(torch.tensor([[-0.0]], dtype=dtype, device=device), torch.tensor([[-0.0]], dtype=dtype, device=device),
                  "logplus")
    assert float(z) == 0.0 and not bool(torch.signbit(z).any())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_empty_sums_and_shapes(device, dtype):
    # K = 0: the empty sum is the zero, -inf
    c = tg.matmul(torch.empty(3, 0, dtype=dtype, device=device), torch.empty(0, 4, dtype=dtype, device=device),
                  "logplus")
    assert c.shape == (3, 4) and bool((c == -INF).all())
    assert tg.matmul(torch.empty(0, 5, dtype=dtype, device=device), randn(5, 2, dtype=dtype, device=device),
                     "logplus").shape == (0, 2)
    cb = tg.matmul(torch.empty(2, 3, 0, dtype=dtype, device=device), torch.empty(2, 0, 4, dtype=dtype, device=device),
                   "logplus")
    assert cb.shape == (2, 3, 4) and bool((cb == -INF).all())


@pytest.mark.parametrize("device", DEVICES)
def test_layouts(device):
    base_a = randn(9, 14, device=device, seed=3)
    base_b = randn(12, 10, device=device, seed=4)
    b = base_b[:7]
    cases = [
        (base_a[:, :7], b),  # a row-major slice (ld > cols)
        (randn(7, 9, device=device).t(), b),  # column-major
        (base_a[:, ::2], b),  # every other column: copied
        (base_a[:, :7], randn(10, 7, device=device).t()),  # transposed B
        (base_a[:, :7], base_b[:7, ::3]),  # strided B
        (randn(1, 7, device=device).expand(5, 7), b),  # stride 0 rows
    ]
    for dtype in FLOATS:
        for a, bb in cases:
            a, bb = a.to(dtype), bb.to(dtype)
            check_close(tg.matmul(a, bb, "logplus"), reference(a, bb))
            check_close(T.gemm(a, bb, "logplus"), reference(a, bb))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_batched_with_broadcast(device, dtype):
    def r(*shape, seed):
        return randn(*shape, dtype=dtype, device=device, scale=3.0, seed=seed)

    cases = [
        (r(4, 3, 5, seed=1), r(4, 5, 2, seed=2)),  # bgemm
        (r(1, 3, 5, seed=3), r(4, 5, 2, seed=4)),  # a batch of 1 broadcasts
        (r(4, 3, 5, seed=5), r(1, 5, 2, seed=6)),
        (r(2, 1, 3, 5, seed=7), r(4, 5, 2, seed=8)),  # more leading dimensions, broadcast
        (r(2, 4, 3, 5, seed=9), r(5, 2, seed=10)),  # (..., M, K) @ (K, N)
        (r(3, 5, seed=11), r(4, 5, 2, seed=12)),  # 2-D a against a batch
    ]
    for a, b in cases:
        check_close(tg.matmul(a, b, "logplus"), reference(a, b))
    a, b = r(3, 4, 5, seed=13), r(3, 5, 6, seed=14)
    check_close(T.bgemm(a, b, "logplus"), reference(a, b))


@pytest.mark.parametrize("spelling", ["logplus", "log_plus", "log-plus", "LogPlus"])
def test_spellings(spelling):
    a, b = randn(3, 4), randn(4, 2)
    check_close(tg.matmul(a, b, spelling), reference(a, b))


# --- no argmax, wrong dtypes ----------------------------------------------------------------------


def test_return_argmax_is_refused():
    a, b = randn(3, 4), randn(4, 2)
    for call in (lambda: tg.matmul(a, b, "logplus", return_argmax=True),
                 lambda: tg.matmul(a.unsqueeze(0), b.unsqueeze(0), "logplus", return_argmax=True),
                 lambda: T.gemm_argmax(a, b, "logplus"),
                 lambda: T.bgemm_argmax(a.unsqueeze(0), b.unsqueeze(0), "logplus"),
                 lambda: T.contract_argmax(a, b, [0, 1], [1, 2], [0, 2], "logplus")):
        with pytest.raises(tg.UnsupportedError, match=r"'logplus' has no argmax.*combines every term"):
            call()
    # the fake implementations (torch.compile, meta tensors) refuse alike
    with pytest.raises(tg.UnsupportedError, match="no argmax"):
        T.gemm_argmax(a.to("meta"), b.to("meta"), "logplus")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integers_are_refused(dtype):
    a, b = torch.ones(3, 4, dtype=dtype), torch.ones(4, 2, dtype=dtype)
    for call in (lambda: tg.matmul(a, b, "logplus"), lambda: T.gemm(a, b, "logplus"),
                 lambda: T.bgemm(a[None], b[None], "logplus"), lambda: T.gemm(a.to("meta"), b.to("meta"), "logplus"),
                 lambda: tg.einsum("ij,jk->ik", a, b, semiring="logplus"),
                 lambda: T.contract(a, b, [0, 1], [1, 2], [0, 2], "logplus")):
        with pytest.raises(tg.UnsupportedError, match=r"'logplus'.*float32 and float64.*not torch\.int"):
            call()
    with pytest.raises(tg.UnsupportedError, match=r"booleans"):
        tg.matmul(a.bool(), b.bool(), "logplus")


def test_backward_op_takes_c_not_an_argmax():
    a, b = randn(3, 4), randn(4, 2)
    c = T.gemm(a, b, "logplus")
    g = torch.ones_like(c)
    with pytest.raises(tg.InvalidArgumentError, match=r"'logplus' reads the forward's C"):
        T.gemm_backward_a(g, torch.zeros(3, 2, dtype=torch.int32), a, b, "logplus")
    # with C in the argmax's place: the softmax weights
    w = torch.exp(a.unsqueeze(-1) + b.unsqueeze(0) - c.unsqueeze(1))  # (i, k, j)
    torch.testing.assert_close(T.gemm_backward_a(g, c, a, b, "logplus"), w.sum(-1))
    torch.testing.assert_close(T.gemm_backward_b(g, c, a, b, "logplus"), w.sum(0))


# --- gradients ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_matmul(device):
    def leaf(*shape, seed):
        return randn(*shape, device=device, seed=seed).requires_grad_()

    cases = [
        (leaf(3, 4, seed=1), leaf(4, 5, seed=2)),
        (leaf(2, 3, 4, seed=3), leaf(2, 4, 5, seed=4)),
        (leaf(1, 3, 4, seed=5), leaf(3, 4, 2, seed=6)),  # broadcast batch: its gradient summed
        (leaf(2, 2, 3, 4, seed=7), leaf(4, 2, seed=8)),
        (randn(3, 4, device=device, seed=9).t().requires_grad_(), leaf(3, 5, seed=10)),  # column-major
    ]
    for a, b in cases:
        assert torch.autograd.gradcheck(lambda x, y: tg.matmul(x, y, "logplus"), (a, b))
        assert torch.autograd.gradcheck(lambda x, y: tg.matmul(x, y, "logplus"), (a.detach(), b))  # B only
    a, b = leaf(3, 4, seed=11), leaf(4, 5, seed=12)
    assert torch.autograd.gradcheck(lambda x, y: T.gemm(x, y, "logplus"), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: T.bgemm(x, y, "logplus"), (a[None], b[None]))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_matches_torch(device):
    a = randn(5, 6, device=device, scale=10.0, seed=1)
    b = randn(6, 4, device=device, scale=10.0, seed=2)
    a[0, :3] = -INF  # terms of the zero get no gradient
    a, b = a.requires_grad_(), b.requires_grad_()
    g = randn(5, 4, device=device, seed=3)
    (tg.matmul(a, b, "logplus") * g).sum().backward()
    ra, rb = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    (torch.logsumexp(ra.unsqueeze(-1) + rb.unsqueeze(0), dim=1) * g).sum().backward()
    torch.testing.assert_close(a.grad, ra.grad)
    torch.testing.assert_close(b.grad, rb.grad)
    # a row of the zero: C is -inf and every weight 0 (torch's own logsumexp would give NaN here)
    z = torch.full((1, 6), -INF, dtype=torch.float64, device=device, requires_grad=True)
    tg.matmul(z, b.detach(), "logplus").sum().backward()
    assert bool((z.grad == 0).all())


def test_float32_gradient():
    a = randn(4, 5, dtype=torch.float32, scale=50.0, seed=1).requires_grad_()
    b = randn(5, 3, dtype=torch.float32, scale=50.0, seed=2).requires_grad_()
    tg.matmul(a, b, "logplus").sum().backward()
    ra, rb = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    torch.logsumexp(ra.unsqueeze(-1) + rb.unsqueeze(0), dim=1).sum().backward()
    torch.testing.assert_close(a.grad.double(), ra.grad, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(b.grad.double(), rb.grad, atol=1e-5, rtol=1e-4)


def test_no_double_backward():
    a = randn(3, 4).requires_grad_()
    b = randn(4, 2).requires_grad_()
    (ga,) = torch.autograd.grad(tg.matmul(a, b, "logplus").sum(), a, create_graph=True)
    with pytest.raises(tg.UnsupportedError, match="first derivatives only"):
        ga.sum().backward()


# --- the GPU against the CPU ----------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_cuda_matches_cpu(dtype):
    for m, k, n in [(1, 1, 1), (7, 9, 5), (65, 129, 63), (200, 300, 100), (16, 4096, 16)]:
        a = randn(m, k, dtype=dtype, scale=30.0, seed=m)
        b = randn(k, n, dtype=dtype, scale=30.0, seed=n)
        check_close(tg.matmul(a.cuda(), b.cuda(), "logplus"), reference(a, b))
        check_close(tg.matmul(a.cuda()[None].expand(3, m, k), b.cuda(), "logplus"), reference(a, b).expand(3, m, n))


@pytest.mark.gpu
def test_cuda_gradients_match_cpu():
    a, b = randn(6, 7, seed=1), randn(7, 5, seed=2)
    grads = []
    for device in ("cpu", "cuda"):
        x, y = a.detach().to(device).requires_grad_(), b.detach().to(device).requires_grad_()
        tg.einsum("ij,jk->", x, y, semiring="logplus").backward()
        grads.append((x.grad.cpu(), y.grad.cpu()))
    torch.testing.assert_close(grads[0], grads[1])


def test_numpy_reference():
    np = pytest.importorskip("numpy")
    from tropical_gemm import reference as ref

    a, b = randn(3, 4, seed=1).numpy(), randn(4, 2, seed=2).numpy()
    np.testing.assert_allclose(ref.gemm(a, b, "logplus"), reference(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    np.testing.assert_allclose(ref.gemm(a.astype(np.float32), b.astype(np.float32), "log_plus"),
                               tg.matmul(torch.from_numpy(a).float(), torch.from_numpy(b).float(), "logplus").numpy(),
                               rtol=1e-6)
    with pytest.raises(tg.UnsupportedError, match="no argmax"):
        ref.gemm(a, b, "logplus", return_argmax=True)
    with pytest.raises(tg.UnsupportedError, match="it takes f32, f64"):
        ref.gemm(a.astype(np.int32), b.astype(np.int32), "logplus")
