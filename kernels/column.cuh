// tropical-gemm's device code: the Column kernels' loop (after the Vector loop, before the Dense one).

namespace tg {

// Column products: an A whose rows are contiguous along K times a B of at most BN columns (a matrix
// times a column vector: a Bellman-Ford relaxation d[i] = min_k W[i, k] + d[k], a Viterbi step
// written with the transition matrix first). The Vector kernels' mirror image: the tiled kernels
// would spend a 16- or 32-column tile on each strip of rows, all but a column of it padding. Here a
// block takes BM rows of A, a warp per row; the warp's lanes take BK = 32 consecutive k (a warp reads
// whole sectors of its row), each lane DEPTH of its loads of A in flight before it adds any, so that
// a pass over a K of BK * DEPTH is one trip to memory. B's columns of that pass are staged in shared
// memory, which every warp reads. A warp's lanes then combine by shuffles in merge_tracked's order
// (the better value, else the smaller k), so that with ARGMAX the k is the smallest that attains the
// result, the first NaN, -1 where no term beats the zero. Warps never merge with each other: a row is
// one warp's.
//
// Any layout and shape is computed correctly (strided loads, bounds checked); src/gemm/plan.cpp
// chooses these kernels where A's rows are contiguous, for a few products or a long K (column_fits).
constexpr int kColumnDepth = 16;

// A lane's terms of one pass: its DEPTH values of A (va, at k0 + lane + u * BK) with the first COLS of
// B's BN staged columns (sb), k ascending, so that with ARGMAX ties keep the smallest k. COLS is 1 for
// a single column (N = 1), which then issues no terms for the padding columns. Operands are staged as
// the Vector kernels stage theirs (kVectorStages).
template <int COLS, bool ARGMAX, int BK, class R, class T, int BN, int PASS, int DEPTH>
__device__ __forceinline__ void column_terms(T (&acc)[BN], int (&arg)[BN], const T (*sb)[PASS], const T (&va)[DEPTH],
                                             int lane, int span, long long k0) {
    constexpr bool STAGE = kVectorStages<T, ARGMAX>;
#pragma unroll
    for (int u = 0; u < DEPTH; ++u) {
        const int kk = lane + u * BK;
        if (kk >= span) break;
        const T av = STAGE ? R::stage(va[u]) : va[u];
#pragma unroll
        for (int j = 0; j < COLS; ++j) {
            if constexpr (ARGMAX) track_term<R>(av, sb[j][kk], acc[j], arg[j], static_cast<int>(k0 + kk));
            else acc[j] = R::mac(av, sb[j][kk], acc[j]);
        }
    }
}

// A lane's DEPTH values of a row of A for the pass from k0: k0 + lane + u * BK (the zero past K, or
// for a warp past M). CONTIGUOUS (a row-major A, the planned layout) reads them from one pointer at
// constant offsets: a general stride holds a 64-bit address per load in flight, more registers than
// a 32-bit kernel has. Only loads inside A are made; a warp past M or a pass past K forms no
// address from A.
template <bool CONTIGUOUS, int BK, class R, class T, int DEPTH>
__device__ __forceinline__ void load_row_pass(T (&va)[DEPTH], const T* a_ptr, long long a_at, long long stride,
                                              long long k0, int lane, bool in_m, long long K) {
    const bool live = in_m && k0 < K;
    const long long left = K - k0 - lane;  // this lane's k of the pass below K: u * BK < left
    const T* const from = live ? a_ptr + (a_at + (k0 + lane) * stride) : a_ptr;
#pragma unroll
    for (int u = 0; u < DEPTH; ++u) {
        const bool in_k = live && u * BK < left;
        if constexpr (CONTIGUOUS) va[u] = in_k ? from[u * BK] : R::zero();
        else va[u] = in_k ? from[u * BK * stride] : R::zero();
    }
}

// A warp's passes over K for its row (BN results; B's columns staged pass by pass in sb by the whole
// block, so every warp takes part in every pass, also past M). Loading a pass ahead (the next pass's
// loads in flight while this one's B is staged and its terms added) was slower: it needs twice the
// registers, so fewer warps (bench/NOTES.md).
template <bool CONTIGUOUS, bool ARGMAX, int BK, int DEPTH, int THREADS, class R, class T, int BN, int PASS>
__device__ __forceinline__ void column_passes(T (&acc)[BN], int (&arg)[BN], T (*sb)[PASS], const TgGemmParams& p,
                                              long long b, long long a_at, long long n0, int cols, bool in_m) {
    constexpr bool STAGE = kVectorStages<T, ARGMAX>;
    const int t = threadIdx.x, lane = t % 32;
    const long long K = p.k;
    const T* const a_ptr = static_cast<const T*>(p.a.ptr);
    for (long long k0 = 0; k0 < K; k0 += PASS) {
        T va[DEPTH];
        load_row_pass<CONTIGUOUS, BK, R>(va, a_ptr, a_at, p.a.col_stride, k0, lane, in_m, K);
        // B's columns and k of this pass: the rest of sb is stale, and is read only for columns past
        // N, whose results are not stored.
        const int span = K - k0 < PASS ? static_cast<int>(K - k0) : PASS;
        __syncthreads();  // every warp is done with the previous pass's B
        for (int j = 0; j < cols; ++j)
            for (int kk = t; kk < span; kk += THREADS) {
                const T x = *element<const T>(p.b, b, k0 + kk, n0 + j);
                sb[j][kk] = STAGE ? R::stage(x) : x;
            }
        __syncthreads();
        if (cols == 1) column_terms<1, ARGMAX, BK, R>(acc, arg, sb, va, lane, span, k0);
        else column_terms<BN, ARGMAX, BK, R>(acc, arg, sb, va, lane, span, k0);
    }
}

template <class Cfg, class S, class T, bool ARGMAX, int THREADS>
__device__ __forceinline__ void gemm_column(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, DEPTH = kColumnDepth, PASS = BK * DEPTH;
    static_assert(Cfg::tm == 1 && Cfg::tn == BN && Cfg::sk == 1 && BK == 32 && THREADS == BM * BK,
                  "a warp owns a row's BN results, its lanes one k each");
    constexpr bool STAGE = kVectorStages<T, ARGMAX>;
    __shared__ T sb[BN][PASS];

    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const long long M = p.m, N = p.n;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long row = tm * BM + warp, n0 = tn * BN;
                const bool in_m = row < M;
                const long long a_at = b * p.a.batch_stride + row * p.a.row_stride;
                const int cols = N - n0 < BN ? static_cast<int>(N - n0) : BN;
                T acc[BN];
                int arg[BN];  // dead, and removed, unless ARGMAX
#pragma unroll
                for (int j = 0; j < BN; ++j) {
                    acc[j] = R::init();
                    arg[j] = -1;
                }
                if (p.a.col_stride == 1)
                    column_passes<true, ARGMAX, BK, DEPTH, THREADS, R>(acc, arg, sb, p, b, a_at, n0, cols, in_m);
                else column_passes<false, ARGMAX, BK, DEPTH, THREADS, R>(acc, arg, sb, p, b, a_at, n0, cols, in_m);
                // The lanes of the warp: afterwards every lane holds the row's results.
                merge_lanes<1, ARGMAX, R>(acc, arg);
                // Lane j stores column j (a constant index each, so the results stay in registers).
#pragma unroll
                for (int j = 0; j < BN; ++j) {
                    if (lane == j && in_m && j < cols)
                        store_result<R, STAGE, ARGMAX>(p, b, row, n0 + j, acc[j], arg[j]);
                }
            }
        }
    }
}

}  // namespace tg
