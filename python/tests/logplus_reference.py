"""The float64 oracle of the LogPlus tests (test_logplus*.py): torch.logsumexp over the explicit
broadcast of the terms, the tolerance check, and seeded operands."""

from __future__ import annotations

import math

import pytest
import torch

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
