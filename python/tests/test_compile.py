"""torch.compile(fullgraph=True) traces models that use the ops (through their fake implementations),
forward and backward, and gives what eager mode gives."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
import tropical_gemm as tg  # noqa: E402

# Inductor compiles C++ for CPU graphs, slow on a small CI machine: aot_eager traces the same graph
# (dynamo, then AOTAutograd with the fake implementations). TROPICAL_GEMM_TEST_INDUCTOR=1 adds inductor.
BACKENDS = ["aot_eager"] + (["inductor"] if os.environ.get("TROPICAL_GEMM_TEST_INDUCTOR") == "1" else [])


class Model(torch.nn.Module):
    def __init__(self, semiring):
        super().__init__()
        self.layer = tg.TropicalLinear(8, 6, semiring=semiring, dtype=torch.float64)
        self.semiring = semiring

    def forward(self, x, y):
        h = self.layer(x).relu() if self.semiring != "maxmul" else self.layer(x)
        z = torch.ops.tropical.bgemm(h.unsqueeze(0).expand(2, -1, -1), y, self.semiring)
        return z.sum(0) + tg.matmul(h, y[0], self.semiring)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("semiring", ["maxplus", "minplus", "maxmul"])
def test_compile_fullgraph(backend, semiring):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Model(semiring)
    x = torch.rand(5, 8, dtype=torch.float64)
    y = torch.rand(2, 6, 3, dtype=torch.float64)
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    out = compiled(x, y)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x, y)
    want.sum().backward()
    torch.testing.assert_close(out, want)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad)


def test_compile_dynamic_shapes():
    torch._dynamo.reset()
    fn = torch.compile(lambda a, b: torch.ops.tropical.gemm_argmax(a, b, "minplus"), fullgraph=True, dynamic=True,
                       backend="aot_eager")
    for m in (3, 5, 9):
        a, b = torch.randn(m, 4), torch.randn(4, m + 1)
        c, idx = fn(a, b)
        want_c, want_idx = torch.ops.tropical.gemm_argmax(a, b, "minplus")
        torch.testing.assert_close(c, want_c)
        torch.testing.assert_close(idx, want_idx)


def test_compile_matmul_without_grad():
    # matmul's direct path (no autograd wanted) must not leak into a compiled graph.
    torch._dynamo.reset()
    fn = torch.compile(lambda a, b: tg.matmul(a, b, "maxmul") * 2, fullgraph=True, backend="aot_eager")
    a, b = torch.rand(4, 5), torch.rand(5, 3)
    with torch.no_grad():
        torch.testing.assert_close(fn(a, b), tg.matmul(a, b, "maxmul") * 2)
