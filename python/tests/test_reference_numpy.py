"""The library's CPU reference (tropical_gemm.reference) against the NumPy oracle: no PyTorch needed."""

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
    assert tg.reference.gemm(a, b, "maxmin").tolist() == [[2, 2], [4, 4]]
    assert tg.reference.gemm(a, b, "minmax").tolist() == [[5, 6], [5, 6]]
    _, idx = tg.reference.gemm(a, b, "maxplus", return_argmax=True)
    assert idx[0, 0] == 1
    assert tg.reference.gemm(a, b, "maxmin", return_argmax=True)[1][0, 0] == 1
    assert tg.reference.gemm(a, b, "minmax", return_argmax=True)[1][0, 0] == 0


def test_errors():
    a = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(tg.InvalidArgumentError, match="unknown semiring 'tropical'"):
        tg.reference.gemm(a, a.T, "tropical")
    with pytest.raises(tg.InvalidArgumentError, match="a's columns must equal b's rows"):
        tg.reference.gemm(a, a, "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="convert one"):
        tg.reference.gemm(a, a.T.astype(np.float64), "maxplus")
    with pytest.raises(tg.UnsupportedError, match="use one of float32, float64, int32, int64"):
        tg.reference.gemm(a.astype(np.int8), a.T.astype(np.int8), "maxplus")


# --- any byte order, any strides --------------------------------------------------------------


def plain(x):
    """x as a plain array: native byte order, C-contiguous (what the oracle is given)."""
    return np.ascontiguousarray(x).astype(x.dtype.newbyteorder("="))


def in_bytes(values, strides, offset=0):
    """An array of values' dtype over a byte buffer with the given byte strides (any, even odd ones)."""
    span = offset + sum((n - 1) * abs(s) for n, s in zip(values.shape, strides)) + values.itemsize
    start = offset + sum((n - 1) * -s for n, s in zip(values.shape, strides) if s < 0)
    x = np.ndarray(values.shape, dtype=values.dtype, buffer=np.zeros(span + 8, dtype=np.uint8), offset=start,
                   strides=strides)
    x[...] = values
    return x


@pytest.mark.parametrize("dtype", ref.DTYPES)
@pytest.mark.parametrize("semiring", ref.SEMIRINGS)
def test_big_endian(dtype, semiring):
    rng = np.random.default_rng(11)
    a, b = ref.random_operands(rng, (5, 7), (7, 4), dtype, semiring, specials=True)
    big = np.dtype(dtype).newbyteorder(">")
    want_c, want_idx = ref.gemm(a, b, semiring, argmax=True)
    for x, y in [(a.astype(big), b.astype(big)), (a.astype(big), b), (a, b.astype(big))]:
        c, idx = tg.reference.gemm(x, y, semiring, return_argmax=True)
        assert c.dtype == np.dtype(dtype) and c.dtype.isnative
        assert_same(c, want_c)
        assert_same(idx, want_idx)
    a3, b3 = ref.random_operands(rng, (3, 4, 6), (1, 6, 2), dtype, semiring)
    assert_same(tg.reference.gemm(a3.astype(big), b3.astype(big), semiring), ref.gemm(a3, b3, semiring))


def test_strides_that_are_not_whole_elements():
    # The case that read [2, 2, 4, 4]: float32 rows 10 bytes apart (10 // 4 would be 2 elements).
    values = np.array([[1, 1], [1, 1]], dtype=np.float32)
    a = in_bytes(values, (10, 4))
    b = np.zeros((2, 2), dtype=np.float32)
    assert tg.reference.gemm(a, b, "maxplus").ravel().tolist() == [1, 1, 1, 1]
    rng = np.random.default_rng(12)
    for dtype in ref.DTYPES:
        x, y = ref.random_operands(rng, (4, 6), (6, 3), dtype, "maxplus")
        item = np.dtype(dtype).itemsize
        for sa, sb in [((6 * item + 3, item), (3 * item, item)),  # rows not a whole number of elements
                       ((item, 4 * item + 1), (item + 5, 6 * item + 7)),  # column-major-ish, odd
                       ((6 * item, item), (3 * item, item))]:  # plain, as a control
            xa, yb = in_bytes(x, sa), in_bytes(y, sb)
            assert_same(tg.reference.gemm(xa, yb, "maxplus"), ref.gemm(plain(xa), plain(yb), "maxplus"))


def test_fields_of_records_and_misaligned_data():
    rng = np.random.default_rng(13)
    records = np.zeros((4, 6), dtype=[("flag", "u1"), ("x", "<f8"), ("y", ">i4")])  # 13-byte records
    records["x"] = rng.normal(size=(4, 6))
    records["y"] = rng.integers(-20, 20, size=(4, 6))
    x, y = records["x"], records["y"]
    assert x.strides == (78, 13) and not x.flags.aligned
    other = rng.normal(size=(6, 3))
    assert_same(tg.reference.gemm(x, other, "minplus"), ref.gemm(plain(x), other, "minplus"))
    ints = rng.integers(-20, 20, size=(6, 2)).astype(np.int32)
    assert_same(tg.reference.gemm(y, ints, "maxplus"), ref.gemm(plain(y), ints, "maxplus"))
    unaligned = in_bytes(other.T.copy(), (6 * 8, 8), offset=3)  # 3 bytes past an 8-byte boundary
    assert not unaligned.flags.aligned
    assert_same(tg.reference.gemm(unaligned, x.T.copy(), "maxplus"), ref.gemm(plain(unaligned), x.T.copy(), "maxplus"))


@pytest.mark.parametrize("dtype", ref.DTYPES)
def test_negative_and_zero_strides(dtype):
    rng = np.random.default_rng(14)
    a, b = ref.random_operands(rng, (6, 8), (8, 5), dtype, "maxplus", specials=True)
    views_a = [a[::-1], a[:, ::-1], a[::-2, ::-1], np.broadcast_to(a[2], (6, 8)),
               in_bytes(a, (-8 * a.itemsize, -a.itemsize))]
    views_b = [b[::-1], np.asfortranarray(b)[::-1, ::-1], np.broadcast_to(b[:, :1], (8, 5))]
    for x in views_a:
        for y in views_b:
            if x.shape[1] != y.shape[0]:
                continue
            c, idx = tg.reference.gemm(x, y, "maxplus", return_argmax=True)
            want_c, want_idx = ref.gemm(plain(x), plain(y), "maxplus", argmax=True)
            assert_same(c, want_c)
            assert_same(idx, want_idx)
    # Batched: a reversed batch (negative batch stride), big-endian, odd byte strides.
    a3, b3 = ref.random_operands(rng, (4, 3, 8), (4, 8, 2), dtype, "minplus")
    big = np.dtype(dtype).newbyteorder(">")
    item = a3.itemsize
    odd = in_bytes(b3.astype(big), (8 * 2 * item + 5, 2 * item, item))
    assert_same(tg.reference.gemm(a3[::-1], odd, "minplus"), ref.gemm(plain(a3[::-1]), plain(odd), "minplus"))


def test_a_batch_of_one_against_an_empty_batch():
    a = np.ones((1, 2, 3), dtype=np.float32)
    b = np.ones((0, 3, 4), dtype=np.float32)
    assert tg.reference.gemm(a, b).shape == (0, 2, 4)
    assert tg.reference.gemm(b.transpose(0, 2, 1), a.transpose(0, 2, 1)).shape == (0, 4, 2)
