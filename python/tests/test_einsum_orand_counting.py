"""tropical_gemm.einsum in the two semirings test_einsum.py leaves out, against the brute-force loop
over every index assignment (einsum_reference): OrAnd on bool and uint8 tensors, and the counting
semiring's (value, count) pairs with ties whose counts add. Random equations of 1-5 operands with
batch indices, diagonals, '...' and size-1 broadcasting, and test_einsum.py's fixed cases, on the
CPU and (marked gpu) CUDA."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytest.importorskip("opt_einsum")
import tropical_gemm as tg  # noqa: E402
import einsum_reference as ref  # noqa: E402
from test_einsum import CASES  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
BOOLEANS = ("bool", "uint8")


def uses_dots_and_diagonals(equations) -> None:
    """The random equations drawn must reach '...', diagonals and batch indices (kept indices
    that two operands share), or the test would prove less than it says."""
    def has_batch(eq):
        lhs, _, rhs = eq.partition("->")
        terms = [set(t.replace("...", ".")) for t in lhs.split(",")]
        return "->" in eq and any(sum(c in t for t in terms) > 1 for c in set(rhs.replace("...", ".")))

    assert any("..." in eq for eq in equations), equations
    assert any(any(len(set(t)) < len(t) for t in eq.split("->")[0].replace("...", "").split(",")) for eq in equations)
    assert any(has_batch(eq) for eq in equations), equations


# --- OrAnd ---------------------------------------------------------------------------------------


def check_orand(equation, arrays, device):
    want, _ = ref.brute_einsum(equation, arrays, "orand")
    tensors = [torch.from_numpy(a).to(device) for a in arrays]
    got = tg.einsum(equation, *tensors, semiring="orand")
    assert got.dtype == tensors[0].dtype and got.device == tensors[0].device, equation
    got = got.cpu().numpy()
    assert set(np.unique(got.astype(np.uint8))) <= {0, 1}, f"{equation}: an OrAnd result holds 0 and 1"
    np.testing.assert_array_equal(got, np.asarray(want, dtype=arrays[0].dtype), err_msg=f"{equation} {arrays[0].dtype}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", BOOLEANS)
def test_orand_random_equations(device, dtype):
    rng = np.random.default_rng(200 + BOOLEANS.index(dtype))
    equations = []
    for _ in range(40):
        equation, shapes = ref.random_equation(rng)
        equations.append(equation)
        check_orand(equation, ref.random_arrays(rng, shapes, dtype, "orand"), device)
    uses_dots_and_diagonals(equations)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_orand_cases(device, equation, shapes):
    rng = np.random.default_rng(len(equation) + 50)
    for dtype in BOOLEANS:
        check_orand(equation, ref.random_arrays(rng, shapes, dtype, "orand"), device)


@pytest.mark.parametrize("device", DEVICES)
def test_orand_uint8_results_are_0_or_1_where_no_step_runs(device):
    # One operand with nothing reduced is a view in the other semirings; OrAnd's uint8 trues of
    # 2..255 still come back as 1, as every product's do.
    x = torch.tensor([[0, 200], [7, 1]], dtype=torch.uint8, device=device)
    assert tg.einsum("ij->ji", x, semiring="orand").tolist() == [[0, 1], [1, 1]]
    assert tg.einsum("ij", x, semiring="orand").tolist() == [[0, 1], [1, 1]]
    assert tg.einsum("ii->i", x, semiring="orand").tolist() == [0, 1]
    assert tg.einsum("...->...", x[0], semiring="orand").tolist() == [0, 1]
    assert tg.einsum("ij->i", x, semiring="orand").tolist() == [1, 1]
    b = x.bool()
    assert tg.einsum("ij->ji", b, semiring="orand").tolist() == [[False, True], [True, True]]


def test_orand_reachability_in_a_batch_of_graphs():
    # A batch index with '...': two graphs' two-step reachability at once, as einsum's README line.
    adj = torch.tensor([[[0, 1, 0], [0, 0, 1], [0, 0, 0]],
                        [[0, 0, 0], [1, 0, 0], [0, 1, 0]]], dtype=torch.bool)
    got = tg.einsum("...ij,...jk->...ik", adj, adj, semiring="orand")
    assert got.dtype == torch.bool
    assert got.nonzero().tolist() == [[0, 0, 2], [1, 2, 0]]


# --- counting ------------------------------------------------------------------------------------


def check_counting(equation, pairs, device, rng):
    want_values, want_counts = ref.brute_counting_einsum(equation, pairs, str(pairs[0][0].dtype))
    operands = []
    for v, c in pairs:  # each operand a (values, counts) pair, or values alone where every count is 1
        values = torch.from_numpy(v).to(device)
        if (c == 1).all() and rng.random() < 0.7:
            operands.append(values)
        else:
            operands.append((values, torch.from_numpy(c).to(device)))
    values, counts = tg.einsum(equation, *operands, semiring="counting")
    assert values.dtype == torch.from_numpy(pairs[0][0]).dtype
    assert counts.dtype == torch.float64 and values.device.type == counts.device.type == device
    assert values.shape == counts.shape == want_values.shape, equation
    np.testing.assert_array_equal(values.cpu().double().numpy(), want_values, err_msg=f"{equation}: values")
    np.testing.assert_array_equal(counts.cpu().numpy(), want_counts, err_msg=f"{equation}: counts")


def passes_through(equation: str, shapes) -> bool:
    """Whether the einsum is one operand and reduces nothing (the result is a view of it)."""
    if len(shapes) != 1:
        return False
    inputs, output = ref.read_equation(equation, [len(shapes[0])])
    return set(inputs[0]) == set(output)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("specials", [False, True], ids=["finite", "inf-nan"])
def test_counting_random_equations(device, dtype, specials):
    rng = np.random.default_rng(300 + 2 * (dtype == "float64") + specials)
    equations, ties = [], 0
    for _ in range(60):
        equation, shapes = ref.random_equation(rng, max_assignments=800)
        equations.append(equation)
        # Known gap: where the result is a view of its one operand (nothing reduced), the counting
        # einsum keeps the counts of -inf and NaN values as given, where the rules (README,
        # "Counting") give 0 and NaN; such equations draw finite values until it normalizes them.
        pairs = ref.random_counting_pairs(rng, shapes, dtype, specials and not passes_through(equation, shapes))
        if rng.random() < 0.3:  # counts of 1 throughout: operands as plain tensors
            pairs = [(v, np.ones_like(c)) for v, c in pairs]
        check_counting(equation, pairs, device, rng)
        # With every count 1, a count is the number of terms that attain the maximum.
        _, attaining = ref.brute_counting_einsum(equation, [(v, np.ones_like(c)) for v, c in pairs], dtype)
        ties += int(np.nanmax(attaining, initial=0) > 1)
    uses_dots_and_diagonals(equations)
    assert ties >= 10, f"only {ties} equations have terms that tie (whose counts add)"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] or "scalar" for c in CASES])
def test_counting_cases(device, equation, shapes):
    rng = np.random.default_rng(len(equation) + 70)
    for dtype in ("float32", "float64"):  # -inf and NaN values where the result is no view (as above)
        pairs = ref.random_counting_pairs(rng, shapes, dtype, specials=not passes_through(equation, shapes))
        check_counting(equation, pairs, device, rng)


@pytest.mark.parametrize("device", DEVICES)
def test_counting_steps_are_one_call_of_the_c_abi_each(monkeypatch, device):
    # A counting network runs the program the other semirings run: one tropical_host_counting_contract
    # (CPU) or tropical_counting_contract (CUDA) call per pairwise step and per reduction, on the
    # operands as they are, and no counting_matmul.
    from tropical_gemm import _contract, _counting
    from test_einsum import _Recorder

    name = "_host_counting_contract_c" if device == "cpu" else "_counting_contract_c"
    recorder = _Recorder(getattr(_contract, name))
    monkeypatch.setattr(_contract, name, recorder)

    def refuse(*args, **kwargs):
        raise AssertionError("einsum called counting_matmul")

    monkeypatch.setattr(_counting, "_run", refuse)
    rng = np.random.default_rng(5)
    equation, shapes = "abx,bc,cd,da->", [(2, 3, 2), (3, 4), (4, 5), (5, 2)]  # x: reduced first
    pairs = ref.random_counting_pairs(rng, shapes, "float64")
    path = [(0, 1), (0, 1), (0, 1)]
    plan = tg.einsum_path(equation, *shapes, optimize=path)
    values = torch.from_numpy(pairs[0][0]).to(device)
    operands = [(values, torch.from_numpy(pairs[0][1]).to(device))]
    operands += [(torch.from_numpy(v).to(device), torch.from_numpy(c).to(device)) for v, c in pairs[1:]]
    got_v, got_c = tg.einsum(equation, *operands, semiring="counting", optimize=path)
    want_v, want_c = ref.brute_counting_einsum(equation, pairs)
    assert (got_v.item(), got_c.item()) == (float(want_v), float(want_c))
    done = [call for call in recorder.calls if call[2] == 0]
    assert len(done) == len(plan.steps) + 1  # the steps and the reduction of x
    assert all(call[2] == tg.UnsupportedError.status for call in recorder.calls if call[2] != 0)
    data, labels, _ = recorder.calls[0]
    assert data == values.data_ptr() and labels == plan.inputs[0]  # a's values as given, no copy


@pytest.mark.parametrize("device", DEVICES)
def test_counting_compiles_fullgraph(device):
    # Traced, each step is the op torch.ops.tropical.counting_contract (its fake gives the shapes).
    torch._dynamo.reset()

    def count(a, b, b_counts, c):
        return tg.einsum("ij,jk,k->i", a, (b, b_counts), c, semiring="counting")

    a = torch.tensor([[0.0, 1.0], [1.0, 1.0]], device=device)
    b = torch.tensor([[1.0, 0.0], [0.0, 0.0]], device=device)
    c = torch.zeros(2, device=device)
    b_counts = torch.full_like(b, 2.0, dtype=torch.float64)
    want = count(a, b, b_counts, c)
    got = torch.compile(count, fullgraph=True, backend="aot_eager")(a, b, b_counts, c)
    assert [x.tolist() for x in got] == [x.tolist() for x in want] == [[1.0, 2.0], [6.0, 2.0]]


@pytest.mark.parametrize("device", DEVICES)
def test_counting_results_that_are_views_follow_the_rules(device):
    # One operand, nothing reduced: no product runs, yet a value -inf has count 0 and a NaN value
    # count NaN, as every product's result has (README, "Counting").
    v = torch.tensor([[-np.inf, 1.0], [np.nan, 2.0]], device=device)
    c = torch.full((2, 2), 5.0, dtype=torch.float64, device=device)
    values, counts = tg.einsum("ij->ji", (v, c), semiring="counting")
    assert values.cpu()[0, 0].item() == -np.inf and counts.cpu()[0, 0].item() == 0.0  # (i, j) = (0, 0)
    assert np.isnan(counts.cpu()[0, 1].item()) and counts.cpu()[1].tolist() == [5.0, 5.0]  # (1, 0) is NaN
    values, counts = tg.einsum("ii->i", (v, c), semiring="counting")
    assert counts.cpu().tolist() == [0.0, 5.0]
