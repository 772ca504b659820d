// tropical-gemm's device code: the Vector kernels' loop (after the Small loop, before the Dense one).

namespace tg {

// Vector products: A of at most BM rows (a row vector: one step of a Viterbi chain over a single
// sequence, v[k] (x) W[k, s]) times a B whose columns are contiguous. The tiled kernels spend a 16-
// or 32-row tile on such a product, most of it padding, and give it few blocks; here a block takes
// BN columns of B and all of K, its threads BN columns by BK groups of k (a warp: BN consecutive
// columns of 32 / BN consecutive rows of B, whole sectors), and each thread keeps DEPTH of its
// loads of B in flight before it adds any, so that the block's one pass over a K of BK * DEPTH is
// one trip to memory. A's BM rows of that pass are staged in shared memory, which every thread
// reads. The groups' results then combine, within a warp by shuffles and across warps through
// shared memory, in the order the Small kernels' groups do (merge_tracked: the better value, else
// the smaller k), so that with ARGMAX the k is the smallest that attains the result, the first NaN,
// -1 where no term beats the zero.
//
// Any layout and shape is computed correctly (strided loads, bounds checked); src/gemm/plan.cpp
// chooses these kernels where B's columns are contiguous and the products are fewer than the
// multiprocessors (vector_fits).
constexpr int kVectorDepth = 16;

// Whether a Vector kernel stages its operands (R::stage, as the Small loop does): integers (the zero
// clamped to the sentinel), and floats with ARGMAX, which compares bits; the plain floats' -0 is
// normalised when C is stored.
template <class T, bool ARGMAX>
constexpr bool kVectorStages = ARGMAX || IsInt<T>::value;

// A thread's terms of one pass: its DEPTH values of B (vb, at k0 + group + u * BK) with the first
// ROWS of A's BM staged rows (sa), k ascending, so that with ARGMAX ties keep the smallest k. ROWS
// is 1 for a single row (M = 1: a Viterbi step over one sequence), which then issues no terms for
// the padding rows.
template <int ROWS, bool ARGMAX, int BK, class R, class T, int BM, int PASS, int DEPTH>
__device__ __forceinline__ void vector_terms(T (&acc)[BM], int (&arg)[BM], const T (*sa)[PASS], const T (&vb)[DEPTH],
                                             int group, int span, long long k0) {
    constexpr bool STAGE = kVectorStages<T, ARGMAX>;
#pragma unroll
    for (int u = 0; u < DEPTH; ++u) {
        const int kk = group + u * BK;
        if (kk >= span) break;
        const T bv = STAGE ? R::stage(vb[u]) : vb[u];
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            if constexpr (ARGMAX) track_term<R>(sa[i][kk], bv, acc[i], arg[i], static_cast<int>(k0 + kk));
            else acc[i] = R::mac(sa[i][kk], bv, acc[i]);
        }
    }
}

// Combines each lane's COUNT results with those of the lanes FROM, 2 FROM, ... 16 apart (xor
// shuffles; with ARGMAX by merge_tracked's rule): afterwards every lane holds its class of lanes
// modulo FROM combined (FROM = 1: the whole warp's). The Vector and Column kernels' warp merge.
template <int FROM, bool ARGMAX, class R, class T, int COUNT>
__device__ __forceinline__ void merge_lanes(T (&acc)[COUNT], int (&arg)[COUNT]) {
#pragma unroll
    for (int lanes = FROM; lanes < 32; lanes *= 2)
#pragma unroll
        for (int i = 0; i < COUNT; ++i) {
            const T other = __shfl_xor_sync(0xffffffffu, acc[i], lanes);
            if constexpr (ARGMAX) {
                const int other_arg = __shfl_xor_sync(0xffffffffu, arg[i], lanes);
                merge_tracked<R>(acc[i], arg[i], other, other_arg);
            } else {
                acc[i] = R::plus(acc[i], other);
            }
        }
}

template <class Cfg, class S, class T, bool ARGMAX, int THREADS>
__device__ __forceinline__ void gemm_vector(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, DEPTH = kVectorDepth, PASS = BK * DEPTH;
    constexpr int WARPS = THREADS / 32;
    static_assert(Cfg::tm == BM && Cfg::tn == 1 && Cfg::sk == 1 && THREADS == BN * BK,
                  "a thread owns a column's BM results over one group of k");
    static_assert(32 % BN == 0 && THREADS % 32 == 0 && BM * BN <= THREADS, "a warp is whole groups");
    constexpr bool STAGE = kVectorStages<T, ARGMAX>;
    __shared__ T sa[BM][PASS];
    __shared__ T merge_acc[WARPS][BM][BN];
    __shared__ int merge_arg[WARPS][BM][BN];

    const int t = threadIdx.x, col = t % BN, group = t / BN, warp = t / 32;
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const T* const b_ptr = static_cast<const T*>(p.b.ptr);

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, column = tn * BN + col;
                const bool in_n = column < N;
                // Offsets, not pointers: a thread past N or K forms no address outside B.
                const long long b_at = b * p.b.batch_stride + column * p.b.col_stride;
                T acc[BM];
                int arg[BM];  // dead, and removed, unless ARGMAX
#pragma unroll
                for (int i = 0; i < BM; ++i) {
                    acc[i] = R::init();
                    arg[i] = -1;
                }
                for (long long k0 = 0; k0 < K; k0 += PASS) {
                    T vb[DEPTH];
#pragma unroll
                    for (int u = 0; u < DEPTH; ++u) {
                        const long long k = k0 + group + u * BK;
                        vb[u] = in_n && k < K ? b_ptr[b_at + k * p.b.row_stride] : R::zero();
                    }
                    // A's rows and k of this pass: the rest of sa is stale, and is read only for rows
                    // past M, whose results are not stored.
                    const int rows = M - m0 < BM ? static_cast<int>(M - m0) : BM;
                    const int span = K - k0 < PASS ? static_cast<int>(K - k0) : PASS;
                    __syncthreads();  // every thread is done with the previous pass's A
                    for (int i = 0; i < rows; ++i)
                        for (int kk = t; kk < span; kk += THREADS) {
                            const T x = *element<const T>(p.a, b, m0 + i, k0 + kk);
                            sa[i][kk] = STAGE ? R::stage(x) : x;
                        }
                    __syncthreads();
                    if (rows == 1) vector_terms<1, ARGMAX, BK, R>(acc, arg, sa, vb, group, span, k0);
                    else vector_terms<BM, ARGMAX, BK, R>(acc, arg, sa, vb, group, span, k0);
                }
                // The groups of a warp, BN lanes apart, then the warps.
                merge_lanes<BN, ARGMAX, R>(acc, arg);
                if (t % 32 < BN) {
#pragma unroll
                    for (int i = 0; i < BM; ++i) {
                        merge_acc[warp][i][col] = acc[i];
                        merge_arg[warp][i][col] = arg[i];
                    }
                }
                __syncthreads();
                if (t < BM * BN) {
                    const int i = t / BN, j = t % BN;
                    T v = merge_acc[0][i][j];
                    int k = merge_arg[0][i][j];
                    for (int w = 1; w < WARPS; ++w) {
                        if constexpr (ARGMAX) merge_tracked<R>(v, k, merge_acc[w][i][j], merge_arg[w][i][j]);
                        else v = R::plus(v, merge_acc[w][i][j]);
                    }
                    const long long row = m0 + i, out_col = tn * BN + j;
                    if (row < M && out_col < N) store_result<R, STAGE, ARGMAX>(p, b, row, out_col, v, k);
                }
                __syncthreads();  // the merge buffers are read before the next tile's groups write them
            }
        }
    }
}

}  // namespace tg
