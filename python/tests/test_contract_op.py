"""The binary contraction ops behind each step of tropical_gemm.einsum (_contract.py):
``torch.ops.tropical.contract`` and ``contract_argmax`` (the argmax's order, the CUDA op's copies
where the strides admit no view, gradients through the argmax, opcheck), and
``torch.ops.tropical.counting_contract`` on (values, counts) pairs against the brute-force loop of
einsum_reference, with ties, -inf and NaN, operands whose strides need copies, and its errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402
from tropical_gemm import _contract  # noqa: E402
import einsum_reference as ref  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("against_memory", [False, True])
def test_contract_op_and_its_argmax(device, against_memory):
    # torch.ops.tropical.contract_argmax: the argmax is the flat index over the contracted labels in
    # the order la lists them (here (k, l), though b lists l first). Against memory: a holds l
    # outside k, so no view merges (k, l); the host copies, the CUDA op copies and calls again.
    g = torch.Generator().manual_seed(1)
    if against_memory:
        a = torch.randn(3, 2, 4, dtype=torch.float64, generator=g).permute(0, 2, 1)  # i k l, l outside k
    else:
        a = torch.randn(3, 4, 2, dtype=torch.float64, generator=g)  # i k l
    b = torch.randn(2, 5, 4, dtype=torch.float64, generator=g)  # l j k
    c, m = _contract.contract_argmax(a.to(device), b.to(device), [0, 1, 2], [2, 3, 1], [3, 0], "maxplus")
    terms = a.permute(1, 2, 0)[:, :, None, :] + b.permute(2, 0, 1)[:, :, :, None]  # k l j i
    want = terms.reshape(8, 5, 3)
    assert c.device.type == device and c.is_contiguous() and m.is_contiguous()
    torch.testing.assert_close(c.cpu(), want.amax(0))
    assert m.dtype == torch.int32 and torch.equal(m.cpu().long(), want.argmax(0))
    torch.testing.assert_close(_contract.contract(a.to(device), b.to(device), [0, 1, 2], [2, 3, 1], [3, 0]), c)
    with pytest.raises(tg.InvalidArgumentError, match="reduce them first"):
        _contract.contract(a, b, [0, 1, 2], [2, 3, 9], [3, 0], "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="take the diagonal first"):
        _contract.contract(a, b, [0, 1, 1], [2, 3, 1], [3, 0], "maxplus")


@pytest.mark.parametrize("device", DEVICES)
def test_contract_op_gradients_against_the_argmax(device):
    # The gradient of a step routes grad_C to the attaining term: a one-hot per output element.
    g = torch.Generator().manual_seed(2)
    a = torch.randn(2, 3, 4, dtype=torch.float64, generator=g).to(device).requires_grad_()  # b i k
    b = torch.randn(4, 2, 5, dtype=torch.float64, generator=g).to(device).requires_grad_()  # k b j
    c = _contract.contract(a, b, [0, 1, 2], [2, 0, 3], [3, 0, 1], "maxplus")  # j b i
    c.sum().backward()
    terms = a.detach().cpu()[:, :, :, None] + b.detach().cpu().permute(1, 0, 2)[:, None, :, :]  # b i k j
    best = terms.argmax(2)  # b i j
    torch.testing.assert_close(c.detach().cpu(), terms.amax(2).permute(2, 0, 1))  # C's batch between j and i
    want_a = torch.zeros(2, 3, 4, dtype=torch.float64)
    want_a.scatter_add_(2, best, torch.ones_like(best, dtype=torch.float64))
    torch.testing.assert_close(a.grad.cpu(), want_a)
    assert b.grad.sum().item() == c.numel()


def test_contract_op_passes_opcheck():
    a = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)  # b i k
    b = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)  # b k j
    for op in (_contract.contract, _contract.contract_argmax):
        torch.library.opcheck(op, (a, b, [0, 1, 2], [0, 2, 3], [0, 1, 3], "maxplus"))


# --- the counting contraction ---------------------------------------------------------------------


def _letters(labels) -> str:
    return "".join("abcdefghijklmnopqrstuvwxyz"[l] for l in labels)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["dense", "permuted", "counts apart"])
def test_counting_contract_op_against_brute_force(device, dtype, layout):
    # a: b i k l, b: l b j k -> c: j b i. "permuted": a's values hold l outside k (no view merges
    # (k, l) in a's order); "counts apart": the counts laid out otherwise than their values.
    rng = np.random.default_rng(8 + (dtype == "float64"))
    la, lb, lc = [0, 1, 2, 3], [3, 0, 4, 2], [4, 0, 1]
    for specials in (False, True):
        (av, ac), (bv, bc) = ref.random_counting_pairs(rng, [(2, 3, 4, 2), (2, 2, 5, 4)], dtype, specials)
        want_v, want_c = ref.brute_counting_einsum(f"{_letters(la)},{_letters(lb)}->{_letters(lc)}",
                                                   [(av, ac), (bv, bc)], dtype)
        a = [torch.from_numpy(x).to(device) for x in (av, ac)]
        b = [torch.from_numpy(x).to(device) for x in (bv, bc)]
        if layout == "permuted":
            a[0] = a[0].permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2)
        elif layout == "counts apart":
            a[1] = a[1].permute(3, 2, 1, 0).contiguous().permute(3, 2, 1, 0)
            b[1] = b[1].permute(2, 0, 3, 1).contiguous().permute(1, 3, 0, 2)
        values, counts = _contract.counting_contract(a[0], a[1], b[0], b[1], la, lb, lc)
        assert values.dtype == a[0].dtype and counts.dtype == torch.float64 and values.device.type == device
        assert values.shape == counts.shape == want_v.shape
        np.testing.assert_array_equal(values.cpu().double().numpy(), want_v)
        np.testing.assert_array_equal(counts.cpu().numpy(), want_c)
        assert specials or counts.max().item() > 3  # ties: counts of equal maxima added


def test_counting_contract_op_errors():
    a, b = torch.zeros(3, 4), torch.zeros(4, 5)
    ones_a, ones_b = torch.ones(3, 4, dtype=torch.float64), torch.ones(4, 5, dtype=torch.float64)
    op = _contract.counting_contract
    with pytest.raises(tg.InvalidArgumentError, match="a_counts has shape .4, 3. but a_values .3, 4."):
        op(a, ones_a.t(), b, ones_b, [0, 1], [1, 2], [0, 2])
    with pytest.raises(tg.UnsupportedError, match="counting values are float32 or float64"):
        op(a.int(), ones_a, b.int(), ones_b, [0, 1], [1, 2], [0, 2])
    with pytest.raises(tg.InvalidArgumentError, match="reduce them first"):
        op(a, ones_a, b, ones_b, [0, 1], [1, 2], [0])
    with pytest.raises(tg.InvalidArgumentError, match="a is torch.float32 but b is torch.float64"):
        op(a, ones_a, b.double(), ones_b, [0, 1], [1, 2], [0, 2])


def test_counting_contract_op_passes_opcheck():
    a, b = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 4, 5, dtype=torch.float64)
    ca, cb = torch.ones_like(a), torch.full_like(b, 2.0)
    torch.library.opcheck(_contract.counting_contract, (a, ca, b, cb, [0, 1, 2], [0, 2, 3], [0, 1, 3]),
                          test_utils=("test_schema", "test_faketensor"))
