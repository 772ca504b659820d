"""Autograd through the backward ops: gradcheck in float64 for every product op and semiring, on
the CPU (test_cuda.py repeats it on the GPU)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

T = torch.ops.tropical
SEMIRINGS = ("maxplus", "minplus", "maxmul", "maxmin", "minmax")


def inputs(semiring, shape_a, shape_b, device="cpu", seed=0):
    """Well-separated values: no two terms within far more than gradcheck's eps of each other, so
    the argmax does not flip under its perturbations. MaxMul takes positive values."""
    g = torch.Generator().manual_seed(seed)
    if semiring == "maxmul":
        a = torch.rand(shape_a, generator=g, dtype=torch.float64) * 3 + 0.5
        b = torch.rand(shape_b, generator=g, dtype=torch.float64) * 3 + 0.5
    else:
        a = torch.randn(shape_a, generator=g, dtype=torch.float64) * 5
        b = torch.randn(shape_b, generator=g, dtype=torch.float64) * 5
    return a.to(device).requires_grad_(), b.to(device).requires_grad_()


def first(fn):
    return lambda *args: fn(*args)[0]


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_gradcheck_2d(semiring):
    a, b = inputs(semiring, (4, 6), (6, 5))
    assert torch.autograd.gradcheck(lambda x, y: T.gemm(x, y, semiring), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: T.gemm_argmax(x, y, semiring)[0], (a, b))
    assert torch.autograd.gradcheck(lambda x, y: tg.matmul(x, y, semiring), (a, b))


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("batches", [(3, 3), (1, 3), (3, 1)])
def test_gradcheck_batched(semiring, batches):
    a, b = inputs(semiring, (batches[0], 3, 4), (batches[1], 4, 2), seed=1)
    assert torch.autograd.gradcheck(lambda x, y: T.bgemm(x, y, semiring), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: T.bgemm_argmax(x, y, semiring)[0], (a, b))


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_gradcheck_strided_inputs(semiring):
    a, b = inputs(semiring, (6, 4), (5, 6), seed=2)
    assert torch.autograd.gradcheck(lambda x, y: tg.matmul(x.t(), y.t(), semiring), (a, b))


def test_gradient_of_one_operand_only():
    a, b = inputs("maxplus", (3, 4), (4, 2), seed=3)
    b.requires_grad_(False)
    T.gemm(a, b, "maxplus").sum().backward()
    assert a.grad is not None and b.grad is None


def test_linear_layer_trains():
    torch.manual_seed(0)
    layer = tg.TropicalLinear(8, 3, dtype=torch.float64)
    x = torch.randn(16, 8, dtype=torch.float64)
    target = torch.randn(16, 3, dtype=torch.float64)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((layer(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
