"""The Boolean semiring OrAnd from Python: matmul and the ops on bool and uint8 tensors, against an
independent NumPy statement (OR of ANDs through an integer product, the first true k by argmax);
pack_bits and the packed products (garbage past K ignored); batches and broadcasts; layouts; einsum;
the NumPy reference; errors (no gradient, mismatched dtypes); opcheck and torch.compile; the cache's
selections. CUDA cases run with a GPU (marked gpu), against the CPU path."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402

T = torch.ops.tropical
KS = (0, 1, 31, 32, 33, 95, 600)


def booleans(shape, density, dtype=torch.bool, seed=0):
    """Random booleans; uint8 trues take any value from 1 to 255."""
    g = torch.Generator().manual_seed(seed)
    true = torch.rand(shape, generator=g) < density
    if dtype == torch.bool:
        return true
    return torch.where(true, torch.randint(1, 256, shape, generator=g), 0).to(dtype)


def expected(a, b, argmax=False):
    """C = OR_k a AND b (and the first true k, -1 where none), batched over leading dimensions."""
    x, y = a.numpy() != 0, b.numpy() != 0
    terms = x[..., :, :, None] & y[..., None, :, :]  # (.., M, K, N)
    c = terms.any(axis=-2)
    if not argmax:
        return c
    if terms.shape[-2] == 0:  # K = 0: nothing is true
        return c, np.full(c.shape, -1, dtype=np.int32)
    first = np.where(c, terms.argmax(axis=-2), -1).astype(np.int32)
    return c, first


def same(got, want, dtype):
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.cpu().numpy().astype(np.uint8), np.asarray(want).astype(np.uint8))


@pytest.mark.parametrize("dtype,k", list(itertools.product((torch.bool, torch.uint8), KS)))
def test_matmul_and_argmax_match_numpy(dtype, k):
    density = 0.5 if k < 40 else 0.05
    a, b = booleans((37, k), density, dtype, seed=k), booleans((k, 29), density, dtype, seed=k + 1)
    same(tg.matmul(a, b, "orand"), expected(a, b), dtype)
    c, idx = tg.matmul(a, b, "or-and", return_argmax=True)
    want_c, want_idx = expected(a, b, argmax=True)
    same(c, want_c, dtype)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    # The ops themselves.
    same(T.gemm(a, b, "orand"), want_c, dtype)
    np.testing.assert_array_equal(T.gemm_argmax(a, b, "orand")[1].numpy(), want_idx)


def test_results_are_zero_or_one_and_accumulate_nothing_else():
    a = torch.tensor([[0x80, 2], [0, 0]], dtype=torch.uint8)
    b = torch.tensor([[0, 7], [255, 0]], dtype=torch.uint8)
    c, idx = tg.matmul(a, b, "orand", return_argmax=True)
    assert c.tolist() == [[1, 1], [0, 0]] and idx.tolist() == [[1, 0], [-1, -1]]


def test_layouts_batches_and_broadcasts():
    a, b = booleans((3, 40, 50), 0.05, seed=3), booleans((1, 50, 20), 0.05, seed=4)
    # Transposed and strided operands go to the kernels as they are.
    at = booleans((50, 40), 0.05, seed=5).t()
    same(tg.matmul(at, b[0], "orand"), expected(at, b[0]), torch.bool)
    same(tg.matmul(a[:, ::2, :], b, "orand"), expected(a[:, ::2, :], b.expand(3, 50, 20)), torch.bool)
    c, idx = tg.matmul(a, b, "orand", return_argmax=True)  # a batch of 1 broadcasts
    want_c, want_idx = expected(a, b.expand(3, 50, 20), argmax=True)
    same(c, want_c, torch.bool)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    x = booleans((2, 3, 6, 40), 0.1, torch.uint8, seed=6)
    same(tg.matmul(x, booleans((40, 5), 0.1, torch.uint8, seed=7), "orand"),
         expected(x, booleans((40, 5), 0.1, torch.uint8, seed=7)), torch.uint8)


def test_reachability_example_of_the_readme():
    a = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=torch.bool)
    c, idx = tg.matmul(a, a, "orand", return_argmax=True)
    assert c.int().tolist() == [[0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert idx.tolist() == [[-1, -1, 1, 1], [-1, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, -1]]
    # The closure by repeated squaring of I OR A.
    r = a | torch.eye(4, dtype=torch.bool)
    for _ in range(2):
        r = tg.matmul(r, r, "orand")
    assert r[0].tolist() == [True, True, True, True] and r[2].tolist() == [False, False, True, False]


def numpy_words(x: np.ndarray, axis: int) -> np.ndarray:
    """x (booleans) packed along `axis` into little-endian 32-bit words, as int32, independently of
    the library: numpy.packbits with bitorder little, 4 bytes to a word."""
    x = np.moveaxis(x != 0, axis, -1)
    k = x.shape[-1]
    pad = (-k) % 32
    x = np.concatenate([x, np.zeros(x.shape[:-1] + (pad,), dtype=bool)], axis=-1)
    words = np.ascontiguousarray(np.packbits(x, axis=-1, bitorder="little")).view("<u4").astype(np.uint32).view(np.int32)
    return np.moveaxis(words, -1, axis)


@pytest.mark.parametrize("dim,k", list(itertools.product((-1, -2), (1, 31, 32, 33, 95))))
def test_pack_bits_matches_numpy(dim, k):
    x = booleans((3, 11, k) if dim == -1 else (3, k, 11), 0.4, torch.uint8, seed=k)
    packed = tg.pack_bits(x, dim)
    assert packed.k == k and packed.dim == dim
    np.testing.assert_array_equal(packed.words.numpy(), numpy_words(x.numpy(), dim))
    # Rows of words padded to 4 words (16-byte aligned starts), as the kernels' vector loads want.
    assert packed.words.stride(-2) % 4 == 0 and packed.words.dtype == torch.int32
    np.testing.assert_array_equal(T.pack_bits(x[0], dim).numpy(), numpy_words(x[0].numpy(), dim))


@pytest.mark.parametrize("k", KS)
def test_packed_products_match_bytes_and_ignore_the_bits_past_k(k):
    a, b = booleans((23, k), 0.1, seed=k), booleans((k, 41), 0.1, seed=k + 7)
    pa, pb = tg.pack_bits(a, -1), tg.pack_bits(b, -2)
    same(tg.matmul(pa, pb, "orand"), expected(a, b), torch.bool)
    c, idx = tg.matmul(pa, pb, "orand", return_argmax=True)
    want_c, want_idx = expected(a, b, argmax=True)
    same(c, want_c, torch.bool)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    if k % 32:
        # Garbage past K in the last word of either operand changes nothing.
        wa, wb = pa.words.clone(), pb.words.clone()
        garbage = torch.tensor(~((1 << (k % 32)) - 1) & 0xFFFFFFFF, dtype=torch.int64).to(torch.int32)
        wa[:, -1] |= garbage
        wb[-1, :] |= garbage
        same(T.gemm_packed(wa, wb, k), want_c, torch.bool)
        np.testing.assert_array_equal(T.gemm_packed_argmax(wa, wb, k)[1].numpy(), want_idx)


def test_batched_packed_products():
    a, b = booleans((4, 9, 70), 0.05, seed=1), booleans((1, 70, 13), 0.05, seed=2)
    pa, pb = tg.pack_bits(a, -1), tg.pack_bits(b, -2)
    c, idx = tg.matmul(pa, pb, "orand", return_argmax=True)
    want_c, want_idx = expected(a, b.expand(4, 70, 13), argmax=True)
    same(c, want_c, torch.bool)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    same(T.gemm_packed(pa.words, pb.words, 70), want_c, torch.bool)


def test_errors():
    f = torch.ones(2, 2)
    x = torch.ones(2, 2, dtype=torch.bool)
    with pytest.raises(tg.UnsupportedError, match="'orand' .or, and. is Boolean: it takes bool or uint8"):
        tg.matmul(f, f, "orand")
    with pytest.raises(tg.UnsupportedError, match="booleans, for semiring 'orand'"):
        tg.matmul(x, x, "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="same dtype"):
        tg.matmul(x, x.to(torch.uint8), "orand")
    with pytest.raises(tg.UnsupportedError, match="no gradient"):
        T.gemm_backward_a(torch.ones(2, 2), torch.zeros(2, 2, dtype=torch.int32), x, x, "orand")
    with pytest.raises(tg.InvalidArgumentError, match="pack both a"):
        tg.matmul(tg.pack_bits(x, -1), x, "orand")
    with pytest.raises(tg.InvalidArgumentError, match="packed booleans are for semiring 'orand'"):
        tg.matmul(tg.pack_bits(x, -1), tg.pack_bits(x, -2), "maxplus")
    with pytest.raises(tg.InvalidArgumentError, match="dim -1 .its columns. and b along -2"):
        tg.matmul(tg.pack_bits(x, -2), tg.pack_bits(x, -1), "orand")
    with pytest.raises(tg.InvalidArgumentError, match="k = 40 packs into 2 words"):
        T.gemm_packed(tg.pack_bits(x, -1).words, tg.pack_bits(x, -2).words, 40)
    with pytest.raises(tg.UnsupportedError, match="packs booleans"):
        tg.pack_bits(f)
    with pytest.raises(tg.InvalidArgumentError, match="dim 0 of a 3-D tensor"):
        tg.pack_bits(x[None], 0)


def test_spellings_and_the_numpy_reference():
    for spelling in ("orand", "or_and", "or-and", "and_or", "and-or", "andor", "OrAnd"):
        assert tg.functional.semiring_name(spelling) == "orand"
    a = np.array([[0, 1], [1, 0]], dtype=bool)
    c, idx = tg.reference.gemm(a, a, "orand", return_argmax=True)
    assert c.tolist() == [[True, False], [False, True]] and idx.tolist() == [[1, -1], [-1, 0]]
    u = a.astype(np.uint8) * 200
    assert tg.reference.gemm(u, u, "orand").tolist() == [[1, 0], [0, 1]]
    with pytest.raises(tg.UnsupportedError):
        tg.reference.gemm(a.astype(np.float32), a.astype(np.float32), "orand")


def test_einsum():
    a, b, v = booleans((6, 40), 0.1, seed=1), booleans((40, 7), 0.1, seed=2), booleans((7,), 0.5, seed=3)
    same(tg.einsum("ij,jk->ik", a, b, semiring="orand"), expected(a, b), torch.bool)
    # Reducing an index by OR: rows with any true.
    same(tg.einsum("ij->i", a, semiring="orand"), a.numpy().any(axis=1), torch.bool)
    want = (expected(a, b) & v.numpy()[None, :]).any(axis=1)
    same(tg.einsum("ij,jk,k->i", a, b, v, semiring="orand"), want, torch.bool)


def test_cache_selections():
    names = tg.cache.select_kernels(dtypes=[torch.bool])
    assert sorted(names) == sorted(["tropical_gemm_u8_orand", "tropical_gemm_argmax_u8_orand", "tropical_packed_u8_orand",
                                    "tropical_packed_argmax_u8_orand", "tropical_pack_bits_u8_orand"])
    assert tg.cache.select_kernels(dtypes=["u8"], groups=["pack_bits"]) == ["tropical_pack_bits_u8_orand"]
    assert "tropical_packed_u8_orand" in tg.cache.select_kernels(semirings=["and-or"], variants=["packed"])
    assert all(k.dtype == "u8" for k in tg.cache.kernels() if k.semiring == "orand")
    # OrAnd has no gradient: the backward kernels (which take their semiring at launch) do not serve it.
    assert not [n for n in tg.cache.select_kernels(semirings=["orand"]) if "backward" in n]


def opcheck_samples():
    a, b = booleans((5, 40), 0.2, seed=1), booleans((40, 3), 0.2, torch.bool, seed=2)
    pa, pb = T.pack_bits(a, -1), T.pack_bits(b, -2)
    yield T.gemm, (a, b, "orand")
    yield T.gemm_argmax, (a.to(torch.uint8), b.to(torch.uint8), "orand")
    yield T.bgemm, (a[None], b[None].expand(2, 40, 3), "orand")
    yield T.bgemm_argmax, (a[None], b[None], "orand")
    yield T.pack_bits, (a, -1)
    yield T.pack_bits, (b.to(torch.uint8)[None], -2)
    yield T.gemm_packed, (pa, pb, 40)
    yield T.gemm_packed_argmax, (pa, pb, 40)
    yield T.gemm_packed, (pa[None], pb[None], 40)
    yield T.gemm_packed_argmax, (pa[None].expand(3, 5, 2), pb[None], 40)


@pytest.mark.parametrize("index", range(len(list(opcheck_samples()))))
def test_opcheck(index):
    op, args = list(opcheck_samples())[index]
    result = torch.library.opcheck(op, args)
    assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_traces_the_ops():
    a, b = booleans((9, 70), 0.1, seed=1), booleans((70, 12), 0.1, seed=2)

    def f(x, y):
        p = tg.matmul(tg.pack_bits(x, -1), tg.pack_bits(y, -2), "orand")
        return p | tg.matmul(x, y, "orand")

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    same(compiled(a, b), expected(a, b), torch.bool)


# --- CUDA -------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,k", list(itertools.product((torch.bool, torch.uint8), KS)))
def test_cuda_matches_cpu(dtype, k):
    a, b = booleans((130, k), 0.05, dtype, seed=k), booleans((k, 70), 0.05, dtype, seed=k + 1)
    ga, gb = a.cuda(), b.cuda()
    for c, want in ((tg.matmul(ga, gb, "orand"), tg.matmul(a, b, "orand")),
                    (tg.matmul(ga.t().contiguous().t(), gb, "orand"), tg.matmul(a, b, "orand"))):
        assert c.dtype == dtype and torch.equal(c.cpu(), want)
    c, idx = tg.matmul(ga, gb, "orand", return_argmax=True)
    want_c, want_idx = tg.matmul(a, b, "orand", return_argmax=True)
    assert torch.equal(c.cpu(), want_c) and torch.equal(idx.cpu(), want_idx)
    pa, pb = tg.pack_bits(ga, -1), tg.pack_bits(gb, -2)
    assert torch.equal(pa.words.cpu(), tg.pack_bits(a, -1).words) and torch.equal(pb.words.cpu(), tg.pack_bits(b, -2).words)
    c, idx = tg.matmul(pa, pb, "orand", return_argmax=True)
    assert torch.equal(c.cpu(), want_c.bool()) and torch.equal(idx.cpu(), want_idx)


@pytest.mark.gpu
def test_cuda_large_products_pack_first():
    # 2048 x 2048 x 1024 = 2^32 terms: packed by the package (pack_bits twice) before the product.
    a, b = booleans((2048, 1024), 0.02, seed=1).cuda(), booleans((1024, 2048), 0.02, seed=2).cuda()
    c, idx = tg.matmul(a, b, "orand", return_argmax=True)
    want_c, want_idx = tg.matmul(a.cpu(), b.cpu(), "orand", return_argmax=True)
    assert torch.equal(c.cpu(), want_c) and torch.equal(idx.cpu(), want_idx)
    assert torch.equal(tg.matmul(a, b, "orand").cpu(), want_c)


@pytest.mark.gpu
def test_cuda_opcheck_and_compile():
    for op, args in opcheck_samples():
        args = tuple(x.cuda() if isinstance(x, torch.Tensor) else x for x in args)
        result = torch.library.opcheck(op, args)
        assert all(v == "SUCCESS" for v in result.values()), (op, result)
