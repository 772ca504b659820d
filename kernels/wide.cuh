// tropical-gemm's device code: the Wide kernels' loop (after the Dense loop, before the backward
// kernels).

namespace tg {

// The terms of a thread's 4 x 4 results, one k at a time: 4 rows of A's staged column and 4 columns
// of B's staged row, each read as 16-byte vectors. KK > 0: a K of KK, unrolled whole (the common K
// of tensor networks: 8, 16, 32); KK = 0: any K.
template <int KK, class R, class T>
__device__ __forceinline__ void wide_terms(T (&acc)[4][4], const T* a, const T* b, int a_ld, int b_ld, int K) {
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
            for (int j = 0; j < 4; ++j) acc[i][j] = R::mac(av[i / VEC].v[i % VEC], bv[j / VEC].v[j % VEC], acc[i][j]);
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

// Wide products: batches of products of at most SIDE x SIDE with a K of at most the row's bk (64 x
// 64 x 32; 16 for 64-bit types), too wide for the Dense kernel's 4 results a thread, whose A and B are each one
// contiguous row-major array (ld equal to the columns), C row-major, all 16-byte aligned, K and N
// whole 16-byte vectors (src/gemm/plan.cpp's wide_fits checks all of it). 4096 x 64 x 64 x 16 is
// bound by memory if a product costs few instructions and the loads of one overlap the terms of
// another: the Batched kernel, whose 64 x 64 tile spends 168 registers on 8 x 8 results of 64
// threads and a double buffer, holds 12 warps a multiprocessor, and a K of 16 is two of its slices,
// so the first loads of each product are most of its blocks' lives. Here a block of 256 threads takes
// one whole product at a time, 4 x 4 results a thread, from A staged transposed (a row per k) and B
// as it is, both read as vectors; every thread loads the same vectors of every product, so where
// each lands in shared memory is worked out once; the next product's vectors are in flight while one
// is computed; C's rows are stored as vectors. No argmax: those products take other kernels.
template <class Cfg, class S, class T>
__device__ __forceinline__ void gemm_wide(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int SIDE = Cfg::bm, BK = Cfg::bk, THREADS = Cfg::threads, VEC = 16 / sizeof(T);
    static_assert(Cfg::bn == SIDE && Cfg::tm == 4 && Cfg::tn == 4 && THREADS == SIDE * SIDE / 16,
                  "a thread owns 4 x 4 results of a SIDE x SIDE product");
    // A's row of each k padded by a vector, which halves the bank conflicts of the transposing
    // stores (a padding of less than a vector would misalign the reads of a thread's 4 rows).
    constexpr int A_LD = SIDE + VEC, B_LD = SIDE;
    // Vectors of A (and of B) a thread loads per product, at most: SIDE x BK of them for THREADS.
    constexpr int LOADS = SIDE * BK / VEC / THREADS;
    static_assert(LOADS * VEC * THREADS == SIDE * BK, "a product's A and B are whole loads of the block");
    // Integers are staged (the zero clamped to the sentinel); floats' -0 is normalised at the end.
    constexpr bool STAGE = IsInt<T>::value;
    // Two products' operands: one product is staged while the one before may still be read, so a
    // product costs one barrier, not two.
    __shared__ __align__(16) T sa[2][BK * A_LD];
    __shared__ __align__(16) T sb[2][BK * B_LD];

    const int t = threadIdx.x;
    const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
    const int k_vecs = K / VEC, n_vecs = N / VEC;
    // Where this thread's vectors land in shared memory (-1: past the product): A's vector v is row
    // v / k_vecs from column v % k_vecs * VEC, stored down sa's column; B's is row v / n_vecs.
    int a_at[LOADS], b_at[LOADS];
#pragma unroll
    for (int r = 0; r < LOADS; ++r) {
        const int v = t + r * THREADS;
        a_at[r] = v < M * k_vecs ? v % k_vecs * VEC * A_LD + v / k_vecs : -1;
        b_at[r] = v < K * n_vecs ? v / n_vecs * B_LD + v % n_vecs * VEC : -1;
    }
    Vec16<T> ra[LOADS], rb[LOADS];
    auto fetch = [&](long long b) {
        const Vec16<T>* const a = reinterpret_cast<const Vec16<T>*>(element<const T>(p.a, b, 0, 0));
        const Vec16<T>* const bb = reinterpret_cast<const Vec16<T>*>(element<const T>(p.b, b, 0, 0));
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            if (a_at[r] >= 0) ra[r] = a[t + r * THREADS];
            if (b_at[r] >= 0) rb[r] = bb[t + r * THREADS];
        }
    };
    // This thread's results: rows row0 .. row0 + 3, columns col0 .. col0 + 3 (a warp: two rows of
    // 16 threads, whose B vectors are distinct and A vectors two).
    const int row0 = t / (SIDE / 4) * 4, col0 = t % (SIDE / 4) * 4;
    const bool mine = row0 < M && col0 < N;

    const long long step = gridDim.z;
    if (static_cast<long long>(blockIdx.z) < p.batch) fetch(blockIdx.z);
    int buffer = 0;
    for (long long b = blockIdx.z; b < p.batch; b += step, buffer ^= 1) {
        // This buffer was last read for the product before the previous one: every thread finished
        // that before the previous product's barrier, which this thread has passed.
        T* const a_to = sa[buffer];
        T* const b_to = sb[buffer];
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            if (a_at[r] >= 0) {
#pragma unroll
                for (int e = 0; e < VEC; ++e) a_to[a_at[r] + e * A_LD] = STAGE ? R::stage(ra[r].v[e]) : ra[r].v[e];
            }
            if (b_at[r] >= 0) {
                Vec16<T> v = rb[r];
                if constexpr (STAGE) {
#pragma unroll
                    for (int e = 0; e < VEC; ++e) v.v[e] = R::stage(v.v[e]);
                }
                *reinterpret_cast<Vec16<T>*>(b_to + b_at[r]) = v;
            }
        }
        __syncthreads();
        if (b + step < p.batch) fetch(b + step);  // in flight while this product is computed
        if (!mine) continue;

        T acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = R::init();
        // Rows and columns past M and N read stale shared memory; their results are not stored.
        const T* const a = a_to + row0;
        const T* const bv = b_to + col0;
        switch (K) {
        case 16: wide_terms<16, R>(acc, a, bv, A_LD, B_LD, K); break;
        case 32:
            if constexpr (BK >= 32) wide_terms<32, R>(acc, a, bv, A_LD, B_LD, K);
            else wide_terms<0, R>(acc, a, bv, A_LD, B_LD, K);
            break;
        default: wide_terms<0, R>(acc, a, bv, A_LD, B_LD, K); break;
        }
        T* const c = element<T>(p.c, b, row0, col0);
        if (p.accumulate) wide_store<true, R>(acc, c, p.c.row_stride, M - row0, N - col0);
        else wide_store<false, R>(acc, c, p.c.row_stride, M - row0, N - col0);
    }
}

}  // namespace tg
