// tropical-gemm's device code, piece 4 of 5: the Small kernels' loop.

namespace tg {

// Small products (a few products of at most a few hundred rows and columns) and Tiny ones (many
// products with a side or K of at most 16): a BM x BN tile of C per block (32 x 32 and 256 threads
// for Small, 16 x 16 and 64 for Tiny, by the catalogue), 2 x 2 results each, K in slices of BK
// staged with scalar loads (any layout, bounds-checked) through registers into double-buffered
// shared memory. Many more blocks than the big-tile kernels give a small product, and few
// instructions to compile (the first call of a program usually compiles this kernel, so its NVRTC
// time is start-up time).
// With ARGMAX every term is tracked as it is added, by the rule of the Tiled kernels' k_step: the
// smallest k that attains the result, the first NaN, -1 where no term beats the zero.
//
// The argmax SplitK rows split K among GROUPS = BK / SK groups of (BM / 2) x (BN / 2) threads: all
// of the block stages each slice, group g tracks its k in [g * SK, (g + 1) * SK) of every slice, and
// at the end group 0 combines the groups' (value, k) pairs through shared memory by the same rule
// (merge_tracked, kernels/argmax_rescan.cuh). A product whose few tiles leave most multiprocessors
// idle then runs GROUPS times the threads with a GROUPS times shorter chain of dependent terms per
// result, and needs no storage beyond the block's (src/gemm/plan.cpp says where).

// One result of C (and with ARGMAX its k) as the kernels whose threads own whole results store it
// (Small, Tiny, the argmax SplitK, Vector, Column): finished, -0 written as +0 where the operands were
// not staged (STAGE: whether the kernel staged them), or added onto C's old value when the call
// accumulates.
template <class R, bool STAGE, bool ARGMAX, class T>
__device__ __forceinline__ void store_result(const TgGemmParams& p, long long b, long long row, long long col, T acc,
                                             int arg) {
    T* const c = element<T>(p.c, b, row, col);
    T v = R::finish(acc);
    if constexpr (!STAGE) v = v + T(0);  // -0 -> +0
    if constexpr (ARGMAX) *element<int>(p.argmax, b, row, col) = arg;
    else if (p.accumulate) v = R::plus(*c + T(0), v);  // an old -0 is read as +0
    *c = v;
}

template <class Cfg, class S, class T, bool ARGMAX, int THREADS>
__device__ __forceinline__ void gemm_small(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, SK = Cfg::sk;
    constexpr int GROUPS = BK / SK, GROUP_THREADS = (BM / 2) * (BN / 2);
    static_assert(Cfg::tm == 2 && Cfg::tn == 2, "a thread owns 2 x 2 results");
    static_assert(BK % SK == 0 && THREADS == GROUP_THREADS * GROUPS, "each group of threads takes SK of a slice");
    static_assert(GROUPS == 1 || ARGMAX, "only the argmax rows split K among groups");
    constexpr int LD = BM + 2;                // even: 2-element fragments stay aligned
    constexpr int LOADS = BM * BK / THREADS;  // per operand and slice
    // Floats: -0 normalised in the epilogue, or, where the argmax compares bits, when staged.
    constexpr bool STAGE = ARGMAX || IsInt<T>::value;
    static_assert(BM == BN && BM * BK % THREADS == 0, "staging map");
    __shared__ T sa[2][BK][LD];
    __shared__ T sb[2][BK][LD];
    // Groups 1.. leave their pairs here for group 0 (4 unused elements where there is one group).
    constexpr int MERGED = GROUPS > 1 ? GROUPS - 1 : 1, MERGE_THREADS = GROUPS > 1 ? GROUP_THREADS : 1;
    __shared__ T merge_acc[MERGED][2][2][MERGE_THREADS];
    __shared__ int merge_arg[MERGED][2][2][MERGE_THREADS];

    const int t = threadIdx.x, group = GROUPS > 1 ? t / GROUP_THREADS : 0, gt = GROUPS > 1 ? t % GROUP_THREADS : t;
    const int tx = gt % (BN / 2), ty = gt / (BN / 2);
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (K + BK - 1) / BK;
    // A thread's staging slots: slot r holds (outer, k) = (o + r * THREADS / BK, k) where the
    // operand is contiguous along k, else (o, k + r * THREADS / OUTER): consecutive threads walk
    // the contiguous dimension of each operand.
    const bool a_k = p.a.col_stride == 1, b_k = p.b.row_stride == 1;
    const int ao = a_k ? t / BK : t % BM, ak = a_k ? t % BK : t / BM;
    const int bo = b_k ? t / BK : t % BN, bk = b_k ? t % BK : t / BN;
    const int a_do = a_k ? THREADS / BK : 0, a_dk = a_k ? 0 : THREADS / BM;
    const int b_do = b_k ? THREADS / BK : 0, b_dk = b_k ? 0 : THREADS / BN;
    const long long a_step = a_do * p.a.row_stride + a_dk * p.a.col_stride;
    const long long b_step = b_do * p.b.col_stride + b_dk * p.b.row_stride;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                const T* pa = element<const T>(p.a, b, m0 + ao, ak);
                const T* pb = element<const T>(p.b, b, bk, n0 + bo);
                const long long a_rows = M - m0 - ao, b_cols = N - n0 - bo;
                T ra[LOADS], rb[LOADS];
                auto fetch = [&](long long k0) {
                    const long long a_ks = K - k0 - ak, b_ks = K - k0 - bk;
#pragma unroll
                    for (int r = 0; r < LOADS; ++r) {
                        ra[r] = r * a_do < a_rows && r * a_dk < a_ks ? pa[r * a_step] : R::zero();
                        rb[r] = r * b_do < b_cols && r * b_dk < b_ks ? pb[r * b_step] : R::zero();
                    }
                    pa += BK * p.a.col_stride;
                    pb += BK * p.b.row_stride;
                };
                auto stash = [&](int buf) {
#pragma unroll
                    for (int r = 0; r < LOADS; ++r) {
                        sa[buf][ak + r * a_dk][ao + r * a_do] = STAGE ? R::stage(ra[r]) : ra[r];
                        sb[buf][bk + r * b_dk][bo + r * b_do] = STAGE ? R::stage(rb[r]) : rb[r];
                    }
                };
                T acc[2][2];
                int arg[2][2];  // dead, and removed, unless ARGMAX
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        acc[i][j] = R::init();
                        arg[i][j] = -1;
                    }
                fetch(0);
                __syncthreads();  // every thread is done with the previous product's last slice
                stash(0);
                __syncthreads();
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    // No fetch, stash and barrier after the last slice: a product of one or two slices
                    // (the Tiny kernels' usual) would spend a third to a half of its staging on them.
                    const bool more = s + 1 < slices;
                    if (more) fetch((s + 1) * BK);
#pragma unroll 8
                    for (int j = 0; j < SK; ++j) {
                        const int kk = group * SK + j;
                        const T a[2] = {sa[buf][kk][2 * ty], sa[buf][kk][2 * ty + 1]};
                        const T b[2] = {sb[buf][kk][2 * tx], sb[buf][kk][2 * tx + 1]};
#pragma unroll
                        for (int i = 0; i < 2; ++i)
#pragma unroll
                            for (int j = 0; j < 2; ++j) {
                                if constexpr (ARGMAX) {
                                    track_term<R>(a[i], b[j], acc[i][j], arg[i][j], static_cast<int>(s * BK + kk));
                                } else {
                                    acc[i][j] = R::mac(a[i], b[j], acc[i][j]);
                                }
                            }
                    }
                    if (more) {
                        stash(buf ^ 1);
                        __syncthreads();
                    }
                }
                if constexpr (GROUPS > 1) {
                    // The next tile's first barrier comes after group 0 has read these.
                    if (group > 0) {
#pragma unroll
                        for (int i = 0; i < 2; ++i)
#pragma unroll
                            for (int j = 0; j < 2; ++j) {
                                merge_acc[group - 1][i][j][gt] = acc[i][j];
                                merge_arg[group - 1][i][j][gt] = arg[i][j];
                            }
                    }
                    __syncthreads();
                    if (group > 0) continue;
#pragma unroll
                    for (int g = 0; g < GROUPS - 1; ++g)
#pragma unroll
                        for (int i = 0; i < 2; ++i)
#pragma unroll
                            for (int j = 0; j < 2; ++j)
                                merge_tracked<R>(acc[i][j], arg[i][j], merge_acc[g][i][j][gt], merge_arg[g][i][j][gt]);
                }
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const long long row = m0 + 2 * ty + i;
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const long long col = n0 + 2 * tx + j;
                        if (row >= M || col >= N) continue;
                        store_result<R, STAGE, ARGMAX>(p, b, row, col, acc[i][j], arg[i][j]);
                    }
                }
            }
        }
    }
}

}  // namespace tg
