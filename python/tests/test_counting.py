"""The counting semiring in PyTorch: counting_matmul and einsum(semiring="counting") against brute
force (a loop over every index assignment, with the library's rules for ties, -inf, +inf and NaN),
on CPU tensors here and CUDA tensors where a GPU is present; and the number of ground states of
small +-J spin glasses and of maximum independent sets of small random graphs, against brute force
over every configuration."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import torch

import tropical_gemm
from tropical_gemm import InvalidArgumentError, UnsupportedError

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
DTYPES = [torch.float32, torch.float64]
NAN = float("nan")


def counted(value: float, count: float) -> tuple[float, float]:
    """A pair as the rules read it: -inf counts 0, a NaN value has count NaN."""
    if math.isnan(value):
        return NAN, NAN
    if value == -math.inf:
        return value, 0.0
    return value, count


def plus(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
    if math.isnan(x[0]) or math.isnan(y[0]):
        return NAN, NAN
    if x[0] > y[0]:
        return x
    if y[0] > x[0]:
        return y
    return x[0], x[1] + y[1]


def brute_einsum(equation: str, pairs, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The counting einsum by a loop over every assignment of every index (no '...')."""
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    sizes = {}
    for term, (v, _) in zip(terms, pairs):
        for letter, size in zip(term, v.shape):
            sizes[letter] = size
    letters = sorted(sizes)
    out_shape = tuple(sizes[l] for l in output)
    acc = {key: (-math.inf, 0.0) for key in itertools.product(*(range(sizes[l]) for l in output))}
    np_pairs = [(v.cpu().double().numpy(), c.cpu().double().numpy()) for v, c in pairs]
    for assignment in itertools.product(*(range(sizes[l]) for l in letters)):
        where = dict(zip(letters, assignment))
        value, count = 0.0, 1.0
        for term, (v, c) in zip(terms, np_pairs):
            idx = tuple(where[l] for l in term)
            a = counted(float(v[idx]), float(c[idx]))
            value, count = value + a[0], count * a[1]
        value = float(np.array(value, dtype=np.float32)) if dtype == torch.float32 else value
        key = tuple(where[l] for l in output)
        acc[key] = plus(acc[key], counted(value, count))
    values = np.empty(out_shape)
    counts = np.empty(out_shape)
    for key, (v, c) in acc.items():
        v, c = counted(v, c)
        values[key], counts[key] = v, c
    return values, counts


def random_pair(shape, dtype, device, edges: bool, gen: random.Random, posinf: bool = True):
    """Values: small integers (ties everywhere), with -inf, NaN and (with posinf) +inf where asked;
    counts 0..3."""
    n = math.prod(shape)
    vals = []
    for _ in range(n):
        r = gen.randrange(80)
        if edges and r < 10:
            vals.append(-math.inf)
        elif edges and posinf and r < 12:
            vals.append(math.inf)
        elif edges and r < 13:
            vals.append(NAN)
        else:
            vals.append(float(gen.randint(-2, 2)))
    v = torch.tensor(vals, dtype=dtype).reshape(shape).to(device)
    c = torch.tensor([float(gen.randint(0, 3)) for _ in range(n)], dtype=torch.float64).reshape(shape).to(device)
    return v, c


def assert_pair(actual, expected_values, expected_counts):
    v, c = actual
    np.testing.assert_array_equal(v.cpu().double().numpy(), expected_values)
    np.testing.assert_array_equal(c.cpu().numpy(), expected_counts)
    assert c.dtype == torch.float64


@pytest.fixture
def gen(request):
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    return random.Random(seed)


# --- counting_matmul ------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("edges", [False, True])
def test_matmul_matches_brute_force_on_every_layout(device, dtype, edges, gen):
    for m, k, n in [(1, 1, 1), (3, 5, 4), (7, 1, 9), (4, 0, 3), (17, 9, 6)]:
        a = random_pair((m, k), dtype, device, edges, gen)
        b = random_pair((k, n), dtype, device, edges, gen)
        expected = brute_einsum("ik,kj->ij", [a, b], dtype)
        for ta, tb, tc in itertools.product([False, True], repeat=3):
            # Transposed views give column-major descriptors, values and counts each their own.
            av = a[0].t().contiguous().t() if ta else a[0]
            bc = b[1].t().contiguous().t() if tb else b[1]
            ac = a[1].t().contiguous().t() if tc else a[1]
            assert_pair(tropical_gemm.counting_matmul(av, ac, b[0], bc), *expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_matmul_with_broadcast(device, dtype, gen):
    a = random_pair((5, 6, 4), dtype, device, True, gen)
    b = random_pair((1, 4, 3), dtype, device, True, gen)
    b_expanded = (b[0].expand(5, 4, 3), b[1].expand(5, 4, 3))  # batch stride 0
    values, counts = tropical_gemm.counting_matmul(a[0], a[1], *b_expanded)
    assert values.shape == (5, 6, 3)
    for i in range(5):
        expected = brute_einsum("ik,kj->ij", [(a[0][i], a[1][i]), (b[0][0], b[1][0])], dtype)
        assert_pair((values[i], counts[i]), *expected)
    # A 2-D operand broadcasts over the other's batch; None counts are 1.
    values2, counts2 = tropical_gemm.counting_matmul(a[0], None, b[0][0], None)
    for i in range(5):
        ones_a, ones_b = torch.ones_like(a[1][i]), torch.ones_like(b[1][0])
        expected = brute_einsum("ik,kj->ij", [(a[0][i], ones_a), (b[0][0], ones_b)], dtype)
        assert_pair((values2[i], counts2[i]), *expected)


def test_matmul_errors():
    v = torch.zeros(2, 3)
    with pytest.raises(UnsupportedError, match="float32 or float64"):
        tropical_gemm.counting_matmul(v.int(), None, v.t(), None)
    with pytest.raises(InvalidArgumentError, match="each value needs its count"):
        tropical_gemm.counting_matmul(v, torch.ones(3, 2), v.t(), None)
    with pytest.raises(InvalidArgumentError, match="a's columns .K = 3. must equal b's rows .2."):
        tropical_gemm.counting_matmul(v, None, v, None)
    with pytest.raises(InvalidArgumentError, match="counting_matmul"):
        tropical_gemm.matmul(v, v.t(), "counting")


@pytest.mark.parametrize("device", DEVICES)
def test_the_op_passes_opcheck_and_compiles(device):
    # torch.ops.tropical.counting_gemm: schema, fake implementation (shapes, dtypes, strides) and
    # torch.compile(fullgraph=True) against the eager op, a product and a broadcast batch.
    gen = torch.Generator().manual_seed(3)
    av, bv = torch.randint(-2, 3, (3, 5), generator=gen).double(), torch.randint(-2, 3, (4, 5, 2), generator=gen).double()
    ac, bc = torch.randint(1, 4, av.shape, generator=gen).double(), torch.randint(1, 4, bv.shape, generator=gen).double()
    args = [x.to(device) for x in (av, ac, bv[0], bc[0])]
    batched = [x.to(device) for x in (av, ac, bv, bc)]
    for operands in (args, batched):
        torch.library.opcheck(torch.ops.tropical.counting_gemm, tuple(operands))
    torch._dynamo.reset()
    compiled = torch.compile(lambda *x: torch.ops.tropical.counting_gemm(*x), fullgraph=True, backend="aot_eager")
    for operands in (args, batched):
        got, want = compiled(*operands), torch.ops.tropical.counting_gemm(*operands)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=0, atol=0)
    values, counts = tropical_gemm.counting_matmul(*batched)  # the front door, the same product
    torch.testing.assert_close(values, want[0], rtol=0, atol=0)
    torch.testing.assert_close(counts, want[1], rtol=0, atol=0)


# --- einsum ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("ij->i", [(4, 5)]),  # an index one operand alone holds: equal maxima add their counts
        ("ij,jk->i", [(3, 3), (3, 4)]),  # k reduced before the product
        ("ij,jk,ki->", [(2, 3), (3, 2), (2, 2)]),
        ("bij,bjk->bik", [(3, 2, 4), (3, 4, 2)]),
        ("iij,j->i", [(3, 3, 2), (2,)]),  # a diagonal
        ("ij,kl->ijkl", [(2, 3), (2, 2)]),  # an outer product
    ],
)
def test_einsum_matches_brute_force(device, dtype, equation, shapes, gen):
    # No +inf: an einsum contracts in steps, and -inf + +inf = NaN is not distributive (+inf + max(-inf,
    # 3) is +inf, max(+inf + -inf, +inf + 3) is NaN), so the brute force over whole assignments may
    # meet a NaN that the steps do not; the single products above test +inf.
    for edges in (False, True):
        pairs = [random_pair(s, dtype, device, edges, gen, posinf=False) for s in shapes]
        expected = brute_einsum(equation, pairs, dtype)
        assert_pair(tropical_gemm.einsum(equation, *pairs, semiring="counting"), *expected)
    # Plain tensors count 1 each.
    plain = [random_pair(s, dtype, device, False, gen)[0] for s in shapes]
    expected = brute_einsum(equation, [(v, torch.ones_like(v, dtype=torch.float64)) for v in plain], dtype)
    assert_pair(tropical_gemm.einsum(equation, *plain, semiring="counting"), *expected)


def test_einsum_errors():
    with pytest.raises(UnsupportedError, match="float32 or float64"):
        tropical_gemm.einsum("ij->", torch.zeros(2, 2, dtype=torch.int32), semiring="counting")
    with pytest.raises(InvalidArgumentError, match="each value needs its count"):
        tropical_gemm.einsum("ij->", (torch.zeros(2, 2), torch.ones(2)), semiring="counting")


# --- ground states of +-J spin glasses and maximum independent sets ---------------------------------


def lattice_edges(side: int) -> list[tuple[int, int]]:
    edges = []
    for r in range(side):
        for c in range(side):
            v = r * side + c
            if c + 1 < side:
                edges.append((v, v + 1))
            if r + 1 < side:
                edges.append((v, v + side))
    return edges


def letter(v: int) -> str:
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[v]


def brute_best(n: int, score) -> tuple[float, int]:
    """The best score over every assignment of n binary variables, and how many attain it."""
    configs = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64)
    scores = score(configs)
    best = scores.max()
    return float(best), int((scores == best).sum())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("side", [3, 4])
def test_spin_glass_ground_state_degeneracy(device, side, gen):
    """A +-J spin glass on a side x side lattice, open boundaries, fields of 0 or +-1 on the spins:
    the ground state maximises sum J_ij s_i s_j + sum h_i s_i (s = +-1); +-1 couplings and many
    zero fields leave many ground states."""
    n = side * side
    edges = lattice_edges(side)
    for _ in range(3):
        couplings = [gen.choice([-1.0, 1.0]) for _ in edges]
        fields = [gen.choice([0.0, 0.0, 1.0, -1.0]) for _ in range(n)]
        spin = torch.tensor([-1.0, 1.0], dtype=torch.float64)
        tensors, terms = [], []
        for (i, j), coupling in zip(edges, couplings):
            tensors.append((coupling * torch.outer(spin, spin)).to(device))
            terms.append(letter(i) + letter(j))
        for i, h in enumerate(fields):
            tensors.append((h * spin).to(device))
            terms.append(letter(i))
        equation = ",".join(terms) + "->"
        values, counts = tropical_gemm.einsum(equation, *tensors, semiring="counting")

        def score(configs):
            s = 2 * configs - 1
            total = sum(cpl * s[:, i] * s[:, j] for (i, j), cpl in zip(edges, couplings))
            return total + sum(h * s[:, i] for i, h in enumerate(fields))

        best, count = brute_best(n, score)
        assert values.item() == best
        assert counts.item() == count


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("vertices", [8, 12])
def test_number_of_maximum_independent_sets(device, vertices, gen):
    for _ in range(3):
        edges = [(i, j) for i in range(vertices) for j in range(i + 1, vertices) if gen.random() < 0.3]
        # Vertex tensors [0, 1] (absent, present); edge tensors forbid both ends at once. An isolated
        # vertex's index is held by its own tensor alone.
        tensors = [torch.tensor([0.0, 1.0], device=device) for _ in range(vertices)]
        terms = [letter(v) for v in range(vertices)]
        forbid = torch.tensor([[0.0, 0.0], [0.0, -math.inf]], device=device)
        for i, j in edges:
            tensors.append(forbid)
            terms.append(letter(i) + letter(j))
        values, counts = tropical_gemm.einsum(",".join(terms) + "->", *tensors, semiring="counting")

        def score(configs):
            ok = np.ones(len(configs), dtype=bool)
            for i, j in edges:
                ok &= ~((configs[:, i] == 1) & (configs[:, j] == 1))
            return np.where(ok, configs.sum(axis=1), -1)

        best, count = brute_best(vertices, score)
        assert values.item() == best
        assert counts.item() == count


def test_warm_up_selections_pick_the_counting_rows():
    from tropical_gemm.cache import kernel_names, select_kernels

    expected = sorted(f"tropical_{v}_{t}_counting" for v in ("gemm", "batched", "small") for t in ("f32", "f64"))
    assert sorted(n for n in kernel_names() if n.endswith("_counting")) == expected
    chosen = select_kernels(semirings=["counting"])
    assert sorted(chosen) == expected  # the backward kernels, which take their semiring at launch, serve no counting
    assert select_kernels(semirings=["counting"], dtypes=["float64"], variants=["small"]) == [
        "tropical_small_f64_counting"]
