"""CUDA graphs: tropical_gemm.matmul (plain, with argmax, batched) and its backward through autograd,
captured with torch.cuda.graph and replayed, against the CPU path; on shapes that reach each kernel
variant (small, batched, big tiles, split-K with its memset of C); the replays read the static
inputs as they are at replay time. And a process whose very first product is made inside a capture,
from an empty kernel cache (the kernel is compiled and loaded during the capture). Skipped without a
CUDA device."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402
import tropical_reference as ref  # noqa: E402

pytestmark = pytest.mark.gpu
T = torch.ops.tropical
# One float and one integer kind per semiring family; the semiring does not change what is launched.
KINDS = [("float32", "maxplus"), ("int32", "minplus"), ("float64", "maxmul")]


def shapes():
    """(label, shape of a, shape of b) reaching each variant of the product on this GPU, by the rules
    of src/gemm/plan.cpp (tests/graph_capture_gpu_test.cpp checks, in C++, that they do)."""
    slots = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    return [
        ("small", (48, 24), (24, 40)),
        ("batched", (slots // 2 + 28, 64, 64), (slots // 2 + 28, 64, 64)),
        ("big tiles", (2048, 24), (24, 128 * ((slots + 15) // 16))),
        ("split-K", (256, 128 * ((3 * slots + 15) // 16)), (128 * ((3 * slots + 15) // 16), 256)),
    ]


def operands(dtype, semiring, shape_a, shape_b, seed):
    rng = np.random.default_rng(seed)
    a, b = ref.random_operands(rng, shape_a, shape_b, dtype, semiring)
    return torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()


def same(x, y, where):
    torch.testing.assert_close(x.cpu(), y.cpu(), rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{where}: {m}")


def captured(fn):
    """fn() run once on a side stream (PyTorch's advice before a capture: it also loads the kernels),
    then captured into a CUDA graph; returns the graph and what fn returned during the capture (its
    static outputs)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


@pytest.mark.parametrize("dtype,semiring", KINDS)
@pytest.mark.parametrize("with_argmax", [False, True])
def test_products_replay_on_new_inputs(dtype, semiring, with_argmax):
    for seed, (label, shape_a, shape_b) in enumerate(shapes()):
        a, b = operands(dtype, semiring, shape_a, shape_b, seed)
        graph, out = captured(lambda: tg.matmul(a, b, semiring, return_argmax=with_argmax))
        for replay in range(2):
            if replay:  # new values in the static inputs: the replay must read them
                new_a, new_b = operands(dtype, semiring, shape_a, shape_b, seed + 100)
                a.copy_(new_a)
                b.copy_(new_b)
            graph.replay()
            torch.cuda.synchronize()
            want = tg.matmul(a.cpu(), b.cpu(), semiring, return_argmax=with_argmax)
            for got, expected in zip(out if with_argmax else (out,), want if with_argmax else (want,)):
                same(got, expected, f"{label}, replay {replay}")


@pytest.mark.parametrize("dtype,semiring", [("float32", "maxplus"), ("float64", "maxmul"), ("float32", "minmax")])
@pytest.mark.parametrize("batched", [False, True])
def test_forward_and_backward_replay(dtype, semiring, batched):
    # The whole step captured, as PyTorch's whole-network capture does: gradients set to None before
    # the capture are allocated in the graph's pool and rewritten by every replay.
    # K = 9000: grad_B adds with atomics into a gradient zeroed first (a memset in the graph); a batch
    # of 1 broadcasts A, whose gradients are summed by PyTorch.
    shape_a, shape_b, shape_c = ((1, 40, 300), (3, 300, 50), (3, 40, 50)) if batched else \
        ((300, 9000), (9000, 64), (300, 64))
    a, b = operands(dtype, semiring, shape_a, shape_b, 7)
    a.requires_grad_(True)
    b.requires_grad_(True)
    grad_c = torch.randn(shape_c, dtype=a.dtype, device="cuda")

    def step():
        a.grad = b.grad = None
        tg.matmul(a, b, semiring).backward(grad_c)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    a.grad = b.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tg.matmul(a, b, semiring).backward(grad_c)
    grad_a, grad_b = a.grad, b.grad
    # The kernels sum with atomics, in no fixed order.
    tol = dict(rtol=1e-4, atol=1e-4, equal_nan=True) if dtype == "float32" else dict(equal_nan=True)
    for replay in range(2):
        if replay:
            new_a, new_b = operands(dtype, semiring, shape_a, shape_b, 8)
            with torch.no_grad():
                a.copy_(new_a)
                b.copy_(new_b)
                grad_c.copy_(torch.randn_like(grad_c))
        graph.replay()
        torch.cuda.synchronize()
        ca = a.detach().cpu().requires_grad_(True)
        cb = b.detach().cpu().requires_grad_(True)
        tg.matmul(ca, cb, semiring).backward(grad_c.cpu())
        torch.testing.assert_close(grad_a.cpu(), ca.grad, **tol)
        torch.testing.assert_close(grad_b.cpu(), cb.grad, **tol)


def test_first_product_of_a_process_inside_a_capture(python, subprocess_env):
    # No call before the capture and an empty kernel cache: the library creates its context and
    # compiles and loads the kernel while the stream captures (in relaxed capture mode), and the
    # graph computes what the CPU does.
    code = textwrap.dedent("""
        import torch, tropical_gemm as tg
        a = torch.rand(40, 20, device="cuda", dtype=torch.float64)
        b = torch.rand(20, 36, device="cuda", dtype=torch.float64)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            c, idx = tg.matmul(a, b, "minmax", return_argmax=True)
        graph.replay()
        torch.cuda.synchronize()
        want, want_idx = tg.matmul(a.cpu(), b.cpu(), "minmax", return_argmax=True)
        assert torch.equal(c.cpu(), want) and torch.equal(idx.cpu(), want_idx), "wrong result"
        print("replayed")
    """)
    r = subprocess.run([python, "-c", code], env=subprocess_env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "replayed" in r.stdout, r.stdout + r.stderr
