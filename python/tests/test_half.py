"""The 16-bit dtypes (torch.bfloat16, torch.float16, torch.int16): products on CUDA tensors against the
same product of the widened operands rounded to the dtype (a 16-bit term is the exact sum or product
rounded once, and rounding is monotone, so the widened product, whose float32 sums round as one,
rounded to 16 bits is the exact answer); and what is not built yet refused by name (issue 35): the
CPU path, the argmax, the gradients."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tropical_gemm as tg  # noqa: E402

HALF_FLOATS = (torch.bfloat16, torch.float16)
SEMIRINGS = ("maxplus", "minplus", "maxmin", "minmax", "maxmul")


def _inputs(shape, dtype, semiring, gen):
    if dtype == torch.int16:  # within int16's documented range, 2^12 for + semirings
        lim = 4096 if semiring in ("maxplus", "minplus") else 32767
        return torch.randint(-lim, lim + 1, shape, generator=gen, dtype=torch.int32).to(dtype)
    x = torch.randn(shape, generator=gen) * 8
    x[torch.rand(shape, generator=gen) < 0.02] = float("inf")
    x[torch.rand(shape, generator=gen) < 0.02] = float("nan")
    return (x.abs() if semiring == "maxmul" else x).to(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALF_FLOATS + (torch.int16,))
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_products_match_the_widened_product(dtype, semiring):
    if dtype == torch.int16 and semiring == "maxmul":
        with pytest.raises(tg.UnsupportedError, match="maxmul takes"):
            tg.matmul(torch.zeros(2, 2, dtype=dtype, device="cuda"), torch.zeros(2, 2, dtype=dtype, device="cuda"),
                      semiring)
        return
    gen = torch.Generator().manual_seed(16)
    for m, k, n, batch in ((1, 1, 1, None), (33, 70, 65, None), (300, 129, 260, None), (17, 40, 9, 3)):
        lead = () if batch is None else (batch,)
        a = _inputs(lead + (m, k), dtype, semiring, gen).cuda()
        b = _inputs(lead + (k, n), dtype, semiring, gen).cuda()
        got = tg.matmul(a, b, semiring)
        wide = torch.int32 if dtype == torch.int16 else torch.float32
        want = tg.matmul(a.to(wide), b.to(wide), semiring).to(dtype)
        assert got.dtype == dtype and got.shape == want.shape
        same = (got == want) | (got.isnan() & want.isnan()) if dtype != torch.int16 else got == want
        assert bool(same.all()), f"{semiring} {dtype} {m}x{k}x{n}"


def test_the_cpu_path_is_refused_by_name():
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.int16, "i16")):
        a = torch.zeros(2, 3, dtype=dtype)
        with pytest.raises(tg.UnsupportedError, match=f"the CPU path does not take {tag} yet"):
            tg.matmul(a, a.T)


@pytest.mark.gpu
def test_argmax_and_gradients_are_refused_by_name():
    a = torch.zeros(4, 4, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    with pytest.raises(tg.UnsupportedError, match="argmax of bf16 products is not built yet"):
        tg.matmul(a, a, return_argmax=True)
    with pytest.raises(tg.UnsupportedError, match="backward of bf16 products is not built yet"):
        tg.matmul(a, a).sum().backward()
