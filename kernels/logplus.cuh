// tropical-gemm's device code, the piece after counting.cuh: LogPlus products,
// C[i,j] = log sum_k exp(A[i,k] + B[k,j]) (probabilities kept as logarithms), for the Tiled and Small
// LogPlus rows of kernels/catalogue.def.
//
// Semantics (src/reference/reference.hpp states them in full): -inf is the zero and 0 the one; a NaN
// term gives NaN, else a +inf term gives +inf, and a sum of zeros gives -inf; accumulate gives
// C = log(exp(C_old) + exp(that)).
//
// Why a loop of its own: (+) combines every term, so a result is not one of its terms and the main
// loop's accumulator (one value, (+) a max or a min) cannot hold it. Here each result keeps a
// reference r (in base 2, an integer, at most its largest term's logarithm) and the sum of
// 2^(term * log2(e) - r), one ex2 per term, in three levels: a slice's terms (sk), 16 slices, the
// rest, so that rounding grows with sk + 16 + K / (16 sk) additions rather than with K.
//
// The reference moves only when a slice's sum says it must: each slice is summed against the current
// r. A sum in (2^16, 2^96] (a term more than 16 above r in base 2) moves r up by the sum's exponent,
// every sum scaled by that exact power of two. A sum that is not finite or above 2^96 (the first
// slice, r still unset; a term far above any before; NaN or +inf) makes the warp take the slice's
// largest term (a max-plus pass), move r to its floor, scale the sums so, and sum the slice again (a
// reference of +inf looks for a NaN term so). Terms are summed at most 96 above r in base 2 and r
// stays at most log2(sk) above the largest term, so nothing overflows, nothing that matters
// underflows, and a result's rounding is that of its terms' logarithms, at most 2^-24 (|C| + 96)
// (2^96 rather than 2^64: spans of hundreds, as in an HMM's or at +-100, sum a slice again less often).
// A reference that reaches NaN or +inf is the result itself.

// K groups (the Small rows): a block's bk / sk groups of (bm / tm) * (bn / tn) threads each take sk
// of every slice's k for the whole tile, with references and sums of their own, merged at the end
// through shared memory (a product with few tiles and a short K, such as an HMM's step, then keeps
// enough threads busy).

namespace tg {

struct LogPlus {};

// 2^x and log2(x). f32: one MUFU instruction each (ex2.approx.ftz: relative error below 2^-22, -inf
// gives +0; lg2.approx.ftz: absolute error below 2^-22 on [1, 2), where finish() uses it). f64: the
// math library's, within an ulp.
__device__ __forceinline__ float exp2_term(float x) {
#ifdef __CUDA_ARCH__
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return exp2(x);  // tests/support/device_emulation.hpp, on the CPU
#endif
}
__device__ __forceinline__ double exp2_term(double x) { return exp2(x); }

// 2^e for an integer-valued e <= 0, exactly (0 below the normal range, where it scales sums of at
// most 2^20 that another sum of at least 1 outweighs by far more than the precision).
__device__ __forceinline__ float exact_power_of_two(float e) {
    return e >= -126.0f ? __int_as_float((static_cast<int>(e) + 127) << 23) : 0.0f;
}
__device__ __forceinline__ double exact_power_of_two(double e) {
    return e >= -1022.0 ? __longlong_as_double(static_cast<long long>(static_cast<int>(e) + 1023) << 52) : 0.0;
}

// floor(log2(s)) for a finite s > 0 (normal), as a value of s's type.
__device__ __forceinline__ float exponent_of(float s) {
    return static_cast<float>(((__float_as_int(s) >> 23) & 0xff) - 127);
}
__device__ __forceinline__ double exponent_of(double s) {
    return static_cast<double>(static_cast<int>((__double_as_longlong(s) >> 52) & 0x7ff) - 1023);
}

// log2(s) for a finite s > 0: its exponent and the logarithm of its mantissa in [1, 2), so that the
// approximate lg2 sees only the range where its error is absolute and tiny.
__device__ __forceinline__ float log2_sum(float s) {
    const int b = __float_as_int(s);
    const int e = ((b >> 23) & 0xff) - 127;
    const float mantissa = __int_as_float((b & 0x007fffff) | 0x3f800000);
#ifdef __CUDA_ARCH__
    float l;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(mantissa));
#else
    const float l = log2(mantissa);
#endif
    return static_cast<float>(e) + l;
}
__device__ __forceinline__ double log2_sum(double s) { return log2(s); }

template <class T>
struct LogConstants;
template <>
struct LogConstants<float> {
    static constexpr float log2e = 1.44269504088896341f, ln2 = 0.693147180559945309f;
    static constexpr float lowest = -3.40282347e+38f;  // the reference before any finite term
    static constexpr float rebase = 65536.0f;          // a slice's sum above this moves the reference up
    static constexpr float accept = 7.9228163e+28f;    // 2^96: above, the slice is summed again
};
template <>
struct LogConstants<double> {
    static constexpr double log2e = 1.4426950408889634074, ln2 = 0.69314718055994530942;
    static constexpr double lowest = -1.7976931348623157e+308;
    static constexpr double rebase = 65536.0;
    static constexpr double accept = 7.9228162514264338e+28;
};

template <class T>
struct LogRing {
    using C = LogConstants<T>;
    static __device__ __forceinline__ T zero() { return -infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x; }  // (staged as given: -0 + -0 sums to -0, exp 1)
    // Whether a reference is final: NaN or +inf, the result itself.
    static __device__ __forceinline__ bool final_reference(T r) { return !(r < infinity(T())); }
    // The result from a reference and its sum (in base 2).
    static __device__ __forceinline__ T finish(T r, T sum) {
        if (final_reference(r)) return r;
        if (r == C::lowest || !(sum > T(0))) return zero();  // no finite term
        return fma(r, C::ln2, log2_sum(sum) * C::ln2) + T(0);
    }
    // log(exp(x) + exp(y)), exactly as the rules say, for accumulate.
    static __device__ __forceinline__ T plus(T x, T y) {
        if (x != x || y != y) return x + y;
        const T hi = x > y ? x : y, lo = x > y ? y : x;
        if (lo == -infinity(T()) || hi == infinity(T())) return hi;
        return hi + log1p(exp(lo - hi));
    }
};

// A thread's TM x TN results over one k group's share of a slice.
template <class T, int TM, int TN>
struct LogTile {
    T r[TM][TN];      // references, integers in base 2 (LogConstants::lowest before any finite term)
    T s[TM][TN];      // this slice's sum
    T group[TM][TN];  // the sum of the last slices, up to 16
    T total[TM][TN];  // the rest
};

// f(i, j, a, b) for each term a (x) b of the thread's TM x TN results over a k group's SK k of a slice.
template <class T, int TM, int TN, int GROUP_M, int GROUP_N, int SK, class F>
__device__ __forceinline__ void for_each_term(const T* a_buf, const T* b_buf, int lda, int ldb, F f) {
#pragma unroll 4  // (all SK at once: ptxas hoists every load and spills the sums)
    for (int kk = 0; kk < SK; ++kk) {
        T fa[TM], fb[TN];
        load_fragment<T, TM, GROUP_M>(fa, a_buf + kk * lda);
        load_fragment<T, TN, GROUP_N>(fb, b_buf + kk * ldb);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) f(i, j, fa[i], fb[j]);
    }
}

// The sum of a slice's terms for the thread's results against the current references.
template <class T, int TM, int TN, int GROUP_M, int GROUP_N, int SK>
__device__ __forceinline__ void sum_slice(LogTile<T, TM, TN>& t, const T* a_buf, const T* b_buf, int lda, int ldb) {
    using C = LogConstants<T>;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) t.s[i][j] = T(0);
    for_each_term<T, TM, TN, GROUP_M, GROUP_N, SK>(a_buf, b_buf, lda, ldb, [&](int i, int j, T a, T b) {
        t.s[i][j] += exp2_term(fma(a + b, C::log2e, -t.r[i][j]));
    });
}

// The slow path of a slice: each result's largest term (NaN-propagating) moves its reference to the
// term's floor in base 2, the sums scaled by the exact power of two.
template <class T, int TM, int TN, int GROUP_M, int GROUP_N, int SK>
__device__ __forceinline__ void raise_references(LogTile<T, TM, TN>& t, const T* a_buf, const T* b_buf, int lda,
                                                 int ldb) {
    using R = LogRing<T>;
    using C = LogConstants<T>;
    T top[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) top[i][j] = -infinity(T());
    for_each_term<T, TM, TN, GROUP_M, GROUP_N, SK>(
        a_buf, b_buf, lda, ldb, [&](int i, int j, T a, T b) { top[i][j] = max_nan(top[i][j], a + b); });
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const T m = top[i][j];
            if (R::final_reference(t.r[i][j])) {
                t.r[i][j] = max_nan(t.r[i][j], m);  // +inf stays, unless a NaN term follows
                continue;
            }
            if (m != m || m == infinity(T())) {
                t.r[i][j] = m;  // the result is NaN or +inf whatever follows (but a later NaN)
                continue;
            }
            const T next = floor(m * C::log2e);
            if (next > t.r[i][j]) {
                const T scale = exact_power_of_two(t.r[i][j] - next);
                t.group[i][j] *= scale;
                t.total[i][j] *= scale;
                t.r[i][j] = next;
            }
        }
}

// The shared memory of log_tile: the double-buffered slices, or the k groups' merge after them.
template <class Cfg, class T, int K_GROUPS>
struct LogTileShared {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int TILE_VECS = 2 * Cfg::bk * (Cfg::bm + VEC + Cfg::bn + VEC) / VEC;
    // The merge of the k groups: every group's (reference, sum) of every result of the tile.
    static constexpr int RESULTS = Cfg::bm * Cfg::bn;
    static constexpr int MERGE_VECS = K_GROUPS > 1 ? K_GROUPS* RESULTS * 2 / VEC : 0;
    static constexpr int vecs = TILE_VECS > MERGE_VECS ? TILE_VECS : MERGE_VECS;
};

// One BM x BN tile of C (rows from m0, columns from n0, of batch b) by the straight loop: one ex2 per
// term. Ends with a barrier, so that the caller's next tile may reuse smem.
template <class Cfg, class T, int K_GROUPS, int THREADS>
__device__ __forceinline__ void log_tile(const TgGemmParams& p, long long b, long long m0, long long n0,
                                         Vec16<T>* smem) {
    using R = LogRing<T>;
    using C = LogConstants<T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, SK = Cfg::sk, TM = Cfg::tm, TN = Cfg::tn;
    static_assert(BK == SK * K_GROUPS && Cfg::threads * K_GROUPS == THREADS, "each k group takes sk of a slice");
    constexpr int VEC = 16 / sizeof(T);
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageA = Stager<T, BM, BK, THREADS>;
    using StageB = Stager<T, BN, BK, THREADS>;
    constexpr int LDA = StageA::LD, LDB = StageB::LD;
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    constexpr int GROUP_SLICES = 16;  // slices summed apart before they join the total
    T* const tile_a = smem[0].v;
    T* const tile_b = tile_a + 2 * BK * LDA;

    const int group = static_cast<int>(threadIdx.x) / Cfg::threads;
    const int local = static_cast<int>(threadIdx.x) % Cfg::threads;
    const int tx = local % (BN / TN), ty = local / (BN / TN);
    const long long M = p.m, N = p.n, K = p.k;
    const long long slices = (K + BK - 1) / BK;
    const T* const a_batch = element<T>(p.a, b, 0, 0);
    const T* const b_batch = element<T>(p.b, b, 0, 0);
    const bool a_k_along = StageA::k_along(p.a.row_stride, p.a.col_stride);
    const bool b_k_along = StageB::k_along(p.b.col_stride, p.b.row_stride);
    const bool a_vec = StageA::vec_ok(a_batch, p.a.row_stride, p.a.col_stride);
    const bool b_vec = StageB::vec_ok(b_batch, p.b.col_stride, p.b.row_stride);
    StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0);
    StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0);
    const bool fast_tile = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;
    Vec16<T> ra[StageA::VECS], rb[StageB::VECS];
    auto fetch = [&](long long s) {
        const bool fast = fast_tile && (s + 1) * BK <= K;
        sa.template fetch<R>(ra, fast, p.a.row_stride, p.a.col_stride, M - m0, K - s * BK);
        sb.template fetch<R>(rb, fast, p.b.col_stride, p.b.row_stride, N - n0, K - s * BK);
    };
    auto stash = [&](int buf) {
        sa.template stash<R, false>(tile_a + buf * BK * LDA, ra, a_k_along);
        sb.template stash<R, false>(tile_b + buf * BK * LDB, rb, b_k_along);
        sa.next_stage(p.a.col_stride);
        sb.next_stage(p.b.row_stride);
    };

    LogTile<T, TM, TN> t;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            t.r[i][j] = C::lowest;
            t.group[i][j] = T(0);
            t.total[i][j] = T(0);
        }
    fetch(0);
    stash(0);
    __syncthreads();
    for (long long s = 0; s < slices; ++s) {
        const int buf = static_cast<int>(s & 1);
        fetch(s + 1);  // past the last slice it reads nothing, and its stash is never read
        const T* const a_buf = tile_a + buf * BK * LDA + group * SK * LDA + ty * VEC;
        const T* const b_buf = tile_b + buf * BK * LDB + group * SK * LDB + tx * VEC;
        // The first slice sets the references (every sum against r unset is infinite).
        if (s == 0) raise_references<T, TM, TN, GROUP_M, GROUP_N, SK>(t, a_buf, b_buf, LDA, LDB);
        sum_slice<T, TM, TN, GROUP_M, GROUP_N, SK>(t, a_buf, b_buf, LDA, LDB);
        bool again = false;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) again = again || (!(t.s[i][j] <= C::accept) && t.r[i][j] == t.r[i][j]);
        if (__any_sync(0xffffffffu, again)) {
            raise_references<T, TM, TN, GROUP_M, GROUP_N, SK>(t, a_buf, b_buf, LDA, LDB);
            sum_slice<T, TM, TN, GROUP_M, GROUP_N, SK>(t, a_buf, b_buf, LDA, LDB);
        }
        // A sum in (2^16, 2^96] moves its reference up by its exponent, every sum scaled
        // by that power of two exactly, so that later terms lie near the reference again.
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (t.s[i][j] > C::rebase && t.s[i][j] <= C::accept && !R::final_reference(t.r[i][j])) {
                    const T e = exponent_of(t.s[i][j]);
                    const T scale = exact_power_of_two(-e);
                    t.s[i][j] *= scale;
                    t.group[i][j] *= scale;
                    t.total[i][j] *= scale;
                    t.r[i][j] += e;
                }
        const bool to_total = (s + 1) % GROUP_SLICES == 0;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                t.group[i][j] += t.s[i][j];
                if (to_total) {
                    t.total[i][j] += t.group[i][j];
                    t.group[i][j] = T(0);
                }
            }
        stash(buf ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) t.total[i][j] += t.group[i][j];

    if constexpr (K_GROUPS > 1) {
        // Every group hands each result's (reference, sum) over through shared memory (the tiles'
        // memory: the last slice's barrier has passed); then each thread merges one result's K_GROUPS
        // pairs and writes it, all threads at once: the largest reference first, then the sums scaled
        // to it, so that the loads and the two chains of K_GROUPS steps are independent.
        T* const merge = smem[0].v;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int row = (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                const int col = (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                T* const out = merge + (group * BM * BN + row * BN + col) * 2;
                out[0] = t.r[i][j];
                out[1] = t.total[i][j];
            }
        __syncthreads();
#pragma unroll 1
        for (int e = static_cast<int>(threadIdx.x); e < BM * BN; e += THREADS) {
            const T* const pairs = merge + e * 2;  // group g's at pairs[g * BM * BN * 2]
            T r = pairs[0], sum = T(0);
#pragma unroll
            for (int g = 1; g < K_GROUPS; ++g) r = max_nan(r, pairs[g * BM * BN * 2]);
            if (!R::final_reference(r))
#pragma unroll
                for (int g = 0; g < K_GROUPS; ++g)
                    sum += pairs[g * BM * BN * 2 + 1] * exact_power_of_two(pairs[g * BM * BN * 2] - r);
            const long long row = m0 + e / BN, col = n0 + e % BN;
            if (row < M && col < N) {
                T* const c = element<T>(p.c, b, row, col);
                T v = R::finish(r, sum);
                if (p.accumulate) v = R::plus(*c + T(0), v) + T(0);
                *c = v;
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
            if (row >= M) continue;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                if (col >= N) continue;
                T* const c = element<T>(p.c, b, row, col);
                T v = R::finish(t.r[i][j], t.total[i][j]);
                if (p.accumulate) v = R::plus(*c + T(0), v) + T(0);
                *c = v;
            }
        }
    }
    // Before the next tile's first stash overwrites what the merge or the last slice read.
    __syncthreads();
}

// f(b, m0, n0) for each BM x BN tile of `batch` products of rows x cols results that this block takes
// (the grid strides over tiles and batches): the LogPlus kernels' outer loop.
template <int BM, int BN, class F>
__device__ __forceinline__ void for_each_tile(long long batch, long long rows, long long cols, F f) {
    const long long tiles_m = (rows + BM - 1) / BM, tiles_n = (cols + BN - 1) / BN;
    for (long long b = blockIdx.z; b < batch; b += gridDim.z)
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) f(b, tm * BM, tn * BN);
}

template <class Cfg, class T, int K_GROUPS, int THREADS>
__device__ __forceinline__ void gemm_logplus(const TgGemmParams& p) {
    __shared__ Vec16<T> smem[LogTileShared<Cfg, T, K_GROUPS>::vecs];
    for_each_tile<Cfg::bm, Cfg::bn>(p.batch, p.m, p.n, [&](long long b, long long m0, long long n0) {
        log_tile<Cfg, T, K_GROUPS, THREADS>(p, b, m0, n0, smem);
    });
}

}  // namespace tg
