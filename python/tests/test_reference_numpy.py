"""The library's CPU reference (the CPU path of the ops) against the NumPy oracle: no PyTorch needed."""

from __future__ import annotations

import itertools

import pytest

np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402
import tropical_reference as ref  # noqa: E402

CASES = list(itertools.product(ref.DTYPES, ref.SEMIRINGS))


def assert_same(x, y):
    np.testing.assert_array_equal(x, y)  # exact: NaN equals NaN, values bit-for-bit up to the sign of 0


@pytest.mark.parametrize("dtype,semiring", CASES)
@pytest.mark.parametrize("specials", [False, True])
def test_gemm_and_argmax(dtype, semiring, specials):
    rng = np.random.default_rng(hash((dtype, semiring, specials)) % 2**32)
    for m, k, n in [(1, 1, 1), (5, 7, 3), (16, 9, 13), (3, 0, 4), (0, 4, 2)]:
        a, b = ref.random_operands(rng, (m, k), (k, n), dtype, semiring, specials)
        c, idx = tg.reference.gemm(a, b, semiring, return_argmax=True)
        want_c, want_idx = ref.gemm(a, b, semiring, argmax=True)
        assert_same(c, want_c)
        assert_same(idx, want_idx)
        assert_same(tg.reference.gemm(a, b, semiring), want_c)


@pytest.mark.parametrize("dtype,semiring", CASES)
def test_strided_and_batched(dtype, semiring):
    rng = np.random.default_rng(7)
    a, b = ref.random_operands(rng, (4, 6, 5), (1, 5, 3), dtype, semiring)
    c = tg.reference.gemm(a, b, semiring)
    assert_same(c, ref.gemm(a, b, semiring))
    # Transposed and sliced views go in as they are (the reference takes any strides).
    at = np.ascontiguousarray(a[0].T).T
    bt = np.asfortranarray(b[0])
    assert_same(tg.reference.gemm(at, bt, semiring), ref.gemm(a[0], b[0], semiring))
    big, _ = ref.random_operands(rng, (8, 10), (1, 1), dtype, semiring)
    sliced = big[::2, 1::2]  # 4 x 5, strides (2 rows, 2 elements)
    assert_same(tg.reference.gemm(sliced, b[0], semiring), ref.gemm(np.ascontiguousarray(sliced), b[0], semiring))


def test_readme_examples():
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    b = np.array([[5, 6], [7, 8]], dtype=np.float32)
    assert tg.reference.gemm(a, b, "maxplus").tolist() == [[9, 10], [11, 12]]
    assert tg.reference.gemm(a, b, "minplus").tolist() == [[6, 7], [8, 9]]
    assert tg.reference.gemm(a, b, "maxmul").tolist() == [[14, 16], [28, 32]]
    _, idx = tg.reference.gemm(a, b, "maxplus", return_argmax=True)
    assert idx[0, 0] == 1


def test_errors():
    a = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(tg.InvalidArgumentError, match="unknown semiring 'tropical'"):
        tg.reference.gemm(a, a.T, "tropical")
    with pytest.raises(tg.InvalidArgumentError, match="a's columns must equal b's rows"):
        tg.reference.gemm(a, a, "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="convert one"):
        tg.reference.gemm(a, a.T.astype(np.float64), "maxplus")
    with pytest.raises(tg.UnsupportedError, match="use float32, float64, int32 or int64"):
        tg.reference.gemm(a.astype(np.float16), a.T.astype(np.float16), "maxplus")
