"""Modules: a tropical linear layer."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._native import SEMIRING_FACTS
from .functional import matmul, semiring_name


class TropicalLinear(nn.Module):
    """``y = x (x) W^T (+) bias``, the affine map of a tropical semiring.

    For MaxPlus, ``y[..., o] = max(max_i (x[..., i] + weight[o, i]), bias[o])``; MinPlus takes min,
    MaxMul multiplies (and expects non-negative inputs and weights). ``weight`` has the shape of
    :class:`torch.nn.Linear`'s, ``(out_features, in_features)``; the product reads its transpose in
    place (a column-major view, no copy). Input ``(..., in_features)``, output ``(..., out_features)``.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        semiring: str = "maxplus",
        bias: bool = True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.semiring = semiring_name(semiring)
        factory = {"device": device, "dtype": dtype}
        self.weight = nn.Parameter(torch.empty((out_features, in_features), **factory))
        self.bias = nn.Parameter(torch.empty(out_features, **factory)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            if SEMIRING_FACTS[self.semiring].times == "mul":
                # Non-negative, as a (max, x) product is defined on non-negative inputs.
                self.weight.uniform_(0.0, 1.0)
                if self.bias is not None:
                    self.bias.uniform_(0.0, 1.0 / max(1, self.in_features))
            else:
                bound = 1.0 / math.sqrt(max(1, self.in_features))
                self.weight.uniform_(-bound, bound)
                if self.bias is not None:
                    self.bias.uniform_(-bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        vector = x.dim() == 1
        y = matmul(x.unsqueeze(0) if vector else x, self.weight.t(), self.semiring)
        if self.bias is not None:
            # The bias enters through (+): the larger or the smaller, as the semiring's table says; a
            # (+) that combines its terms rather than selecting one is LogPlus's log-sum-exp.
            facts = SEMIRING_FACTS[self.semiring]
            if not facts.selects:
                y = torch.logaddexp(y, self.bias)
            else:
                y = torch.maximum(y, self.bias) if facts.prefers_larger else torch.minimum(y, self.bias)
        return y.squeeze(0) if vector else y

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, semiring={self.semiring!r}, "
            f"bias={self.bias is not None}"
        )
