"""torch.library.opcheck on every op (schema, autograd registration, fake tensors, AOT dispatch)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm  # noqa: E402,F401

T = torch.ops.tropical
SEMIRINGS = ("maxplus", "minplus", "maxmul", "maxmin", "minmax")
DTYPES = (torch.float32, torch.float64, torch.int32, torch.int64)


def make(shape, dtype, device, requires_grad=False, positive=False):
    if dtype.is_floating_point:
        x = torch.rand(shape, dtype=dtype, device=device) * 4 if positive else torch.randn(shape, dtype=dtype, device=device)
        return x.requires_grad_(requires_grad)
    return torch.randint(0 if positive else -20, 21, shape, dtype=dtype, device=device)


def product_samples(device):
    for dtype in DTYPES:
        for semiring in SEMIRINGS:
            pos = semiring == "maxmul"
            for grad in ([False, True] if dtype.is_floating_point else [False]):
                yield T.gemm, (make((5, 4), dtype, device, grad, pos), make((4, 3), dtype, device, grad, pos), semiring)
                yield T.gemm_argmax, (make((5, 4), dtype, device, grad, pos), make((4, 3), dtype, device, grad, pos), semiring)
                yield T.bgemm, (make((2, 5, 4), dtype, device, grad, pos), make((1, 4, 3), dtype, device, grad, pos), semiring)
                yield T.bgemm_argmax, (make((1, 5, 4), dtype, device, grad, pos), make((3, 4, 3), dtype, device, grad, pos), semiring)
    # Transposed operands, and the default semiring.
    yield T.gemm, (make((4, 5), torch.float32, device).t(), make((3, 4), torch.float32, device).t())


def backward_samples(device):
    for dtype in (torch.float32, torch.float64):
        for semiring in SEMIRINGS:
            for batched in (False, True):
                a = make((2, 5, 4) if batched else (5, 4), dtype, device, positive=True)
                b = make((1, 4, 3) if batched else (4, 3), dtype, device, positive=True)
                _, idx = (T.bgemm_argmax if batched else T.gemm_argmax)(a, b, semiring)
                grad_c = torch.randn(idx.shape, dtype=dtype, device=device)
                yield T.gemm_backward_a, (grad_c, idx, a, b, semiring)
                yield T.gemm_backward_b, (grad_c, idx, a, b, semiring)


def backtrack_samples(device):
    g = torch.Generator().manual_seed(0)
    back = torch.randint(0, 4, (3, 5, 4), generator=g, dtype=torch.int32).to(device)
    last = torch.randint(0, 4, (5,), generator=g, dtype=torch.int32).to(device)
    yield T.backtrack, (back, last)
    yield T.backtrack, (back.transpose(1, 2).contiguous().transpose(1, 2), last[:, None])  # column-major tables
    yield T.backtrack, (back[:0], last)  # no steps


def run_opcheck(op, args):
    result = torch.library.opcheck(op, args)
    assert all(v == "SUCCESS" for v in result.values()), result


@pytest.mark.parametrize("index", range(len(list(product_samples("cpu")))))
def test_opcheck_products_cpu(index):
    op, args = list(product_samples("cpu"))[index]
    run_opcheck(op, args)


@pytest.mark.parametrize("index", range(len(list(backward_samples("cpu")))))
def test_opcheck_backward_cpu(index):
    op, args = list(backward_samples("cpu"))[index]
    run_opcheck(op, args)


@pytest.mark.parametrize("index", range(len(list(backtrack_samples("cpu")))))
def test_opcheck_backtrack_cpu(index):
    op, args = list(backtrack_samples("cpu"))[index]
    run_opcheck(op, args)
