"""tropical_gemm.einsum's errors: each names what is wrong and what to do, with the package's
exception classes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opt_einsum")
import tropical_gemm as tg  # noqa: E402

A, B = torch.zeros(2, 3), torch.zeros(3, 4)


@pytest.mark.parametrize("equation,operands,words", [
    ("ij,jk->ik", (A,), "2 operand term(s) but 1 operand"),
    ("ij->ik", (A,), "'k' appears in no operand"),
    ("ij,jk->ii", (A, B), "names 'i' twice"),
    ("ij->i->j", (A,), "'->' appears more than once"),
    ("i1,jk->ik", (A, B), "indices are the letters"),
    ("ij.,jk->ik", (A, B), "'.' that is not part of '...'"),
    ("......ij->ij", (A,), "'...' more than once"),
    ("ijk,jk->i", (A, B), "operand 0 has 2 dimension(s) but its term 'ijk' names 3"),
    ("i,jk->ik", (A, B), "names 1; add '...'"),
    ("ij,jk>ik", (A, B), "the output follows '->'"),
    ("ij,jk->ik", (A, torch.zeros(4, 4)), "index 'j' has size 3 in operand 0 but 4 in operand 1"),
    ("ii->i", (A,), "repeats index 'i' over dimensions of sizes [2, 3]"),
    ("...i,...i->...", (torch.zeros(2, 3), torch.zeros(4, 3)), "index '...[0]' has size 2"),
])
def test_malformed_equations_and_sizes(equation, operands, words):
    with pytest.raises(tg.InvalidArgumentError, match="tropical_gemm.einsum") as info:
        tg.einsum(equation, *operands)
    assert words in str(info.value)


def test_operands():
    with pytest.raises(tg.InvalidArgumentError, match="at least one operand"):
        tg.einsum("ij")
    with pytest.raises(tg.InvalidArgumentError, match="operand 1 is a list, not a torch.Tensor"):
        tg.einsum("ij,jk", A, [[1.0]])
    with pytest.raises(tg.InvalidArgumentError, match="the equation must be a str"):
        tg.einsum(3, A)
    with pytest.raises(tg.InvalidArgumentError, match="operand 0 is torch.float32 but operand 1 is torch.float64"):
        tg.einsum("ij,jk", A, B.double())
    with pytest.raises(tg.UnsupportedError, match="complex64"):
        tg.einsum("ij,jk", A.to(torch.complex64), B.to(torch.complex64))
    with pytest.raises(tg.UnsupportedError, match="tensors on meta are not supported"):
        tg.einsum("ij,jk", A.to("meta"), B.to("meta"))
    with pytest.raises(tg.InvalidArgumentError, match="unknown semiring 'maxsum'"):
        tg.einsum("ij,jk", A, B, semiring="maxsum")


@pytest.mark.parametrize("equation", ["ij->ji", "ij,jk"])  # the first runs no product: einsum checks itself
def test_booleans_are_orand_and_orand_booleans(equation):
    n = equation.count(",") + 1
    bools, floats = torch.zeros(2, 2, dtype=torch.bool), torch.zeros(2, 2)
    with pytest.raises(tg.UnsupportedError, match="'orand' .or, and. is Boolean: it takes bool or uint8"):
        tg.einsum(equation, *[floats] * n, semiring="orand")
    for t in (bools, bools.to(torch.uint8)):
        with pytest.raises(tg.UnsupportedError, match="tensors are booleans, for semiring 'orand'"):
            tg.einsum(equation, *[t] * n, semiring="maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="operand 0 is torch.bool but operand 1 is torch.uint8"):
        tg.einsum("ij,jk", bools, bools.to(torch.uint8), semiring="orand")
    with pytest.raises(tg.UnsupportedError, match="counting values are float32 or float64"):
        tg.einsum(equation, *[bools] * n, semiring="counting")


@pytest.mark.gpu
def test_mixed_devices():
    with pytest.raises(tg.InvalidArgumentError, match="operand 0 is on cpu but operand 1 is on cuda:0"):
        tg.einsum("ij,jk", A, B.cuda())


def test_paths():
    C = torch.zeros(4)
    with pytest.raises(tg.InvalidArgumentError, match="must name distinct positions"):
        tg.einsum("ij,jk,k", A, B, C, optimize=[(0, 3), (0, 1)])
    with pytest.raises(tg.InvalidArgumentError, match="leaves 2 operands"):
        tg.einsum("ij,jk,k", A, B, C, optimize=[(0, 1)])
    with pytest.raises(tg.InvalidArgumentError, match="the planner refused optimize='fastest'"):
        tg.einsum("ij,jk,k", A, B, C, optimize="fastest")


def test_cotengra_missing_is_explained(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cotengra", None)  # as if it were not installed
    with pytest.raises(tg.UnsupportedError, match="pip install cotengra"):
        tg.einsum("ij,jk,k", A, B, torch.zeros(4), optimize="cotengra")



def test_sublist_form():
    with pytest.raises(tg.InvalidArgumentError, match="an index list is missing"):
        tg.einsum(A, [0, 1], B)
    with pytest.raises(tg.InvalidArgumentError, match="sublist index -1 is not a non-negative int"):
        tg.einsum(A, [0, -1])
    with pytest.raises(tg.InvalidArgumentError, match="an index list is missing"):
        tg.einsum(A, 3)
