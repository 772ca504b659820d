"""LogPlus in einsum and the contraction op (a tensor network's log partition function: log sum over
the contracted indices of exp of the sum of its log-factors, against torch.logsumexp over the explicit
broadcast), with gradients; torch.compile, opcheck, TropicalLinear, and tropical_gemm.distributed's
refusal. The GPU cases skip without a device (conftest.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

from logplus_reference import DEVICES, FLOATS, check_close, einsum_reference, randn, reference  # noqa: E402

T = torch.ops.tropical


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
