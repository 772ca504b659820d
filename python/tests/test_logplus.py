"""The log semiring, LogPlus: ``C[i,j] = log sum_k exp(A[i,k] + B[k,j])`` (float32, float64) through
matmul, the ops, einsum and autograd, against float64 torch (torch.logsumexp over the explicit
broadcast of the terms). CPU tests always run (the library's host path); the GPU ones skip without a
device (conftest.py), as the package's other GPU tests do."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

T = torch.ops.tropical
INF, NAN = math.inf, math.nan
FLOATS = (torch.float32, torch.float64)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """log sum_k exp(a[..., i, k] + b[..., k, j]) in float64, broadcasting the batch like torch.matmul."""
    terms = a.detach().double().cpu().unsqueeze(-1) + b.detach().double().cpu().unsqueeze(-3)
    return torch.logsumexp(terms, dim=-2)


def check_close(c: torch.Tensor, want: torch.Tensor) -> None:
    """float32: |c - want| <= 1e-5 max(1, |want|); float64: 1e-12 max(1, |want|); non-finite entries equal."""
    single = c.dtype == torch.float32
    c = c.detach().double().cpu()
    assert c.shape == want.shape
    finite = torch.isfinite(want)
    assert torch.equal(torch.isnan(c), torch.isnan(want)), (c, want)
    assert torch.equal(c[~finite & ~torch.isnan(want)], want[~finite & ~torch.isnan(want)]), (c, want)
    rel = 1e-5 if single else 1e-12
    err = (c[finite] - want[finite]).abs()
    bound = rel * want[finite].abs().clamp(min=1)
    assert bool((err <= bound).all()), f"max error {float((err - bound).max())} over the bound; c={c}, want={want}"


def randn(*shape, dtype=torch.float64, device="cpu", scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype=dtype, device=device)


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
        (randn(3, 4, seed=9).t().requires_grad_(), leaf(3, 5, seed=10)),  # column-major
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


# --- einsum: log partition functions ----------------------------------------------------------------


def einsum_reference(equation: str, *operands: torch.Tensor) -> torch.Tensor:
    """log sum over the indices the output lacks of exp(the sum of the log-factors), by explicit broadcast."""
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    letters = sorted(set("".join(terms)))
    sizes = {}
    for term, x in zip(terms, operands):
        for ch, n in zip(term, x.shape):
            sizes[ch] = max(sizes.get(ch, 1), n)
    total = torch.zeros([1] * len(letters), dtype=torch.float64)
    for term, x in zip(terms, operands):
        x = x.detach().double().cpu()
        while len(set(term)) < len(term):  # a repeated index: its diagonal (moved last, as torch does)
            ch = next(c for c in term if term.count(c) > 1)
            p = term.index(ch)
            q = term.index(ch, p + 1)
            x = x.diagonal(0, p, q)
            term = "".join(c for i, c in enumerate(term) if i not in (p, q)) + ch
        present = [ch for ch in letters if ch in term]
        x = x.permute([term.index(ch) for ch in present])
        total = total + x.reshape([x.shape[present.index(ch)] if ch in term else 1 for ch in letters])
    total = total.expand([sizes[ch] for ch in letters])
    gone = [i for i, ch in enumerate(letters) if ch not in output]
    result = torch.logsumexp(total, dim=gone) if gone else total
    kept = [ch for ch in letters if ch in output]
    return result.permute([kept.index(ch) for ch in output])


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk,ki->", [(3, 4), (4, 5), (5, 3)]),  # a ring: the log partition function of a cycle
    ("i,ij,j->", [(4,), (4, 6), (6,)]),  # an Ising-like chain of two spins' factors
    ("ijk,jl->il", [(2, 3, 4), (3, 5)]),  # k in one operand alone: a log-sum-exp over it
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),  # an outer product: no sum
    ("ii->", [(4, 4)]),  # a trace
    ("ii,ij->j", [(3, 3), (3, 4)]),  # a diagonal used in a product
    ("ij->", [(3, 5)]),  # a sum of everything
    ("ij->ji", [(3, 5)]),  # a transpose: nothing to sum
    ("ij,j->i", [(3, 1), (4,)]),  # a size-1 dimension broadcast to 4 (counts 4 times)
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ab,bc,cd,da,ac->", [(2, 3), (3, 2), (2, 3), (3, 2), (2, 2)]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equation,shapes", EINSUMS)
def test_einsum_log_partition_function(device, equation, shapes):
    for dtype in FLOATS:
        ops = [randn(*s, dtype=dtype, device=device, scale=2.0, seed=n) for n, s in enumerate(shapes)]
        got = tg.einsum(equation, *ops, semiring="logplus")
        assert got.dtype == dtype
        check_close(got, einsum_reference(equation, *ops))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equation,shapes", EINSUMS)
def test_einsum_gradcheck(device, equation, shapes):
    ops = [randn(*s, device=device, seed=n).requires_grad_() for n, s in enumerate(shapes)]
    assert torch.autograd.gradcheck(lambda *x: tg.einsum(equation, *x, semiring="logplus"), ops)


def test_einsum_marginals():
    # the gradient of log Z with respect to each log-factor is that factor's marginal probability
    x = randn(3, 4, seed=1).requires_grad_()
    y = randn(4, 5, seed=2).requires_grad_()
    tg.einsum("ij,jk->", x, y, semiring="logplus").backward()
    joint = torch.exp(x.detach()[:, :, None] + y.detach()[None])
    joint = joint / joint.sum()
    torch.testing.assert_close(x.grad, joint.sum(2))
    torch.testing.assert_close(y.grad, joint.sum(0))


def test_contract_op():
    a, b = randn(2, 3, 4, seed=1), randn(4, 3, 5, seed=2)
    # labels: a (0, 1, 2), b (2, 1, 3): 1 batch, 2 contracted
    c = T.contract(a, b, [0, 1, 2], [2, 1, 3], [1, 0, 3], "logplus")
    want = torch.logsumexp(a.permute(1, 0, 2)[:, :, :, None] + b.permute(1, 0, 2)[:, None], dim=2)
    torch.testing.assert_close(c, want)
    a, b = a.requires_grad_(), b.requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: T.contract(x, y, [0, 1, 2], [2, 1, 3], [1, 0, 3], "logplus"), (a, b))


# --- torch.compile, opcheck, the layer, the distributed products --------------------------------------


def test_compile_forward_and_backward():
    torch._dynamo.reset()

    def f(a, b, v):
        return tg.matmul(a, b, "logplus").sum() + tg.einsum("ij,j->", b, v, semiring="logplus")

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    args = [randn(3, 4, seed=1).requires_grad_(), randn(4, 5, seed=2).requires_grad_(),
            randn(5, seed=3).requires_grad_()]
    out = compiled(*args)
    out.backward()
    grads = [x.grad.clone() for x in args]
    for x in args:
        x.grad = None
    want = f(*args)
    want.backward()
    torch.testing.assert_close(out, want)
    for g, x in zip(grads, args):
        torch.testing.assert_close(g, x.grad)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*args), f(*args))


def test_opcheck():
    for grad in (False, True):
        a, b = randn(5, 4, seed=1).requires_grad_(grad), randn(4, 3, seed=2).requires_grad_(grad)
        a3, b3 = randn(1, 5, 4, seed=3).requires_grad_(grad), randn(2, 4, 3, seed=4).requires_grad_(grad)
        for op, args in ((T.gemm, (a, b, "logplus")), (T.bgemm, (a3, b3, "logplus"))):
            result = torch.library.opcheck(op, args)
            assert all(v == "SUCCESS" for v in result.values()), result
    a, b = randn(5, 4, seed=1), randn(4, 3, seed=2)
    c = T.gemm(a, b, "logplus")
    for op in (T.gemm_backward_a, T.gemm_backward_b):
        result = torch.library.opcheck(op, (torch.ones_like(c), c, a, b, "logplus"))
        assert all(v == "SUCCESS" for v in result.values()), result


def test_linear_layer_bias_is_logaddexp():
    layer = tg.TropicalLinear(4, 3, semiring="log_plus", dtype=torch.float64)
    x = randn(2, 4, seed=1)
    want = torch.logaddexp(reference(x, layer.weight.t()), layer.bias.detach())
    torch.testing.assert_close(layer(x), want)


def test_distributed_refuses_logplus(tmp_path):
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    import tropical_gemm.distributed as td

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        a, b = randn(3, 4), randn(4, 2)
        for split in ("k", "m", "grid", None):
            with pytest.raises(tg.UnsupportedError, match=r"'logplus' is not distributed.*combines every term"):
                td.matmul(a, b, "log_plus", split=split)
        with pytest.raises(tg.UnsupportedError, match=r"'logplus' is not distributed"):
            td.sliced_contract(lambda x, y: tg.matmul(x, y, "logplus"), [a, b], [1, 0], "logplus")
        with pytest.raises(tg.UnsupportedError, match=r"'logplus' is not distributed"):
            td.einsum("ij,jk->ik", a, b, semiring="logplus", sliced_index="j")
        torch.testing.assert_close(td.matmul(a, b, "maxplus", split="k"), tg.matmul(a, b, "maxplus"))  # others work
    finally:
        dist.destroy_process_group()


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
        x, y = a.to(device).requires_grad_(), b.to(device).requires_grad_()
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
