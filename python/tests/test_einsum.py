"""tropical_gemm.einsum against a brute-force loop over every index assignment (einsum_reference):
random equations of 1-5 operands with batch indices, diagonals, '...' and broadcasting, in every
semiring and dtype, on the CPU and (marked gpu) CUDA; gradients against the loop's argmax; the
planners; views instead of copies; torch.compile. The ops behind each step: test_contract_op.py."""

from __future__ import annotations

import itertools
import os

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
opt_einsum = pytest.importorskip("opt_einsum")
import tropical_gemm as tg  # noqa: E402
from tropical_gemm import InvalidArgumentError, UnsupportedError, _contract, _einsum  # noqa: E402
import einsum_reference as ref  # noqa: E402
from tropical_reference import DTYPES, SEMIRINGS  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def check(equation, arrays, semiring, device, optimize="auto"):
    want, _ = ref.brute_einsum(equation, arrays, semiring)
    tensors = [torch.from_numpy(a).to(device) for a in arrays]
    got = tg.einsum(equation, *tensors, semiring=semiring, optimize=optimize)
    assert got.dtype == tensors[0].dtype and got.device == tensors[0].device
    exact = arrays[0].dtype.kind == "i" or semiring in ("maxmin", "minmax")
    tol = dict(rtol=0, atol=0) if exact else dict(rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got.cpu(), torch.from_numpy(np.asarray(want)), equal_nan=True, **tol,
                               msg=lambda m: f"{equation} {semiring} {arrays[0].dtype}: {m}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,semiring", list(itertools.product(DTYPES, SEMIRINGS)))
def test_random_equations(device, dtype, semiring):
    rng = np.random.default_rng(DTYPES.index(dtype) * 10 + SEMIRINGS.index(semiring))
    for _ in range(8):
        equation, shapes = ref.random_equation(rng)
        check(equation, ref.random_arrays(rng, shapes, dtype, semiring), semiring, device)


CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),  # a product
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batched
    ("bij,bjk->bki", [(2, 3, 4), (1, 4, 5)]),  # a batch of 1 broadcasts; output permuted
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("ii->", [(3, 3)]),  # trace
    ("iij->j", [(3, 3, 2)]),  # a diagonal, then a sum
    ("ii->i", [(4, 4)]),  # a diagonal kept
    ("ij->ji", [(3, 4)]),  # a transposition
    ("ij->", [(3, 4)]),  # everything reduced
    ("ijk,k->", [(2, 3, 4), (4,)]),  # an index of one operand reduced before the product
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),  # '...' broadcasts
    ("...,...->...", [(2, 3), (3,)]),
    ("ij,jk", [(3, 4), (4, 2)]),  # implicit output: 'ik'
    ("ba,ac,cd,db->", [(2, 3), (3, 2), (2, 3), (3, 2)]),  # a ring
    ("ij,jk,kl,lm,mi->i", [(2, 3), (3, 2), (2, 3), (3, 2), (2, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),  # an index in three operands (a hyperedge)
    ("ij,ij->ij", [(2, 3), (2, 3)]),  # nothing contracted: a batch of 1x1 products
    ("ij,kl->", [(2, 3), (3, 2)]),
    ("", [()]),  # a scalar
    (",->", [(), ()]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),  # an empty contraction: the zero
    ("ij,jk->ik", [(0, 3), (3, 2)]),  # an empty output
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_cases(device, semiring, equation, shapes):
    rng = np.random.default_rng(len(equation))
    for dtype in ("float32", "int64"):
        check(equation, ref.random_arrays(rng, shapes, dtype, semiring), semiring, device)


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_specials_propagate(semiring):
    # NaN propagates; the zero (-inf in MaxPlus) is absorbing; an empty index gives the zero.
    rng = np.random.default_rng(3)
    a, b, c = ref.random_arrays(rng, [(3, 4), (4, 2), (2,)], "float64", semiring)
    a[0, 1] = np.nan
    b[2, :] = float(ref.zero(semiring, np.float64))
    check("ij,jk,k->i", [a, b, c], semiring, "cpu")
    check("ij,jk,k->ik", [a, b, c], semiring, "cpu")


def test_operands_as_a_list_and_torch_agreement():
    # In the ordinary semiring's place torch.einsum has no tropical twin, but MaxPlus on one operand is
    # amax, and the list form is accepted as torch.einsum accepts it.
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    torch.testing.assert_close(tg.einsum("ijk->ik", [x]), x.amax(1))
    torch.testing.assert_close(tg.einsum("ijk->kj", x, semiring="min_plus"), x.amin(0).t())


@pytest.mark.parametrize("optimize", ["greedy", "optimal", "dp", "random-greedy", "auto-hq",
                                      [(0, 1), (0, 1), (0, 1)], [(1, 2, 3), (0, 1)], [(0, 1, 2, 3)]])
def test_planners_agree(optimize):
    rng = np.random.default_rng(5)
    equation = "ab,bc,cd,da->"
    arrays = ref.random_arrays(rng, [(2, 3), (3, 2), (2, 3), (3, 2)], "float64", "maxplus")
    check(equation, arrays, "maxplus", "cpu", optimize=optimize)


@pytest.mark.filterwarnings("ignore:Couldn't import `kahypar`")  # cotengra's own fallback, without kahypar
def test_cotengra_planner(monkeypatch):
    # CI installs cotengra (python/ci.sh). optimize="cotengra" runs a cotengra HyperOptimizer, whose
    # path the plan follows step for step; the result agrees with the brute force. A network of 10
    # tensors: a ring of 6 with chords, a diagonal, a kept '...' that two operands share.
    cotengra = pytest.importorskip("cotengra")
    made = []

    class Recording(cotengra.HyperOptimizer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(cotengra, "HyperOptimizer", Recording)
    _einsum._einsum_plan.make_plan.cache_clear()  # plans are cached by (equation, shapes, optimize)
    equation = "ab,bc,cd,de,ef,fa,ad,bbe,...a,...c->..."
    shapes = [(2, 3), (3, 2), (2, 3), (3, 2), (2, 2), (2, 2), (2, 3), (3, 3, 2), (2, 2), (2, 2)]
    rng = np.random.default_rng(6)
    check(equation, ref.random_arrays(rng, shapes, "float64", "minplus"), "minplus", "cpu", optimize="cotengra")
    assert len(made) == 1 and made[0].path is not None
    plan = tg.einsum_path(equation, *shapes, optimize="cotengra")
    assert [step.positions for step in plan.steps] == [tuple(step) for step in made[0].path]
    # An optimizer the caller made, planned afresh on each call; integers, another semiring.
    optimizer = cotengra.HyperOptimizer(methods=["greedy"], max_repeats=4, progbar=False)
    check(equation, ref.random_arrays(rng, shapes, "int64", "maxplus"), "maxplus", "cpu", optimize=optimizer)
    assert optimizer.path is not None


def test_pairwise_plan_classifies_indices():
    plan = tg.einsum_path("bij,bjk,bk->bi", (2, 3, 4), (2, 4, 5), (2, 5), optimize=[(0, 1), (0, 1)])
    first, second = plan.steps
    letter = lambda ls: "".join(sorted(_einsum._einsum_plan.LETTERS[l] for l in ls))  # noqa: E731
    assert (letter(first.batch), letter(first.left), letter(first.right), letter(first.contracted)) == ("b", "i", "k", "j")
    assert (letter(second.batch), letter(second.left), letter(second.right), letter(second.contracted)) == ("b", "", "i", "k")


class _Recorder:
    """Wraps a C function of _contract, recording each call's A descriptor (data pointer, labels)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, *args):
        import struct

        buf = _contract._scratch.buffer
        data, rank, _, _, labels_at = struct.unpack_from("=Qi4xQQQ", buf, 0)
        labels = struct.unpack_from(f"={rank}i", buf, labels_at - _contract._scratch.base)
        status = self.fn(*args)
        self.calls.append((data, labels, status))
        return status


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("grad", [False, True])
def test_each_pairwise_step_is_one_call_of_the_c_abi(monkeypatch, device, grad):
    # The planner drives the library's binary contraction: one tropical_host_contract (CPU) or
    # tropical_contract (CUDA) call per pairwise step (its argmax form where gradients are wanted),
    # on the operands as they are (a contiguous input reaches C without a copy), and no other product.
    name = ("_host_contract" if device == "cpu" else "_contract") + ("_argmax_c" if grad else "_c")
    recorder = _Recorder(getattr(_contract, name))
    monkeypatch.setattr(_contract, name, recorder)

    def refuse(*args, **kwargs):
        raise AssertionError("einsum called matmul")

    monkeypatch.setattr(tg.functional, "matmul", refuse)
    rng = np.random.default_rng(4)
    equation, shapes = "ab,bc,cd,da->", [(2, 3), (3, 4), (4, 5), (5, 2)]
    arrays = ref.random_arrays(rng, shapes, "float64", "maxplus")
    tensors = [torch.from_numpy(a).to(device).requires_grad_(grad) for a in arrays]
    plan = tg.einsum_path(equation, *shapes, optimize=[(0, 1), (0, 1), (0, 1)])
    got = tg.einsum(equation, *tensors, optimize=[(0, 1), (0, 1), (0, 1)])
    want, _ = ref.brute_einsum(equation, arrays, "maxplus")
    assert got.item() == pytest.approx(float(want))
    done = [call for call in recorder.calls if call[2] == 0]
    refused = [call for call in recorder.calls if call[2] != 0]
    assert len(done) == len(plan.steps) == 3
    # The last step, (a, c) against (c, a) with both contracted, has no one K dimension over both
    # operands' strides: the GPU path refuses it (it allocates nothing) and Python copies and calls
    # again, once per program (then it copies first); the host path copies inside its one call.
    assert all(call[2] == UnsupportedError.status for call in refused)
    assert len(refused) <= (1 if device == "cuda" else 0)
    if refused:
        assert recorder.calls[-2] == refused[0] and recorder.calls[-1][2] == 0
    data, labels, _ = recorder.calls[0]
    recorder.calls.clear()
    again = tg.einsum(equation, *tensors, optimize=[(0, 1), (0, 1), (0, 1)])
    assert again.item() == got.item()
    # Without gradients the program remembers the refusal and copies first; the op that records
    # gradients is called afresh each time (its inputs' strides may change) and asks again.
    assert [call[2] for call in recorder.calls if call[2] == 0] == [0, 0, 0]
    assert len(recorder.calls) == 3 + (len(refused) if grad else 0)
    assert data == tensors[0].data_ptr() and labels == plan.inputs[0]
    if grad:
        got.backward()
        assert all(t.grad is not None for t in tensors)


@pytest.mark.gpu
@pytest.mark.parametrize("semiring", ["maxplus", "minplus", "maxmin"])
def test_cuda_graph_replays_agree_with_the_steps(semiring):
    # A ring of 40 small tensors, then the same equation with new values: in place, new tensors,
    # transposed storage, another stream. Each replay must equal the eager steps on the same inputs.
    g = torch.Generator().manual_seed(5)
    n, symbol = 40, opt_einsum.get_symbol
    equation = ",".join(symbol(i) + symbol((i + 1) % n) for i in range(n)) + f",{symbol(0)}->{symbol(0)}"
    shapes = [(3, 3)] * n + [(3,)]

    def fresh():
        return [torch.randn(s, generator=g, dtype=torch.float64).cuda() for s in shapes]

    tg.clear_einsum_graphs()
    tensors = fresh()
    for round in range(4):
        if round == 1:
            for t in tensors:
                t.copy_(torch.randn(t.shape, generator=g, dtype=torch.float64))
        elif round == 2:
            tensors = fresh()
        elif round == 3:
            tensors = [t.t().contiguous().t() if t.dim() == 2 else t for t in fresh()]
        with torch.no_grad():
            want = tg.einsum(equation, *tensors, semiring=semiring)
            got = tg.einsum(equation, *tensors, semiring=semiring, cuda_graph=True)
        torch.cuda.synchronize()
        torch.testing.assert_close(got, want, rtol=0, atol=0, msg=lambda m: f"round {round}: {m}")
    other = torch.cuda.Stream()
    with torch.cuda.stream(other), torch.no_grad():
        got = [tg.einsum(equation, *tensors, semiring=semiring, cuda_graph=True) for _ in range(3)]
    torch.cuda.synchronize()
    for x in got:
        torch.testing.assert_close(x, want, rtol=0, atol=0)
    tg.clear_einsum_graphs()


@pytest.mark.parametrize("device", DEVICES)
def test_cuda_graph_refuses_what_it_cannot_replay(device):
    a = torch.randn(3, 4, dtype=torch.float64, device=device)
    b = torch.randn(4, 2, dtype=torch.float64, device=device)
    if device == "cpu":
        with pytest.raises(InvalidArgumentError, match="replays CUDA work"):
            tg.einsum("ij,jk->ik", a, b, cuda_graph=True)
        return
    with pytest.raises(InvalidArgumentError, match="without autograd"):
        tg.einsum("ij,jk->ik", a.requires_grad_(), b, cuda_graph=True)


# --- gradients ------------------------------------------------------------------------------------


def check_gradients(equation, arrays, semiring, device):
    tensors = [torch.from_numpy(a).to(device).requires_grad_() for a in arrays]
    out = tg.einsum(equation, *tensors, semiring=semiring)
    weights = torch.rand(out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) + 0.5
    (out * weights.to(device)).sum().backward()
    want = ref.expected_gradients(equation, arrays, semiring, weights.numpy())
    for n, (t, w) in enumerate(zip(tensors, want)):
        got = t.grad if t.grad is not None else torch.zeros_like(t)
        torch.testing.assert_close(got.cpu(), torch.from_numpy(w), rtol=1e-9, atol=1e-9,
                                   msg=lambda m: f"{equation} {semiring}, operand {n}: {m}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_gradients_random_equations(device, semiring):
    rng = np.random.default_rng(SEMIRINGS.index(semiring) + 100)
    for _ in range(10):
        equation, shapes = ref.random_equation(rng, max_assignments=600)
        if any(0 in s for s in shapes):
            continue
        check_gradients(equation, ref.random_arrays(rng, shapes, "float64", semiring, distinct=True), semiring, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("equation,shapes", [c for c in CASES if 0 not in sum(c[1], ())], ids=lambda x: str(x))
def test_gradients_cases(device, semiring, equation, shapes):
    rng = np.random.default_rng(7)
    check_gradients(equation, ref.random_arrays(rng, shapes, "float64", semiring, distinct=True), semiring, device)


@pytest.mark.parametrize("semiring", ["maxplus", "minplus"])
def test_gradient_marks_the_optimal_assignment(semiring):
    # A scalar network: each operand's gradient is 1 on the entries of the optimum and 0 elsewhere.
    rng = np.random.default_rng(8)
    equation = "ab,bc,cd,da,a,c->"
    arrays = ref.random_arrays(rng, [(3, 3), (3, 3), (3, 3), (3, 3), (3,), (3,)], "float64", semiring, distinct=True)
    tensors = [torch.from_numpy(a).requires_grad_() for a in arrays]
    tg.einsum(equation, *tensors, semiring=semiring).backward()
    _, best = ref.brute_einsum(equation, arrays, semiring)
    at = best[()]
    for t, term in zip(tensors, equation.split("->")[0].split(",")):
        onehot = torch.zeros_like(t)
        onehot[tuple(at[c] for c in term)] = 1
        assert torch.equal(t.grad, onehot)


# --- torch.compile ----------------------------------------------------------------------------------


def test_plan_is_marked_constant_as_pytorch_marks_it():
    # _einsum marks its planner as torch.compiler.assume_constant_result would, without importing
    # torch._dynamo: the mark must be the one that function sets.
    from tropical_gemm import _einsum

    def probe():
        return None

    torch.compiler.assume_constant_result(probe)
    marks = {k: v for k, v in vars(probe).items()}
    assert marks, "torch.compiler.assume_constant_result set no attribute: update tropical_gemm._einsum"
    for name, value in marks.items():
        assert getattr(_einsum._traced_plan_and_program, name, None) == value, name


BACKENDS = ["aot_eager"] + (["inductor"] if os.environ.get("TROPICAL_GEMM_TEST_INDUCTOR") == "1" else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_fullgraph(device, backend):
    torch._dynamo.reset()

    def energy(a, b, c, d):
        return tg.einsum("ij,jk,kl,...li->...", a, b, c, d, semiring="maxplus", optimize="greedy")

    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn(s, dtype=torch.float64, generator=g).to(device) for s in [(3, 4), (4, 2), (2, 3), (2, 3, 3)]]
    eager = [x.clone().requires_grad_() for x in inputs]
    traced = [x.clone().requires_grad_() for x in inputs]
    want = energy(*eager)
    want.sum().backward()
    got = torch.compile(energy, fullgraph=True, backend=backend)(*traced)
    got.sum().backward()
    torch.testing.assert_close(got, want)
    for x, y in zip(traced, eager):
        torch.testing.assert_close(x.grad, y.grad)


def test_many_indices_and_the_sublist_form():
    # A chain of 60 matrices has 61 indices: more than the 52 letters. Non-ASCII characters (as
    # opt_einsum.get_symbol makes them) and the sublist form of ints both name them.
    import opt_einsum

    rng = np.random.default_rng(9)
    mats = [rng.standard_normal((2, 2)) for _ in range(60)]
    want = mats[0]
    for m in mats[1:]:
        want, _ = ref.brute_einsum("ij,jk->ik", [want, m], "maxplus")
        want = want.astype(np.float64)
    s = opt_einsum.get_symbol
    equation = ",".join(s(n) + s(n + 1) for n in range(60)) + "->" + s(0) + s(60)
    tensors = [torch.from_numpy(m) for m in mats]
    torch.testing.assert_close(tg.einsum(equation, *tensors), torch.from_numpy(want))
    sublists = [x for n, t in enumerate(tensors) for x in (t, [n, n + 1])]
    torch.testing.assert_close(tg.einsum(*sublists, [0, 60]), torch.from_numpy(want))
    # The sublist form with '...' and an implicit output.
    a, b = torch.randn(2, 3, 4), torch.randn(4, 5)
    torch.testing.assert_close(tg.einsum(a, [..., 0, 1], b, [1, 2]), tg.einsum("...ab,bc", a, b))
