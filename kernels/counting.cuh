// tropical-gemm's device code, the piece after backward.cuh: the counting semiring's products
// (max-plus with multiplicities), for its Tiled, Batched and Small rows of kernels/catalogue.def.
//
// Semantics (src/reference/reference.hpp states them in full): an element is (value, count), values
// float or double, counts double; (x) adds values and multiplies counts, (+) keeps the larger value
// and adds the counts of equal ones; the zero is (-inf, 0). A result of value -inf has count 0
// whatever the counts of its terms; a NaN value anywhere makes the result (NaN, NaN).
//
// Why a loop of its own rather than a Ring of the main loop (kernels/main_loop.cuh): that loop keeps
// one scalar per result and moves its operands as 128-bit vectors of one type; a counting result is a
// value and a double count, read from four arrays whose layouts may differ (PyTorch hands values and
// counts as separate tensors). So this loop stages the four arrays with scalar, bounds-checked loads
// along whichever dimension each array is contiguous in, like the Small kernels, and keeps TM x TN
// (value, count) pairs per thread. There is no split-K row: two chunks' pairs cannot be combined by
// one atomic (value and count must change together, and a tie must add counts), and a 128-bit
// compare-and-swap loop would serialise on exactly the ties that matter here.

namespace tg {

struct Counting {};

template <class T>
struct CountingRing {
    static __device__ __forceinline__ T zero() { return -infinity(T()); }

    // (acc, count) = (acc, count) (+) (a + b, ca * cb). The value takes the NaN-propagating max; the
    // count restarts from the term's where the term won, adds it where they tie and stays otherwise.
    // A NaN accumulator never changes again (no comparison with it holds), and finish() gives its
    // count. One fma: exact while counts stay integers up to 2^53, like the reference's multiply-add.
    static __device__ __forceinline__ void mac(T a, T b, double ca, double cb, T& acc, double& count) {
        const T s = a + b;
        const T n = max_nan(acc, s);
        const double base = acc == n ? count : 0.0;
        count = s == n ? fma(ca, cb, base) : count;
        acc = n;
    }

    // The rules on a finished pair: value -inf is the zero (count 0), a NaN value has count NaN, and
    // -0 is written as +0.
    static __device__ __forceinline__ void finish(T& value, double& count) {
        if (value != value) count = __longlong_as_double(0x7ff8000000000000LL);
        else if (value == zero()) count = 0.0;
        value = value + T(0);
    }

    // (x, cx) (+) (y, cy) for accumulate, on finished pairs.
    static __device__ __forceinline__ void plus(T x, double cx, T& y, double& cy) {
        const T n = max_nan(x, y);
        cy = (x == n ? cx : 0.0) + (y == n ? cy : 0.0);
        y = n;
        finish(y, cy);
    }
};

// One array of an operand (values or counts) on its way from global memory into a [BK][OUTER]
// shared tile: each thread holds LOADS elements, walking the array's contiguous dimension (k where
// its k stride is 1, else the outer one) with consecutive threads, so that loads coalesce.
template <class E, int OUTER, int BK, int THREADS>
struct CountingStage {
    static constexpr int LOADS = OUTER * BK / THREADS;
    static_assert(LOADS >= 1 && OUTER * BK == LOADS * THREADS, "staging map");
    E v[LOADS];

    static __device__ __forceinline__ void place(bool k_along, int e, int& o, int& k) {
        if (k_along) {
            k = e % BK;
            o = e / BK;
        } else {
            o = e % OUTER;
            k = e / OUTER;
        }
    }
    // base: element (outer 0, k 0) of this tile and slice; the rest of each dimension from there
    // reads as `pad`.
    __device__ __forceinline__ void fetch(const E* base, long long outer_stride, long long k_stride,
                                          long long outer_left, long long k_left, E pad) {
        const bool ka = k_stride == 1;
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            int o, k;
            place(ka, static_cast<int>(threadIdx.x) + r * THREADS, o, k);
            v[r] = o < outer_left && k < k_left ? base[o * outer_stride + k * k_stride] : pad;
        }
    }
    __device__ __forceinline__ void stash(E (*tile)[OUTER + 1], long long k_stride) const {
        const bool ka = k_stride == 1;
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            int o, k;
            place(ka, static_cast<int>(threadIdx.x) + r * THREADS, o, k);
            tile[k][o] = v[r];
        }
    }
};

// A BM x BN tile of C per block in K-slices of BK, double-buffered in shared memory (one barrier
// per slice); each thread owns TM x TN results, BM / TM rows and BN / TN columns apart, so that a
// warp reads consecutive columns of B's tile (no bank conflicts) and few rows of A's (broadcasts).
// Terms are added in increasing k, as in the reference.
template <class Cfg, class T>
__device__ __forceinline__ void gemm_counting(const TgCountingParams& q) {
    using R = CountingRing<T>;
    const TgGemmParams& p = q.values;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, TM = Cfg::tm, TN = Cfg::tn, THREADS = Cfg::threads;
    constexpr int RM = BM / TM, RN = BN / TN;  // threads down a column and along a row of the tile
    static_assert(RM * TM == BM && RN * TN == BN && RM * RN == THREADS, "a thread owns TM x TN results");
    __shared__ T a_value[2][BK][BM + 1];
    __shared__ double a_count[2][BK][BM + 1];
    __shared__ T b_value[2][BK][BN + 1];
    __shared__ double b_count[2][BK][BN + 1];

    const int tx = static_cast<int>(threadIdx.x) % RN, ty = static_cast<int>(threadIdx.x) / RN;
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (K + BK - 1) / BK;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                CountingStage<T, BM, BK, THREADS> sav;
                CountingStage<double, BM, BK, THREADS> sac;
                CountingStage<T, BN, BK, THREADS> sbv;
                CountingStage<double, BN, BK, THREADS> sbc;
                // Past the last slice the fetch reads nothing (k_left <= 0) and its stash is never read.
                auto fetch = [&](long long k0) {
                    sav.fetch(element<const T>(p.a, b, m0, k0), p.a.row_stride, p.a.col_stride, M - m0, K - k0,
                              R::zero());
                    sac.fetch(element<const double>(q.a_count, b, m0, k0), q.a_count.row_stride, q.a_count.col_stride,
                              M - m0, K - k0, 0.0);
                    sbv.fetch(element<const T>(p.b, b, k0, n0), p.b.col_stride, p.b.row_stride, N - n0, K - k0,
                              R::zero());
                    sbc.fetch(element<const double>(q.b_count, b, k0, n0), q.b_count.col_stride, q.b_count.row_stride,
                              N - n0, K - k0, 0.0);
                };
                auto stash = [&](int buf) {
                    sav.stash(a_value[buf], p.a.col_stride);
                    sac.stash(a_count[buf], q.a_count.col_stride);
                    sbv.stash(b_value[buf], p.b.row_stride);
                    sbc.stash(b_count[buf], q.b_count.row_stride);
                };

                T acc[TM][TN];
                double count[TM][TN];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        acc[i][j] = R::zero();
                        count[i][j] = 0.0;
                    }
                fetch(0);
                stash(0);
                __syncthreads();
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    fetch((s + 1) * BK);
#pragma unroll 4
                    for (int kk = 0; kk < BK; ++kk) {
                        T va[TM], vb[TN];
                        double ca[TM], cb[TN];
#pragma unroll
                        for (int i = 0; i < TM; ++i) {
                            va[i] = a_value[buf][kk][ty + i * RM];
                            ca[i] = a_count[buf][kk][ty + i * RM];
                        }
#pragma unroll
                        for (int j = 0; j < TN; ++j) {
                            vb[j] = b_value[buf][kk][tx + j * RN];
                            cb[j] = b_count[buf][kk][tx + j * RN];
                        }
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TN; ++j) R::mac(va[i], vb[j], ca[i], cb[j], acc[i][j], count[i][j]);
                    }
                    stash(buf ^ 1);
                    __syncthreads();
                }
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long row = m0 + ty + i * RM;
                    if (row >= M) continue;
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        const long long col = n0 + tx + j * RN;
                        if (col >= N) continue;
                        T value = acc[i][j];
                        double c = count[i][j];
                        R::finish(value, c);
                        T* const out_value = element<T>(p.c, b, row, col);
                        double* const out_count = element<double>(q.c_count, b, row, col);
                        if (p.accumulate) {
                            T old_value = *out_value;
                            double old_count = *out_count;
                            R::finish(old_value, old_count);
                            R::plus(old_value, old_count, value, c);
                        }
                        *out_value = value;
                        *out_count = c;
                    }
                }
            }
        }
    }
}

}  // namespace tg
