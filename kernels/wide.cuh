// tropical-gemm's device code: the Wide kernels' loop (after the Dense loop, before the backward
// kernels).

namespace tg {

// The terms of a thread's 4 x 4 results, one k at a time: 4 rows of A's staged column and 4 columns
// of B's staged row, each read as 16-byte vectors, k ascending, so that with ARGMAX (track_term) ties
// keep the smallest k. KK > 0: a K of KK, unrolled whole (the common K of tensor networks: 8, 16,
// 32); KK = 0: any K.
template <int KK, bool ARGMAX, class R, class T>
__device__ __forceinline__ void wide_terms(T (&acc)[4][4], int (&arg)[4][4], const T* a, const T* b, int a_ld, int b_ld,
                                           int K) {
    constexpr int VEC = 16 / sizeof(T);
    const int n = KK > 0 ? KK : K;
#pragma unroll(KK > 0 ? KK : 2)
    for (int k = 0; k < n; ++k) {
        Vec16<T> av[4 / VEC], bv[4 / VEC];
#pragma unroll
        for (int g = 0; g < 4 / VEC; ++g) {
            av[g] = *reinterpret_cast<const Vec16<T>*>(a + k * a_ld + g * VEC);
            bv[g] = *reinterpret_cast<const Vec16<T>*>(b + k * b_ld + g * VEC);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const T x = av[i / VEC].v[i % VEC], y = bv[j / VEC].v[j % VEC];
                if constexpr (ARGMAX) track_term<R>(x, y, acc[i][j], arg[i][j], k);
                else acc[i][j] = R::mac(x, y, acc[i][j]);
            }
    }
}

// A thread's 4 x 4 results into C at c (its first), rows past M and vectors past N left alone (N is
// whole vectors and the first column a multiple of 4, so each vector is inside C or wholly past it).
// ACCUMULATE: C = C_old (+) the results. Two instantiations, so that the plain store issues none of
// the accumulating one's loads and sums (predicated off, they still took issue slots).
template <bool ACCUMULATE, class R, class T>
__device__ __forceinline__ void wide_store(const T (&acc)[4][4], T* c, long long ld, int rows, int cols) {
    constexpr int VEC = 16 / sizeof(T);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (i >= rows) break;
#pragma unroll
        for (int g = 0; g < 4 / VEC; ++g) {
            if (g * VEC >= cols) break;
            Vec16<T> v;
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                v.v[e] = R::finish(acc[i][g * VEC + e]);
                if constexpr (!IsInt<T>::value) v.v[e] = v.v[e] + T(0);  // -0 -> +0
            }
            Vec16<T>* const out = reinterpret_cast<Vec16<T>*>(c + i * ld + g * VEC);
            if constexpr (ACCUMULATE) {
                const Vec16<T> old = *out;
#pragma unroll
                for (int e = 0; e < VEC; ++e) v.v[e] = R::plus(old.v[e] + T(0), v.v[e]);  // an old -0 as +0
            }
            *out = v;
        }
    }
}

// A Wide block's shared memory: A staged transposed, its row of each k padded by a vector, which
// halves the bank conflicts of the transposing stores (a padding of less than a vector would
// misalign the reads of a thread's 4 rows); B as it is. A and B: one buffer's elements.
template <class Cfg, class T>
struct WideBuffers {
    static constexpr int A_LD = Cfg::bm + 16 / static_cast<int>(sizeof(T)), B_LD = Cfg::bn;
    static constexpr int A = Cfg::bk * A_LD, B = Cfg::bk * B_LD;
};

// A Wide block's loop over its groups of products (gemm_wide below). GROUPED: G > 1 products per
// block at a time, each thread's vectors tagged with their product; else one, whose loads and stores
// need no such bookkeeping (the 64 x 64 products' path). ARGMAX: each thread tracks its results' k
// (a result's K is one thread's: no merge) and stores them beside C (store_args); the operands are
// then staged as the other argmax kernels stage them (no float -0).
template <class Cfg, class S, class T, bool GROUPED, bool ARGMAX>
__device__ __forceinline__ void wide_products(const TgGemmParams& p, int G, T (*sa)[WideBuffers<Cfg, T>::A],
                                              T (*sb)[WideBuffers<Cfg, T>::B]) {
    using R = Ring<S, T>;
    constexpr int SIDE = Cfg::bm, BK = Cfg::bk, THREADS = Cfg::threads, VEC = 16 / sizeof(T);
    static_assert(Cfg::bn == SIDE && Cfg::tm == 4 && Cfg::tn == 4 && THREADS == SIDE * SIDE / 16,
                  "a thread owns 4 x 4 results of a SIDE x SIDE product");
    constexpr int A_LD = WideBuffers<Cfg, T>::A_LD, B_LD = WideBuffers<Cfg, T>::B_LD;
    // Vectors of A (and of B) a thread loads per group, at most: a buffer holds SIDE x BK of them.
    constexpr int LOADS = SIDE * BK / VEC / THREADS;
    constexpr bool STAGE = IsInt<T>::value || ARGMAX;
    static_assert(LOADS * VEC * THREADS == SIDE * BK, "a buffer's A and B are whole loads of the block");

    const int t = threadIdx.x;
    const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
    const int k_vecs = K / VEC, n_vecs = N / VEC, a_vecs = M * k_vecs, b_vecs = K * n_vecs;
    const int groups_n = (N + 3) / 4, per_product = (M + 3) / 4 * groups_n;  // threads
    // Where this thread's vectors land in shared memory, with their product of the group in the
    // bits from 16 up (-1: none): A's vector v of a product is row v / k_vecs from column
    // v % k_vecs * VEC, stored down sa's column; B's is row v / n_vecs.
    int a_at[LOADS], b_at[LOADS];
#pragma unroll
    for (int r = 0; r < LOADS; ++r) {
        const int i = t + r * THREADS, ga = i / a_vecs, va = i % a_vecs, gb = i / b_vecs, vb = i % b_vecs;
        a_at[r] = ga < G ? ga << 16 | (ga * K * A_LD + va % k_vecs * VEC * A_LD + va / k_vecs) : -1;
        b_at[r] = gb < G ? gb << 16 | (gb * K * B_LD + vb / n_vecs * B_LD + vb % n_vecs * VEC) : -1;
    }
    Vec16<T> ra[LOADS], rb[LOADS];
    auto fetch = [&](long long first) {
        // The group's first matrices, and how many products it has (the last group may have fewer):
        // a thread's vector of product g is g batch strides on.
        const T* const a0 = element<const T>(p.a, first, 0, 0);
        const T* const b0 = element<const T>(p.b, first, 0, 0);
        const int left = GROUPED ? static_cast<int>(min(p.batch - first, static_cast<long long>(G))) : 1;
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            // (One product: the group's, which exists, and tags of 0.)
            const int i = t + r * THREADS, ga = GROUPED ? a_at[r] >> 16 : 0, gb = GROUPED ? b_at[r] >> 16 : 0;
            if (a_at[r] >= 0 && (!GROUPED || ga < left))
                ra[r] = reinterpret_cast<const Vec16<T>*>(a0 + ga * p.a.batch_stride)[i - ga * a_vecs];
            if (b_at[r] >= 0 && (!GROUPED || gb < left))
                rb[r] = reinterpret_cast<const Vec16<T>*>(b0 + gb * p.b.batch_stride)[i - gb * b_vecs];
        }
    };
    // This thread's results: product `mine` of the group, rows row0 .. row0 + 3, columns col0 ..
    // col0 + 3 (64 x 64: a warp is two rows of 16 threads, whose B vectors are distinct and A
    // vectors two).
    const int mine = GROUPED ? t / per_product : (t < per_product ? 0 : 1), local = GROUPED ? t % per_product : t;
    const int row0 = local / groups_n * 4, col0 = local % groups_n * 4;

    const long long step = static_cast<long long>(gridDim.z) * G;
    if (static_cast<long long>(blockIdx.z) * G < p.batch) fetch(static_cast<long long>(blockIdx.z) * G);
    int buffer = 0;
    for (long long first = static_cast<long long>(blockIdx.z) * G; first < p.batch; first += step, buffer ^= 1) {
        // This buffer was last read for the group before the previous one: every thread finished
        // that before the previous group's barrier, which this thread has passed.
        T* const a_to = sa[buffer];
        T* const b_to = sb[buffer];
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            if (a_at[r] >= 0) stage_down<STAGE, R>(a_to, GROUPED ? a_at[r] & 0xffff : a_at[r], A_LD, ra[r]);
            if (b_at[r] >= 0) stage_vector<STAGE, R>(b_to + (GROUPED ? b_at[r] & 0xffff : b_at[r]), rb[r]);
        }
        __syncthreads();
        if (first + step < p.batch) fetch(first + step);  // in flight while this group is computed
        const long long b = first + mine;
        if (mine >= G || b >= p.batch) continue;

        T acc[4][4];
        int arg[4][4];  // dead, and removed, unless ARGMAX
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                acc[i][j] = R::init();
                arg[i][j] = -1;
            }
        // Rows past M read stale shared memory (columns past N are never a thread's); their results
        // are not stored.
        const T* const a = a_to + mine * K * A_LD + row0;
        const T* const bv = b_to + mine * K * B_LD + col0;
        switch (K) {
        case 16: wide_terms<16, ARGMAX, R>(acc, arg, a, bv, A_LD, B_LD, K); break;
        case 32:
            if constexpr (BK >= 32) wide_terms<32, ARGMAX, R>(acc, arg, a, bv, A_LD, B_LD, K);
            else wide_terms<0, ARGMAX, R>(acc, arg, a, bv, A_LD, B_LD, K);
            break;
        default: wide_terms<0, ARGMAX, R>(acc, arg, a, bv, A_LD, B_LD, K); break;
        }
        T* const c = element<T>(p.c, b, row0, col0);
        if (!ARGMAX && p.accumulate) wide_store<true, R>(acc, c, p.c.row_stride, M - row0, N - col0);
        else wide_store<false, R>(acc, c, p.c.row_stride, M - row0, N - col0);
        if constexpr (ARGMAX) {
            int* const at = element<int>(p.argmax, b, row0, col0);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (row0 + i >= M) break;
                store_args(at + i * p.argmax.row_stride, arg[i], N - col0, p.argmax.col_stride);
            }
        }
    }
}

// Wide products: batches of products of at most SIDE x SIDE with a K of at most the row's bk (64 x
// 64 x 32; 16 for 64-bit types), too wide for the Dense kernel's 4 results a thread, whose A and B
// are each one contiguous row-major array (ld equal to the columns), C row-major, all 16-byte
// aligned, K and N whole 16-byte vectors (src/gemm/plan.cpp's vectors_fit checks all of it).
// 4096 x 64 x 64 x 16 is bound by memory if a product costs few instructions and the loads of one
// overlap the terms of another: the Batched kernel, whose 64 x 64 tile spends 168 registers on 8 x 8
// results of 64 threads and a double buffer, holds 12 warps a multiprocessor, and a K of 16 is two
// of its slices, so the first loads of each product are most of its blocks' lives. Here a block of
// 256 threads takes whole products, 4 x 4 results a thread, from A staged transposed (a row per k)
// and B as it is, both read as vectors: one 64 x 64 product at a time, or as many narrower ones as
// its threads and a buffer hold (a product takes ceil(M / 4) x ceil(N / 4) threads, numbered along
// its rows, so that no lane idles past N). Every thread loads the same vectors of every group of
// products, so where each lands in shared memory is worked out once; the next group's vectors are
// in flight while one is computed; C's rows are stored as vectors. With ARGMAX each result's k is
// tracked by its thread and stored beside C.
template <class Cfg, class S, class T, bool ARGMAX>
__device__ __forceinline__ void gemm_wide(const TgGemmParams& p) {
    const int threads = (static_cast<int>(p.m) + 3) / 4 * ((static_cast<int>(p.n) + 3) / 4);  // a product's
    const int G = min(Cfg::threads / threads, Cfg::bk / static_cast<int>(p.k));               // products at once
    // Two groups' operands: one group is staged while the one before may still be read, so a group
    // costs one barrier, not two. A product of the group takes K of a buffer's BK rows.
    __shared__ __align__(16) T sa[2][WideBuffers<Cfg, T>::A];
    __shared__ __align__(16) T sb[2][WideBuffers<Cfg, T>::B];
    if (G > 1) wide_products<Cfg, S, T, true, ARGMAX>(p, G, sa, sb);
    else wide_products<Cfg, S, T, false, ARGMAX>(p, 1, sa, sb);
}

}  // namespace tg
