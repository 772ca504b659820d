// tropical-gemm's device code, the piece after packed16.cuh: the tiled main loop of the 16-bit
// element types on pairs (kernels/packed16.cuh), for products without argmax.
//
// A block computes a BM x BN tile of C in K-slices of BK, staged in shared memory as [k][row of A] and
// [k][column of B] (16-bit elements, the Stager of staging.cuh, double-buffered: one barrier a
// slice). A thread owns TM rows x TN columns of results, the columns as TN / 2 pairs of adjacent
// ones; per k it reads its TM elements of A and TN of B with 128-bit shared loads, puts each element
// of A in both halves of a register, and makes TM x TN / 2 pair steps: two terms each.

namespace tg {

template <class Cfg, class S, class T, int THREADS>
__device__ __forceinline__ void gemm_packed16(const TgGemmParams& p) {
    using R = PairRing<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, TM = Cfg::tm, TN = Cfg::tn;
    static_assert(Cfg::threads == THREADS && Cfg::sk == BK, "one k group, whole slices");
    constexpr int VEC = 8;  // 16-bit elements per 128-bit load
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    constexpr int PAIRS = TN / 2;
    using StageA = Stager<T, BM, BK, THREADS>;
    using StageB = Stager<T, BN, BK, THREADS>;
    constexpr int LDA = StageA::LD, LDB = StageB::LD;
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    // int16's zero must be staged as its sentinel; the floats' are staged as they are.
    constexpr bool STAGE = IsInt<T>::value;
    __shared__ Vec16<T> smem_a[2 * BK * LDA / VEC];
    __shared__ Vec16<T> smem_b[2 * BK * LDB / VEC];
    T* const tile_a = smem_a[0].v;
    T* const tile_b = smem_b[0].v;

    const int tx = static_cast<int>(threadIdx.x) % (BN / TN), ty = static_cast<int>(threadIdx.x) / (BN / TN);
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (K + BK - 1) / BK;
    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        const T* const a_batch = element<T>(p.a, b, 0, 0);
        const T* const b_batch = element<T>(p.b, b, 0, 0);
        const bool a_k_along = StageA::k_along(p.a.row_stride, p.a.col_stride);
        const bool b_k_along = StageB::k_along(p.b.col_stride, p.b.row_stride);
        const bool a_vec = StageA::vec_ok(a_batch, p.a.row_stride, p.a.col_stride);
        const bool b_vec = StageB::vec_ok(b_batch, p.b.col_stride, p.b.row_stride);
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                const bool fast_tile = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;
                StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0);
                StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0);
                Vec16<T> ra[StageA::VECS], rb[StageB::VECS];
                auto fetch = [&](long long s) {
                    const bool fast = fast_tile && (s + 1) * BK <= K;
                    sa.template fetch<R>(ra, fast, p.a.row_stride, p.a.col_stride, M - m0, K - s * BK);
                    sb.template fetch<R>(rb, fast, p.b.col_stride, p.b.row_stride, N - n0, K - s * BK);
                };
                auto stash = [&](int buf) {
                    sa.template stash<R, STAGE>(tile_a + buf * BK * LDA, ra, a_k_along);
                    sb.template stash<R, STAGE>(tile_b + buf * BK * LDB, rb, b_k_along);
                    sa.next_stage(p.a.col_stride);
                    sb.next_stage(p.b.row_stride);
                };
                unsigned acc[TM][PAIRS];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int q = 0; q < PAIRS; ++q) acc[i][q] = R::init();
                fetch(0);
                stash(0);
                __syncthreads();
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    fetch(s + 1);  // past the last slice it reads nothing, and its stash is never read
                    const T* const a_buf = tile_a + buf * BK * LDA + ty * VEC;
                    const T* const b_buf = tile_b + buf * BK * LDB + tx * VEC;
#pragma unroll
                    for (int kk = 0; kk < BK; ++kk) {
                        unsigned fa[TM], fb[PAIRS];
#pragma unroll
                        for (int g = 0; g < TM / VEC; ++g) {
                            const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(a_buf + kk * LDA + g * GROUP_M);
#pragma unroll
                            for (int e = 0; e < VEC; ++e) fa[g * VEC + e] = both_halves(bits16(v.v[e]));
                        }
#pragma unroll
                        for (int g = 0; g < TN / VEC; ++g) {
                            const Vec16<unsigned> w =
                                *reinterpret_cast<const Vec16<unsigned>*>(b_buf + kk * LDB + g * GROUP_N);
#pragma unroll
                            for (int e = 0; e < 4; ++e) fb[g * 4 + e] = w.v[e];
                        }
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int q = 0; q < PAIRS; ++q) acc[i][q] = R::mac(fa[i], fb[q], acc[i][q]);
                    }
                    stash(buf ^ 1);
                    __syncthreads();
                }
                // The epilogue: a pair of adjacent columns as one 32-bit store where C allows it.
                T* const c_batch = element<T>(p.c, b, 0, 0);
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                    if (row >= M) continue;
#pragma unroll
                    for (int q = 0; q < PAIRS; ++q) {
                        const int j = 2 * q;
                        const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                        if (col >= N) continue;
                        unsigned v = R::finish(acc[i][q]);
                        T* const c = c_batch + row * p.c.row_stride + col * p.c.col_stride;
                        const bool both = col + 1 < N;
                        if (p.accumulate) {
                            const T lo = R::plus(c[0], half_of<T>(v, 0));
                            const T hi = both ? R::plus(c[p.c.col_stride], half_of<T>(v, 1)) : half_of<T>(v, 1);
                            v = pair_of(lo, hi);
                        }
                        if (both && p.c.col_stride == 1 && reinterpret_cast<unsigned long long>(c) % 4 == 0) {
                            *reinterpret_cast<unsigned*>(c) = v;
                        } else {
                            c[0] = half_of<T>(v, 0);
                            if (both) c[p.c.col_stride] = half_of<T>(v, 1);
                        }
                    }
                }
            }
    }
}

}  // namespace tg
